"""Requirement ids a project declares for a phase outside its plan summaries.

An id is a requirement of the phase when something declares it so (requirements.py's rule: a
report in prose or in a verification item counts only for a declared id):

- the phase's PLAN files: their frontmatter requirements lists (any spelling, any id shape);
- the phase's milestone's REQUIREMENTS.md (`.planning/REQUIREMENTS.md`, or a shipped milestone's
  own copy such as `milestones/v1.0-REQUIREMENTS.md`): each row of a traceability table whose
  phase column names this phase (`| AUTH-01 | Phase 3 | Complete |`, `| UX-STATES | 3 — Name |`);
  the current file for a shipped phase only when no other folder carries its number (numbers may
  restart per milestone);
- (in find.py and requirements.py) the ROADMAP's phase entry and the summaries' own lists,
  requirement lines and requirements sections.

A definition line of REQUIREMENTS.md alone (`- [ ] **AUTH-07**: ...`) declares nothing for a
phase: every phase of the project would otherwise own every id.
"""

from __future__ import annotations

import re
from pathlib import Path

from legion_llm.memory.files import read_text
from legion_llm.memory.phases.find import Phase, folder_number, phase_folders, requirements_file
from legion_llm.memory.phases.planning import phase_key
from legion_llm.memory.phases.requirements import (
    listed_ids,
    requirement_reports,
    split_frontmatter,
)
from legion_llm.memory.table import parse_markdown

_ID_COLUMNS = ("requirement", "req_id", "req", "id", "requirement_id", "requirements")
_PHASE_CELL = re.compile(r"^\W*(?:phase\s*)?(\d+(?:\.\d+)*)\b", re.IGNORECASE)


def declared_ids(phase: Phase) -> frozenset[str]:
    """Every id the phase's PLAN files list and its REQUIREMENTS.md maps to it (module
    docstring)."""
    source = requirements_file(phase)
    found = (
        set(traced_ids(read_text(source) or "", phase.key)) if _traceable(phase, source) else set()
    )
    for path in phase.plan_files:
        frontmatter, _ = split_frontmatter(read_text(path) or "")
        block = "---\n" + "\n".join(frontmatter) + "\n---\n"
        found |= {r.id for r in requirement_reports(block) if r.source == "frontmatter"}
    return frozenset(found)


def _traceable(phase: Phase, source: Path) -> bool:
    """Whether `Phase N` in this REQUIREMENTS.md is this phase: its own milestone's copy, or the
    current file for a current phase; for a shipped phase read against the current file, only
    when no other phase folder carries its number (numbers may restart per milestone)."""
    if not phase.archived or source != phase.planning / "REQUIREMENTS.md":
        return True
    others = [f for f in phase_folders(phase.planning) if f != phase.folder]
    return all(phase_key(folder_number(f.name) or "") != phase.key for f in others)


def traced_ids(text: str, key: str) -> list[str]:
    """The ids a REQUIREMENTS.md traceability table maps to phase `key`, in order."""
    doc = parse_markdown(text)
    found: list[str] = []
    for table in doc.tables:
        phase_columns = [c for c in table.columns if "phase" in c]
        if not phase_columns:
            continue
        id_column = next((c for c in _ID_COLUMNS if c in table.columns), table.columns[0])
        for _, cells in doc.rows(table):
            if any(_names_phase(cells.get(c, ""), key) for c in phase_columns):
                found += listed_ids(cells.get(id_column, ""))[:1]  # a list cell: taken whole
    return list(dict.fromkeys(found))


def _names_phase(cell: str, key: str) -> bool:
    match = _PHASE_CELL.match(cell.replace("*", ""))
    return match is not None and phase_key(match.group(1)) == key
