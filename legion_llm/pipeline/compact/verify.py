"""Check a compacted phase summary against its originals (ours, or one written by anyone).

Presence is checked here; grounding (what the document claims) in ground.py; `Review` joins
both for one proposal.

- recall: every requirement id and file path extracted from the originals (and the phase's
  ROADMAP requirements) appears in the document; a range such as `R1.1–R1.4` counts when it is
  written as such or when all its members are;
- inventions: every requirement-shaped id and every path the document names appears somewhere
  in the originals or the ROADMAP;
- length: tokens(document) / tokens(originals), counted with the LLM layer's estimator;
- shape: which of the spec's sections are missing, which extra ones exist, which plans it never
  names, and which frontmatter keys are absent.

An id counts as kept only with its own verdict line in Verification (the compactor's
`- R1: PASS — ...`, or, in a file made by anyone, any verdict line parse.py reads: `verdict_ids`);
an id named only in the frontmatter or in other text is missing. With `strict=True` (the
compactor's own output) a path must also sit in the Files Modified table; a hand-made file only
has to mention it somewhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from legion_llm.llm.tokens import count_tokens
from legion_llm.memory.phases.extract import (
    ID_RE,
    OUTPUT_ID_RE,
    PhaseFacts,
    expand_braces,
    find_paths,
    ids_present,
    path_present,
    range_members,
    sections,
    split_frontmatter,
)
from legion_llm.pipeline.compact.ground import Problem
from legion_llm.pipeline.compact.render import PER_PLAN, SECTIONS

FRONTMATTER_KEYS = ("phase", "compacted", "original_summaries", "requirements_satisfied")
RATIO_BAND = (0.30, 0.50)


@dataclass(frozen=True)
class Sources:
    """The originals a document is checked against: summaries plus the ROADMAP text."""

    texts: tuple[str, ...]
    paths: frozenset[str]
    ids: frozenset[str] = frozenset()
    joined: str = ""

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
        texts = (*summaries, roadmap or "")
        return cls(texts, known, frozenset(facts.requirement_ids), "\n".join(texts))

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


_VERDICT_HEAD = re.compile(r"^- (.+?): (?:PASS|FAIL|PARTIAL|NOT VERIFIED)(?: —|$)", re.M)


def _verdict_heads(verification: str) -> str:
    """The ids the rendered Verification gives a verdict (`- R1: PASS — ...`): an id named only
    in a plan's check line or in another id's evidence has none."""
    return "\n".join(m.group(1) for m in _VERDICT_HEAD.finditer(verification))


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
    verdict_ids: Sequence[str] | None = None,
) -> VerifyReport:
    """Every check of the module docstring over one document (linear in its size: each scope
    is scanned once; only what that scan misses is searched for again). `verdict_ids`: the ids
    a hand-made file's verdict lines name (else the compactor's own verdict lines are read)."""
    frontmatter, body = split_frontmatter(text)
    per_plan = f"layout: {PER_PLAN}" in frontmatter
    if verdict_ids is None:
        id_scope = _verdict_heads(_section_text(body, "Verification"))
    else:
        id_scope = "\n".join([*verdict_ids, *(m for i in verdict_ids for m in range_members(i))])
    path_scope = (
        text
        if not strict
        else _plan_text(body)
        if per_plan
        else (_section_text(body, "Files Modified"))
    )
    named_paths = find_paths(text)
    in_scope = set(named_paths) if path_scope is text else set(find_paths(path_scope))
    missing_paths = [
        p for p in facts.paths if p not in in_scope and not path_present(p, path_scope)
    ]
    scoped_ids = {m.group(1) for m in ID_RE.finditer(id_scope)}
    named_ids = list(dict.fromkeys(m.group(1) for m in OUTPUT_ID_RE.finditer(body)))
    headings = [h.lower() for h in _headings(body)]
    return VerifyReport(
        missing_ids=[
            i for i in facts.requirement_ids if i not in scoped_ids and not ids_present(i, id_scope)
        ],
        missing_paths=missing_paths,
        invented_ids=[i for i in named_ids if not sources.knows_id(i)],
        invented_paths=[p for p in named_paths if not sources.knows_path(p)],
        tokens_original=tokens_original,
        tokens_output=tokens_of(text),
        sections_missing=[
            s
            for s in (("Verification",) if per_plan else SECTIONS)
            if not any(h.startswith(s.lower()) for h in headings)
        ],
        sections_extra=[h for h in _headings(body) if not _is_spec_section(h, per_plan)],
        plans_missing=[
            p.id
            for p in facts.plans
            if not re.search(rf"(?<![\w.]){re.escape(p.id)}(?![\w])", body)
        ],
        frontmatter_missing=[
            k for k in FRONTMATTER_KEYS if k not in _frontmatter_keys(frontmatter)
        ],
    )


def _is_spec_section(heading: str, per_plan: bool = False) -> bool:
    if per_plan and re.match(r"^Plan\s", heading):
        return True
    return any(heading.lower().startswith(s.lower()) for s in SECTIONS)


def _plan_text(body: str) -> str:
    """The plan sections of a per-plan layout (render.PER_PLAN), where its paths are named."""
    return "\n".join(s.text for s in sections(body) if re.match(r"^Plan\s", s.title))


def originals_tokens(summaries: Sequence[str]) -> int:
    return tokens_of("\n".join(summaries))


@lru_cache(maxsize=16)
def tokens_of(text: str) -> int:
    """count_tokens, remembered: one document is measured by the offline step, then reviewed."""
    return count_tokens(text)


# ---------------------------------------------------------------- presence + grounding


def presence_problems(report: VerifyReport) -> list[Problem]:
    """The presence checks as problems (all of them repairable)."""
    return [
        *(Problem("missing-id", "verification", f"{i} is missing from Verification", id=i)
          for i in report.missing_ids),
        *(Problem("missing-path", "files", f"{p} is missing from Files Modified", path=p)
          for p in report.missing_paths),
        *(Problem("invented-id", "document", f"{i} is not in the originals", id=i)
          for i in report.invented_ids),
        *(Problem("invented-path", "document", f"{p} is not in the originals", path=p)
          for p in report.invented_paths),
    ]  # fmt: skip


@dataclass
class Review:
    """Presence and grounding of one proposal, as the re-ask, the repair and people need it."""

    presence: VerifyReport
    problems: list[Problem]
    text: str = ""  # the rendered document that was reviewed

    @property
    def repairable(self) -> list[Problem]:
        return [p for p in self.problems if p.repairable]

    @property
    def needs_model(self) -> list[Problem]:
        return [p for p in self.problems if not p.repairable]

    def failing_sections(self) -> set[str]:
        """Sections whose problems repair cannot fix (the length is not a section's fault)."""
        return {p.section for p in self.needs_model if p.kind != "too-long"}

    @property
    def ok(self) -> bool:
        """Nothing missing, invented or ungrounded (the length is reported, not gated)."""
        return not any(p.kind != "too-long" for p in self.problems)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problems": [p.as_dict() for p in self.problems],
            "repairable": len(self.repairable),
            "needs_model": len(self.needs_model),
        }

    def feedback_lines(self, limit: int = 60) -> list[str]:
        """One line per problem for a re-ask; presence problems of a kind share a line."""
        joined = {"missing-id": "missing requirement ids", "missing-path": "missing file paths",
                  "invented-id": "ids not in the originals",
                  "invented-path": "paths not in the originals"}  # fmt: skip
        lines: list[str] = []
        for kind, label in joined.items():
            names = [p.id or p.path or "" for p in self.problems if p.kind == kind]
            lines += [f"{label}: {', '.join(names)}"] if names else []
        rest = [p.message if p.section == "document" else f"[{p.section}] {p.message}"
                for p in self.problems if p.kind not in joined]  # fmt: skip
        if len(rest) > limit:
            rest = [*rest[:limit], f"... and {len(rest) - limit} more of the same kinds"]
        return lines + rest
