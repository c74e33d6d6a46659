"""Check a compacted phase summary against its originals (ours, or one written by anyone).

- recall: every requirement id and file path extracted from the originals (and the phase's
  ROADMAP requirements) appears in the document; a range such as `R1.1–R1.4` counts when it is
  written as such or when all its members are;
- inventions: every requirement-shaped id and every path the document names appears somewhere
  in the originals or the ROADMAP;
- length: tokens(document) / tokens(originals), counted with the LLM layer's estimator;
- shape: which of the spec's sections are missing, which extra ones exist, which plans it never
  names, and which frontmatter keys are absent.

With `strict=True` (the compactor's own output) an id must sit in the Verification section and a
path in the Files Modified table; a hand-made file only has to mention them somewhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from legion_llm.llm.tokens import count_tokens
from legion_llm.memory.phases.extract import (
    OUTPUT_ID_RE,
    PhaseFacts,
    expand_braces,
    find_paths,
    ids_present,
    path_present,
    sections,
    split_frontmatter,
)
from legion_llm.pipeline.compact.render import SECTIONS

FRONTMATTER_KEYS = ("phase", "compacted", "original_summaries", "requirements_satisfied")
RATIO_BAND = (0.30, 0.50)


@dataclass(frozen=True)
class Sources:
    """The originals a document is checked against: summaries plus the ROADMAP text."""

    texts: tuple[str, ...]
    paths: frozenset[str]
    ids: frozenset[str] = frozenset()

    @classmethod
    def build(
        cls,
        summaries: Sequence[str],
        roadmap: str | None,
        facts: PhaseFacts,
        files: Sequence[str] = (),
    ) -> Sources:
        """`files`: the originals' own names and paths (a document may cite them)."""
        expanded = {e for p in facts.paths for e in expand_braces(p)}
        known = frozenset(facts.paths) | expanded | set(files)
        return cls((*summaries, roadmap or ""), known, frozenset(facts.requirement_ids))

    @property
    def joined(self) -> str:
        return "\n".join(self.texts)

    def knows_id(self, rid: str) -> bool:
        """Written in the originals, or a member of a range they write (`R1.2` of `R1.1–R1.4`)."""
        return rid in self.ids or ids_present(rid, self.joined)

    def knows_path(self, path: str) -> bool:
        if path in self.paths or any(e in self.paths for e in expand_braces(path)):
            return True
        return path_present(path, self.joined)


@dataclass
class VerifyReport:
    missing_ids: list[str]
    missing_paths: list[str]
    invented_ids: list[str]
    invented_paths: list[str]
    tokens_original: int
    tokens_output: int
    sections_missing: list[str] = field(default_factory=list)
    sections_extra: list[str] = field(default_factory=list)
    plans_missing: list[str] = field(default_factory=list)
    frontmatter_missing: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return round(self.tokens_output / self.tokens_original, 4) if self.tokens_original else 0.0

    @property
    def ok(self) -> bool:
        """Recall 1.0 and nothing invented: the condition for writing a file."""
        return not (self.missing_ids or self.missing_paths or self.invented())

    def invented(self) -> list[str]:
        return [*self.invented_ids, *self.invented_paths]

    def in_band(self) -> bool:
        return RATIO_BAND[0] <= self.ratio <= RATIO_BAND[1]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "ok": self.ok}

    def problems(self) -> list[str]:
        """One line per kind of problem, for the re-ask and for people."""
        lines = []
        if self.missing_ids:
            lines.append("missing requirement ids: " + ", ".join(self.missing_ids))
        if self.missing_paths:
            lines.append("missing file paths: " + ", ".join(self.missing_paths))
        if self.invented_ids:
            lines.append("ids not in the originals: " + ", ".join(self.invented_ids))
        if self.invented_paths:
            lines.append("paths not in the originals: " + ", ".join(self.invented_paths))
        return lines


def _section_text(body: str, title: str) -> str:
    wanted = title.lower()
    return "\n".join(s.text for s in sections(body) if s.title.lower().startswith(wanted))


def _headings(body: str) -> list[str]:
    return [s.title for s in sections(body) if s.level == 2]


def _frontmatter_keys(lines: list[str]) -> set[str]:
    return {m.group(1) for line in lines if (m := re.match(r"^([A-Za-z_][\w-]*)\s*:", line))}


def verify_document(
    text: str,
    facts: PhaseFacts,
    sources: Sources,
    *,
    tokens_original: int,
    strict: bool = False,
) -> VerifyReport:
    """Every check of the module docstring over one document."""
    frontmatter, body = split_frontmatter(text)
    id_scope = _section_text(body, "Verification") if strict else text
    path_scope = _section_text(body, "Files Modified") if strict else text
    named_paths = find_paths(text)
    missing_paths = [
        p for p in facts.paths if not (path_present(p, path_scope) or p in find_paths(path_scope))
    ]
    named_ids = list(dict.fromkeys(m.group(1) for m in OUTPUT_ID_RE.finditer(body)))
    headings = [h.lower() for h in _headings(body)]
    return VerifyReport(
        missing_ids=[i for i in facts.requirement_ids if not ids_present(i, id_scope)],
        missing_paths=missing_paths,
        invented_ids=[i for i in named_ids if not sources.knows_id(i)],
        invented_paths=[p for p in named_paths if not sources.knows_path(p)],
        tokens_original=tokens_original,
        tokens_output=count_tokens(text),
        sections_missing=[
            s for s in SECTIONS if not any(h.startswith(s.lower()) for h in headings)
        ],
        sections_extra=[h for h in _headings(body) if not _is_spec_section(h)],
        plans_missing=[
            p.id
            for p in facts.plans
            if not re.search(rf"(?<![\w.]){re.escape(p.id)}(?![\w])", body)
        ],
        frontmatter_missing=[
            k for k in FRONTMATTER_KEYS if k not in _frontmatter_keys(frontmatter)
        ],
    )


def _is_spec_section(heading: str) -> bool:
    return any(heading.lower().startswith(s.lower()) for s in SECTIONS)


def originals_tokens(summaries: Sequence[str]) -> int:
    return count_tokens("\n".join(summaries))
