"""`compact --all`: every phase `compact --suggest` lists, directly one after another or as ONE batch.

Each phase goes through `compact_phase` unchanged (prepare, propose, verify / re-ask / repair,
write): with the batch engine its proposals come from the batch, its re-ask (when the check
asks for one) is a direct call, and nothing but the compaction pipeline's own writer writes.
Per phase the outcome is one of: written, repaired, fell back (some text is the offline
engine's), failed (with the reason), stale (its originals changed since submission: not
written), skipped (a COMPACTED.md appeared meanwhile), not submitted (its preconditions failed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import LegionError
from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError, LLMUnavailableError
from legion_llm.memory.files import read_bytes, read_text
from legion_llm.memory.phases.extract import normalise
from legion_llm.memory.phases.find import (
    Phase,
    completed_without_compaction,
    find_phase,
    phase_specs,
)
from legion_llm.pipeline.batch.run import Checkpoint, JobCase
from legion_llm.pipeline.compact.run import CompactResult, compact_phase, write_compacted


def phase_status(result: CompactResult) -> str:
    """written / repaired / fell back / too small, from what the pipeline reports."""
    if result.too_small:
        return "too small"
    if result.fell_back:
        return "fell back"
    return "repaired" if result.repaired else "written"


def outcome_of(result: CompactResult, root: Path, note: str | None = None) -> dict[str, Any]:
    path = result.path
    shown = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
    outcome: dict[str, Any] = {"status": phase_status(result), "path": shown,
                               "written": result.written, "ratio": result.report.ratio,
                               "repaired": list(result.repaired), "engine": result.engine,
                               "warnings": list(result.warnings)}  # fmt: skip
    if note:
        outcome["note"] = note
    return outcome


def originals_sha256(phase: Phase) -> str:
    """The phase's originals as the compaction reads them: each summary's bytes, and what
    ROADMAP.md says about this phase (another phase's row changing does not make it stale)."""
    digest = hashlib.sha256()
    for plan, path in phase.summaries:
        digest.update(f"{plan}\0{path.name}\0".encode())
        digest.update(read_bytes(path, root=phase.root) or b"")
        digest.update(b"\0")
    roadmap = phase.roadmap
    digest.update(repr((roadmap.complete, roadmap.name, roadmap.requirement_ids)).encode())
    return digest.hexdigest()


@dataclass
class CompactAllJob:
    """The phases of one `compact --all`, as a batch job (pipeline/batch/run.py)."""

    root: Path
    today: date
    phase_keys: Sequence[str]
    force: bool = False
    kind: str = "compact"

    @classmethod
    def pending(cls, root: Path, today: date) -> CompactAllJob:
        return cls(root, today, phase_specs(completed_without_compaction(root), root))

    def cases(self) -> list[JobCase]:
        return [JobCase(key, f"phase {key}", f"phase-{key}-chunk") for key in self.phase_keys]

    def phase(self, case: JobCase) -> Phase:
        return find_phase(self.root, case.key)

    def fingerprint(self, case: JobCase) -> str | None:
        return originals_sha256(self.phase(case))

    def options(self) -> dict[str, Any]:
        return {"today": self.today.isoformat(), "force": self.force,
                "phases": list(self.phase_keys)}  # fmt: skip

    def run(self, case: JobCase, engine: Engine, checkpoint: Checkpoint | None) -> dict[str, Any]:
        phase = self.phase(case)
        result = compact_phase(phase, engine, today=self.today, force=self.force, write=False)
        if checkpoint is None:
            return {}
        checkpoint()  # the journal is saved before the file is written
        return self._write(phase, result)

    def _write(self, phase: Phase, result: CompactResult) -> dict[str, Any]:
        if result.too_small:  # nothing to write: the summaries are their own compaction
            return outcome_of(result, self.root)
        existing = read_text(phase.compacted_path, root=self.root)
        if existing is not None and normalise(existing) == normalise(result.text):
            result.written = True
            return outcome_of(result, self.root, "already written (by an interrupted collect)")
        if existing is not None and not self.force:
            shown = phase.compacted_path.relative_to(self.root)
            return {"status": "skipped", "reason": f"{shown} was written meanwhile; not replaced"}
        write_compacted(result.settled)
        result.written = True
        return outcome_of(result, self.root)


def compact_all_direct(
    job: CompactAllJob, engine: Engine, *, on_case: Callable[[str], None] | None = None
) -> list[dict[str, Any]]:
    """Every phase directly, one after another; one phase's failure never stops the next, but
    an engine that cannot answer (unreachable, refused, the cost cap reached) stops the run: the
    phases after it are "not tried" instead of each paying for the same retries. A failed row
    carries the error's `exit_code`."""
    rows: list[dict[str, Any]] = []
    stopped: str | None = None
    for case in job.cases():
        if stopped is not None:
            rows.append({"case": case.key, "label": case.label, "status": "not tried",
                         "reason": f"the engine stopped: {stopped}", "cost_usd": 0.0})  # fmt: skip
            continue
        before = engine.meter.total.copy()
        try:
            result = compact_phase(job.phase(case), engine, today=job.today, force=job.force)
            row = outcome_of(result, job.root)
        except LegionError as exc:
            row = {"status": "failed", "reason": exc.message, "exit_code": exc.exit_code}
            if isinstance(exc, LLMUnavailableError | BudgetExceededError):
                stopped = exc.message
        spent = engine.meter.total.estimated_cost_usd - before.estimated_cost_usd
        rows.append({"case": case.key, "label": case.label, **row,
                     "cost_usd": round(spent, 6)})  # fmt: skip
        if on_case is not None:
            on_case(case.label)
    return rows
