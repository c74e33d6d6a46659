"""File entries of the extractive digest: each path with the change its plan's Files section
gives it (memory/phases/statements.py reads them), else `named in` the plans that mention it.

A move's source has no row of its own: its destination's row says `moved from` it.
"""

from __future__ import annotations

from legion_llm.memory.phases.markdown import first_clause
from legion_llm.memory.phases.statements import MOVED, PlanStatements, is_content
from legion_llm.pipeline.compact.render import FileItem

BRIEF_WORDS = 6


def file_items(
    plans: list[PlanStatements], paths: tuple[str, ...], *, full: bool, brief: bool = False
) -> list[FileItem]:
    """One entry per path, in `paths` order, described by the Files sections that list it; a
    path no Files section describes is `named in` the plan(s) that mention it. `brief` keeps
    the first words of each description only, and a path only named is `named`."""
    named = [(p.plan, set(p.facts.paths)) for p in plans]  # the one extraction of each plan
    result = []
    for path in paths:
        said = [(p.plan, fact.change) for p in plans if (fact := p.file(path))]
        if any(change == MOVED for _, change in said):
            continue
        described = [(pid, _cut(change, full, brief)) for pid, change in said if is_content(change)]
        if described:
            change = "; ".join(f"{pid}: {t}" if len(described) > 1 else t for pid, t in described)
        elif brief:
            change = "named"
        else:
            where = [pid for pid, found in named if path in found] or [pid for pid, _ in said]
            change = named_in(where)
        result.append(FileItem(path=path, change=change))
    return result


def named_in(plans: list[str]) -> str:
    """The change text of a path no Files section describes: where it is named."""
    return f"named in {', '.join(plans)}" if plans else "named in the summaries"


def _cut(text: str, full: bool, brief: bool) -> str:
    if full:
        return text
    text = first_clause(text)
    words = text.split()
    return " ".join(words[:BRIEF_WORDS]).rstrip(",;:") if brief else text
