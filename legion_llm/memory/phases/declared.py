"""Requirement ids a project declares outside the plan summaries (requirements.py's precision
rule: a declared id named in a summary's status sentence is a requirement; an undeclared one
needs a tight requirement context).

- REQUIREMENTS.md (the phase's milestone's copy): the id each definition line opens with
  (`- [x] **AUTH-01**: ...`, `| AUTH-01 | ... |`, `### AUTH-01: ...`);
- the phase's PLAN files: their frontmatter `requirements:` lists.
"""

from __future__ import annotations

import re

from legion_llm.memory.files import read_text
from legion_llm.memory.phases.find import Phase, requirements_file
from legion_llm.memory.phases.requirements import (
    ids_in_prose,
    requirement_reports,
    split_frontmatter,
)

_DEFINITION = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|\|\s*|#{2,4}\s+)?(?:\[[ xX]\]\s*)?[*`]*")


def declared_ids(phase: Phase) -> frozenset[str]:
    """Every id the phase's REQUIREMENTS.md defines and its PLAN files list (module docstring)."""
    found: set[str] = set()
    text = read_text(requirements_file(phase))
    for line in (text or "").split("\n"):
        head = _DEFINITION.sub("", line, count=1)
        ids = ids_in_prose(head.split(" ", 1)[0].rstrip(":|*`")) if head else []
        found |= set(ids[:1])
    for path in phase.plan_files:
        frontmatter, _ = split_frontmatter(read_text(path) or "")
        block = "---\n" + "\n".join(frontmatter) + "\n---\n"
        found |= {r.id for r in requirement_reports(block) if r.source == "frontmatter"}
    return frozenset(found)
