"""Semantic phase compaction (memory-manager Section 12) that keeps every id and path and
writes nothing the originals do not support. Separable steps with stable names:

    prepare   (prepare.py, deterministic) read the plan summaries, extract ids, paths, plans,
              how each summary reports each id, and the grounding evidence
    propose   (propose.py) any engine fills a PhaseDigest (`EngineProposer`; a phase too large for
              one call is proposed plan by plan, a huge plan in parts, and merged)
    settle    (settle.py) presence + grounding review, at most one re-ask, each section from
              the newest proposal that got it right or from the offline digest, repair, and a
              final review: the only road to a file
    write     atomically, only a Settled result; originals are never touched

Nothing is ever truncated: text that does not fit one call is split, never cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.llm.engine import Engine
from legion_llm.memory.files import atomic_write, locked, or_print, read_text
from legion_llm.memory.phases.extract import PhaseFacts, normalise
from legion_llm.memory.phases.find import Phase
from legion_llm.memory.redact import redacted_data
from legion_llm.pipeline.compact.ground import FORM_KINDS, Problem, ground
from legion_llm.pipeline.compact.parse import parse_document
from legion_llm.pipeline.compact.prepare import (
    Prepared,
    header_for,
    offline_digest,
    precondition_problems,
    prepare,
)
from legion_llm.pipeline.compact.propose import CALL_CAP_TOKENS, EngineProposer
from legion_llm.pipeline.compact.settle import (
    CompactionError,
    Settled,
    settle,
)
from legion_llm.pipeline.compact.verify import (
    Review,
    VerifyReport,
    verify_document,
)

__all__ = [
    "CALL_CAP_TOKENS",
    "CompactResult",
    "CompactionError",
    "EngineProposer",
    "check_compacted",
    "check_text",
    "compact_phase",
    "ground_text",
    "header_for",
    "offline_digest",
    "precondition_problems",
    "prepare",
    "write_compacted",
]


@dataclass
class Checked(VerifyReport):
    """`verify-compaction`: the presence report plus the grounding problems of what it claims."""

    grounding: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing missing, invented or ungrounded; a problem of form only (FORM_KINDS: a text
        over its length) is reported, never a failure: the file says nothing false."""
        return not (self.missing_ids or self.missing_paths or self.invented() or self.facts())

    def facts(self) -> list[Problem]:
        """The grounding problems that are false facts (not form)."""
        return [p for p in self.grounding if p.kind not in FORM_KINDS]

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in super().as_dict().items() if k != "grounding"}
        by_kind: dict[str, list[str]] = {}
        for problem in self.grounding:
            by_kind.setdefault(problem.kind, []).append(problem.message)
        return {**data, "ok": self.ok, "problems": [p.as_dict() for p in self.grounding],
                "grounding": by_kind}  # fmt: skip


def check_compacted(phase: Phase) -> tuple[str, Checked]:
    """Verify the phase's existing COMPACTED.md (made by us or by anyone) against its originals:
    presence as before, and the grounding rules over what the document can be read to claim."""
    text = read_text(phase.compacted_path)
    if text is None:
        raise InputError(f"{phase.compacted_path} does not exist (run `legion-llm compact`)")
    text = normalise(text)
    return text, check_text(text, prepare(phase))


def check_text(text: str, prep: Prepared) -> Checked:
    """What verify-compaction reports of a compacted text (written or not) for its phase."""
    claimed = parse_document(text)
    verdicts = [r.requirement_id for r in claimed.digest.verification]
    presence = verify_document(text, prep.facts, prep.sources, verdict_ids=verdicts,
                               tokens_original=prep.tokens_original)  # fmt: skip
    return Checked(**vars(presence), grounding=ground_text(text, prep))


def ground_text(text: str, prep: Prepared) -> list[Problem]:
    """The grounding problems of a written compacted file, read back (parse.py)."""
    claimed = parse_document(text)
    problems = [p for p in ground(claimed.digest, prep.facts, prep.evidence)
                if p.kind not in _NOT_GATED_BY_HAND]  # fmt: skip
    return problems + claimed.verdict_problems(prep.facts)


# a hand-made file may lay out plans, decisions and agents its own way: only what it claims
# is held to the rules, not what it leaves out or cannot be read to say
_NOT_GATED_BY_HAND = frozenset(
    {"missing-deliverable", "empty-section", "uncited-evidence", "duplicate-id", "unknown-agent",
     "unknown-path"}  # an invented path is a presence failure already
)  # fmt: skip


@dataclass
class CompactResult:
    path: Path
    text: str
    report: VerifyReport
    facts: PhaseFacts
    repaired: list[str]
    warnings: list[str]
    answers: list[dict[str, Any]]
    settled: Settled
    written: bool = False
    forced_reason: str | None = None
    chunks: int = 1
    too_small: bool = False  # nothing written: the summaries are shorter than any compaction

    @property
    def engine(self) -> str:
        return self.settled.engine

    @property
    def fell_back(self) -> bool:
        return self.settled.fell_back or any(a["fallback_reason"] for a in self.answers)

    def as_dict(self) -> dict[str, Any]:
        """The --json data of `compact` (the CLI adds `usage`)."""
        return {
            "path": str(self.path),
            "ratio": self.report.ratio,
            "requirement_ids": list(self.facts.requirement_ids),
            "paths": list(self.facts.paths),
            "missing_after_repair": self.report.missing_ids + self.report.missing_paths,
            "repaired": self.repaired,
            "engine": self.engine,
            "fell_back": self.fell_back,
            "written": self.written,
            "too_small": self.too_small,
            "forced": self.forced_reason is not None,
            "tokens_original": self.report.tokens_original,
            "tokens_output": self.report.tokens_output,
            "chunks": self.chunks,
            **self.settled.report(),
            "answers": redacted_data(self.answers),
        }


def compact_phase(
    phase: Phase,
    engine: Engine,
    *,
    today: date,
    force: bool = False,
    write: bool = True,
    call_budget: int | None = None,
) -> CompactResult:
    """Compact one phase; writes `{NN}-COMPACTED.md` when `write` and settle succeeded."""
    problems = precondition_problems(phase)
    if not phase.summaries:
        raise InputError(f"phase {phase.key} ({phase.folder}) has no plan SUMMARY files")
    if problems and not force:
        raise InputError("; ".join(problems) + " (pass --force to compact anyway)",
                         data={"problems": problems})  # fmt: skip
    exists = phase.compacted_path.exists()
    if exists and write and not force:
        raise InputError(f"{phase.compacted_path} exists; pass --force to replace it")
    prep = prepare(phase)
    header = header_for(prep, today, _forced_reason(force, problems, exists))
    proposer = EngineProposer(prep, engine, header, call_budget)
    first = proposer.propose()
    header = replace(header, parts_from=proposer.provenance())
    settled = settle(prep, header, [first], ask_again=proposer.reask)
    result = CompactResult(phase.compacted_path, settled.text, settled.review.presence,
                           prep.facts, settled.repaired,
                           [*(f"warning: {p} (--force)" for p in problems),
                            *redacted_data(proposer.warnings), *settled.warnings,
                            *_band_warning(settled.review)],
                           proposer.answers, settled, forced_reason=header.forced_reason,
                           chunks=len(proposer.chunks))  # fmt: skip
    if settled.review.presence.tokens_output > prep.tokens_original:
        # even the least a compacted summary can say (frontmatter, a line a plan, a verdict an
        # id) is longer than these summaries: they are their own compaction
        result.too_small = True
        result.warnings = [w for w in result.warnings if "(--force)" in w]
    elif write:
        write_compacted(settled)
        result.written = True
    return result


def _band_warning(final: Review) -> list[str]:
    report = final.presence
    if report.in_band():
        return []
    return [f"warning: length ratio {report.ratio:.2f} is outside the 0.30-0.50 target"]


def _forced_reason(force: bool, problems: list[str], exists: bool) -> str | None:
    if not force:
        return None
    notes = problems + (["replaced the existing compacted summary"] if exists else [])
    return "; ".join(notes) or "--force given; every precondition held"


# ---------------------------------------------------------------- write


def write_compacted(settled: Settled) -> None:
    """Write a settled result atomically under the folder's lock (the only writer of a
    COMPACTED.md); an existing file is replaced only when the header records --force. A write
    that fails raises WriteFailedError holding the text (the CLI prints it, exit 3)."""
    if not settled.review.ok:
        raise CompactionError("refusing to write a compacted summary that failed its review")
    phase, text = settled.prepared.phase, settled.text
    path = phase.compacted_path
    with (
        or_print(f"could not write {path}", text, {"path": str(path)}),
        locked(phase.folder, root=phase.root),
    ):
        if path.exists() and settled.header.forced_reason is None:
            raise InputError(f"{path} exists; pass --force to replace it")
        atomic_write(path, text, root=phase.root)
