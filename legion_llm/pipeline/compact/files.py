"""File entries of the extractive digest: each path with what its plan's Files section says.

Bullets (`- path — desc`, `- path (created - desc)`), tables (`| File | Change |`, a Files
Moved `| From | To |` table, whose source is named in its destination's row), fenced lists
of bare paths, and paths named anywhere else in the summary (`named`).
"""

from __future__ import annotations

import re

from legion_llm.memory.phases.extract import find_paths
from legion_llm.pipeline.compact.render import FileItem
from legion_llm.pipeline.compact.text import PlanParts, first_clause, items, table_rows

MOVED = "\x00moved"  # a move's source: named in its destination's row, no row of its own
BRIEF_WORDS = 6


def _file_notes(plan: PlanParts) -> dict[str, str]:
    """path -> description from the plan's Files sections (bullets, tables, fences)."""
    notes: dict[str, str] = {}
    for section in plan.matching(("file", "artifact")):
        for row in table_rows(section):
            _note_row(row, notes)
        for item in items(section):
            paths = find_paths(item)
            head = find_paths(re.split(r" [—–-] |: | \(", item, maxsplit=1)[0]) or paths[:1]
            for path in head:
                notes.setdefault(path, _describe(item, path))
        for path in find_paths(section.text):
            notes.setdefault(path, "named")
    return notes


def _note_row(row: dict[str, str], notes: dict[str, str]) -> None:
    if "from" in row and "to" in row:
        for path in find_paths(row["to"]):
            notes.setdefault(path, f"moved from {row['from']}")
        for path in find_paths(row["from"]):
            notes.setdefault(path, MOVED)
        return
    cells = list(row.values())
    for index, cell in enumerate(cells):
        paths = find_paths(cell)
        if paths and index + 1 < len(cells):
            for path in paths:
                notes.setdefault(path, cells[index + 1])
            return


def _describe(item: str, path: str) -> str:
    """The description that follows a path in a Files bullet."""
    rest = item.replace(f"`{path}`", path).split(path, 1)[-1]
    rest = re.sub(r"\s*\(~?\d+ lines?[^()]*\)", "", rest)
    own = re.match(r"^\s*\(([^()]+)\)", rest)
    if own:
        return own.group(1).strip()
    rest = re.sub(r"^[\s*:`]*[—–:-]?\s*", "", rest)
    return " ".join(rest.split()).strip(" -—") or "named"


def file_items(
    plans: list[PlanParts], paths: tuple[str, ...], *, full: bool, brief: bool = False
) -> list[FileItem]:
    """One entry per path, in `paths` order, described by the Files sections that list it; a
    path no Files section describes is `named in` the plan(s) that mention it. `brief` keeps
    the first words of each description only, and a path only named is `named`."""
    notes = [(p.facts.id, _file_notes(p)) for p in plans]
    named = [(p.facts.id, set(find_paths(_plain(p)))) for p in plans]  # once per plan, not per path
    result = []
    for path in paths:
        said = [(pid, n[path]) for pid, n in notes if path in n]
        if any(t == MOVED for _, t in said):
            continue
        described = [(pid, _cut(t, full, brief)) for pid, t in said if t != "named"]
        if described:
            change = "; ".join(f"{pid}: {t}" if len(described) > 1 else t for pid, t in described)
        elif brief:
            change = "named"
        else:
            where = [pid for pid, found in named if path in found] or [pid for pid, _ in said]
            change = f"named in {', '.join(where)}" if where else "named in the summaries"
        result.append(FileItem(path=path, change=change))
    return result


def _cut(text: str, full: bool, brief: bool) -> str:
    if full:
        return text
    text = first_clause(text)
    words = text.split()
    return " ".join(words[:BRIEF_WORDS]).rstrip(",;:") if brief else text


def _plain(plan: PlanParts) -> str:
    return "\n".join([*plan.frontmatter, *(line for s in plan.sections for line in s.lines)])
