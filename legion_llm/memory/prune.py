"""Prune Outcomes (spec §7.5): plan the move, then apply it so that no instant loses a record.

Order of writes: ARCHIVE.md is written and fsynced first, OUTCOMES.md replaced second. A crash
between the two leaves a record in both files; the next prune sees its ID already archived and
only removes it from OUTCOMES.md, and recall counts a repeated row once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from legion_llm.config import Settings
from legion_llm.errors import WriteFailedError
from legion_llm.memory.files import atomic_write, locked, read_text
from legion_llm.memory.outcomes import (
    ARCHIVE_TEMPLATE,
    OUTCOME_COLUMNS,
    OutcomesFile,
    parse_outcomes,
    read_outcomes,
)
from legion_llm.memory.planning import current_phase, phase_key
from legion_llm.memory.scoring import days_old
from legion_llm.memory.store import row_for
from legion_llm.memory.table import append_rows
from legion_llm.project import MemoryPaths
from legion_llm.records import OutcomeRecord

NOTHING_TO_PRUNE = (
    "No records eligible for pruning. "
    "All records are either recent, high-importance, or in the current phase."
)
VERIFY_FAILED = "Prune verification failed. OUTCOMES.md restored to pre-prune state."


@dataclass
class PrunePlan:
    candidates: list[OutcomeRecord]
    total: int
    high_importance: int
    current_phase_count: int
    current_phase: str | None
    archive_before: int
    already_archived: set[str] = field(default_factory=set)


@dataclass
class PruneReport:
    plan: PrunePlan
    applied: bool
    dry_run: bool
    archive_total: int
    warnings: list[str] = field(default_factory=list)

    @property
    def archived(self) -> int:
        return len(self.plan.candidates)

    @property
    def remaining(self) -> int:
        return self.plan.total - self.archived

    def text(self) -> str:
        if not self.plan.candidates:
            return NOTHING_TO_PRUNE
        verb = "Would prune" if self.dry_run else "Pruned"
        return (
            f"{verb} {self.archived} records → .planning/memory/ARCHIVE.md\n"
            f"Remaining: {self.remaining} active records\n"
            f"Preserved: {self.plan.high_importance} high-importance (4-5), "
            f"{self.plan.current_phase_count} current-phase\n"
            f"Archive total: {self.archive_total} records"
        )


def is_candidate(record: OutcomeRecord, settings: Settings, today: date, phase: str | None) -> bool:
    age = days_old(record.date, today)
    return (
        record.id is not None
        and record.line_no is not None
        and age is not None
        and age > settings.prune_age_days
        and record.importance <= 3
        and (phase is None or phase_key(record.phase) != phase)
    )


def plan_prune(
    outcomes: OutcomesFile,
    archive: OutcomesFile,
    settings: Settings,
    today: date,
    phase: str | None,
) -> PrunePlan:
    records = outcomes.records
    archived_ids = {r.id for r in archive.records if r.id}
    return PrunePlan(
        candidates=[r for r in records if is_candidate(r, settings, today, phase)],
        total=len(records),
        high_importance=sum(r.importance >= 4 for r in records),
        current_phase_count=sum(
            phase is not None and phase_key(r.phase) == phase and r.importance <= 3 for r in records
        ),
        current_phase=phase,
        archive_before=len(archive.records),
        already_archived=archived_ids,
    )


def prune(
    paths: MemoryPaths, settings: Settings, today: date, *, dry_run: bool = False
) -> PruneReport:
    if not paths.outcomes.exists():
        empty = PrunePlan([], 0, 0, 0, None, 0)
        return PruneReport(empty, applied=False, dry_run=dry_run, archive_total=0)
    with locked(paths.memory_dir, root=paths.root):
        outcomes = read_outcomes(paths.outcomes)
        archive = read_outcomes(paths.archive)
        warnings = outcomes.warnings + archive.warnings
        phase = current_phase(paths.state)
        plan = plan_prune(outcomes, archive, settings, today, phase)
        new_in_archive = [r for r in plan.candidates if r.id not in plan.already_archived]
        archive_total = plan.archive_before + len(new_in_archive)
        report = PruneReport(plan, False, dry_run, archive_total, warnings)
        if dry_run or not plan.candidates or not outcomes.parseable or not archive.parseable:
            return report
        _apply(paths, outcomes, archive, plan, new_in_archive)
        report.applied = True
        return report


def _apply(
    paths: MemoryPaths,
    outcomes: OutcomesFile,
    archive: OutcomesFile,
    plan: PrunePlan,
    new_in_archive: list[OutcomeRecord],
) -> None:
    assert outcomes.doc is not None
    snapshot = outcomes.doc.text
    rows = [row_for(r, list(OUTCOME_COLUMNS)) for r in plan.candidates]
    try:
        atomic_write(paths.archive, _archive_text(archive, new_in_archive), root=paths.root)
        drop = {r.line_no for r in plan.candidates}
        kept = [line for i, line in enumerate(outcomes.doc.lines) if i not in drop]
        atomic_write(paths.outcomes, "".join(kept), root=paths.root)
    except OSError as exc:
        _restore(paths, snapshot)
        raise WriteFailedError(
            f"prune aborted, OUTCOMES.md unchanged: {exc.strerror or exc}",
            record_text="\n".join(rows),
        ) from exc
    if not _verified(paths, plan):
        _restore(paths, snapshot)
        raise WriteFailedError(VERIFY_FAILED, record_text="\n".join(rows))


def _archive_text(archive: OutcomesFile, records: list[OutcomeRecord]) -> str:
    parsed = parse_outcomes(archive.path, archive.doc.text if archive.doc is not None else "")
    table = parsed.last_table
    columns = table.columns if table is not None else list(OUTCOME_COLUMNS)
    rows = [row_for(r, columns) for r in records]
    assert parsed.doc is not None
    return append_rows(parsed.doc, table, rows, template=ARCHIVE_TEMPLATE)


def _verified(paths: MemoryPaths, plan: PrunePlan) -> bool:
    after = read_outcomes(paths.outcomes)
    archive = read_outcomes(paths.archive)
    archived_ids = {r.id for r in archive.records}
    remaining_ids = {r.id for r in after.records}
    return (
        after.parseable
        and len(after.records) == plan.total - len(plan.candidates)
        and all(r.id in archived_ids and r.id not in remaining_ids for r in plan.candidates)
    )


def _restore(paths: MemoryPaths, snapshot: str) -> None:
    if read_text(paths.outcomes) != snapshot:
        atomic_write(paths.outcomes, snapshot, root=paths.root)
