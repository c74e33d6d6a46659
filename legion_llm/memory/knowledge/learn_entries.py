"""`/legion:learn` heading entries, the second format of PATTERNS / ERRORS / PREFERENCES.md:

    ## PAT-001: Short summary
    - **Date**: 2026-03-02
    - **Type**: pattern
    - **Tags**: a, b
    - **Phase**: 4

    Full lesson text (may hold its own tables and bullets).

    ---

An entry runs until a `---` line or the next `## ` heading. Reading never changes the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from legion_llm.memory.table import split_lines
from legion_llm.records import split_list

_ENTRY_RE = re.compile(r"^##\s+([A-Z][A-Z0-9]{1,5}-\d+)\s*:\s*(.*?)\s*$")
_BULLET_RE = re.compile(r"^\s*[-*]\s+\*\*([^*:]+?)\s*:?\*\*\s*:?\s*(.*?)\s*$")
_RULE_RE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")


@dataclass
class LearnEntry:
    id: str
    title: str
    fields: dict[str, str] = field(default_factory=dict)  # bullet key (snake_case) -> value
    body: str = ""
    first_line: int = 0
    last_line: int = 0

    @property
    def date(self) -> str:
        return self.fields.get("date", "")

    @property
    def tags(self) -> list[str]:
        return split_list(self.fields.get("tags", ""))


def parse_learn_entries(text: str) -> list[LearnEntry]:
    lines = split_lines(text)
    entries: list[LearnEntry] = []
    current: LearnEntry | None = None
    body: list[str] = []
    for number, raw in enumerate(lines):
        line = raw.rstrip("\r\n")
        heading = _ENTRY_RE.match(line)
        if heading or (current and (line.startswith("## ") or _RULE_RE.match(line))):
            if current is not None:
                _finish(current, body, number - 1)
                entries.append(current)
            current, body = None, []
            if heading:
                current = LearnEntry(heading.group(1), heading.group(2), first_line=number)
            continue
        if current is not None:
            bullet = _BULLET_RE.match(line)
            if bullet and not body:
                key = re.sub(r"[^a-z0-9]+", "_", bullet.group(1).lower()).strip("_")
                current.fields[key] = bullet.group(2)
            elif line.strip() or body:
                body.append(line)
    if current is not None:
        _finish(current, body, len(lines) - 1)
        entries.append(current)
    return entries


def _finish(entry: LearnEntry, body: list[str], last_line: int) -> None:
    entry.body = "\n".join(body).strip()
    entry.last_line = last_line
