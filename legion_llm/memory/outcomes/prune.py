"""Prune Outcomes (spec §7.5): plan the move, then apply it so that no instant loses a record.

Rows move as written: every cell of the row, in the archive table's columns (a new archive takes
the outcome table's own header when it has columns the canonical header lacks; a prune that would
drop a filled cell is refused). A row is "already archived" only when the identical row is there.

Only rows of the outcome tables move, found by their position: the same text elsewhere (a code
block quoting a row, a table of examples) is never touched, and a line that is not UTF-8 is kept
byte for byte.

Order of writes: ARCHIVE.md is written and fsynced first, OUTCOMES.md replaced second. A crash
between the two leaves a row in both files; the next prune finds the identical row archived and
only removes it from OUTCOMES.md, and recall counts a repeated row once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from legion_llm.config import Settings
from legion_llm.errors import InputError, WriteFailedError
from legion_llm.memory.files import atomic_write, locked, read_text_keeping
from legion_llm.memory.outcomes.read import (
    ARCHIVE_TEMPLATE,
    OUTCOME_COLUMNS,
    OutcomesFile,
    parse_outcomes,
    read_outcomes,
)
from legion_llm.memory.outcomes.scoring import days_old
from legion_llm.memory.phases.planning import current_phase, phase_key
from legion_llm.memory.table import append_rows, encode_row
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
    return PrunePlan(
        candidates=[r for r in records if is_candidate(r, settings, today, phase)],
        total=len(records),
        high_importance=sum(r.importance >= 4 for r in records),
        current_phase_count=sum(
            phase is not None and phase_key(r.phase) == phase and r.importance <= 3 for r in records
        ),
        current_phase=phase,
        archive_before=len(archive.records),
    )


@dataclass
class ArchiveMove:
    """The rows to append to ARCHIVE.md (cells as written, in its columns) and the new text."""

    rows: list[tuple[str, ...]]  # every candidate, in archive columns
    new_rows: list[tuple[str, ...]]  # the ones not already archived
    text: str


def prune(
    paths: MemoryPaths, settings: Settings, today: date, *, dry_run: bool = False
) -> PruneReport:
    if not paths.outcomes.exists():
        empty = PrunePlan([], 0, 0, 0, None, 0)
        return PruneReport(empty, applied=False, dry_run=dry_run, archive_total=0)
    with locked(paths.memory_dir, root=paths.root):
        outcomes = read_outcomes(paths.outcomes)
        archive = read_outcomes(paths.archive)
        plan = plan_prune(outcomes, archive, settings, today, current_phase(paths.state))
        report = PruneReport(plan, False, dry_run, plan.archive_before, outcomes.warnings)
        if not plan.candidates:
            return report
        if not archive.parseable:
            raise InputError("ARCHIVE.md could not be parsed; fix it by hand before pruning")
        move = plan_archive(outcomes, archive, plan.candidates)
        report.archive_total = plan.archive_before + len(move.new_rows)
        if not dry_run:
            _apply(paths, outcomes, plan, move)
            report.applied = True
        return report


def plan_archive(
    outcomes: OutcomesFile, archive: OutcomesFile, candidates: list[OutcomeRecord]
) -> ArchiveMove:
    """Candidate rows in the archive's columns; refuses a move that would drop a filled cell."""
    sources = [outcomes.cells_at(r.line_no) for r in candidates if r.line_no is not None]
    base = archive.doc.text if archive.doc is not None else ""
    parsed = parse_outcomes(archive.path, base)
    table = parsed.last_table
    template = ARCHIVE_TEMPLATE if table is not None else _archive_template(outcomes, sources)
    if table is None:
        parsed = parse_outcomes(archive.path, base + ("\n" if base.strip() else "") + template)
        table = parsed.last_table
    assert table is not None and parsed.doc is not None
    _refuse_lost_cells(sources, table.columns)
    rows = [tuple(cells.get(c, "") for c in table.columns) for cells in sources]
    existing = {tuple(parsed.doc.values(table, n)) for t in parsed.tables for n in t.row_lines}
    new_rows = [row for row in dict.fromkeys(rows) if row not in existing]
    text = append_rows(
        parsed.doc, table, [encode_row(list(r)) for r in new_rows], template=template
    )
    return ArchiveMove(rows, new_rows, text)


def _archive_template(outcomes: OutcomesFile, sources: list[dict[str, str]]) -> str:
    """The spec's header, unless the outcome table has columns that header lacks: then its own."""
    if all(set(cells) <= set(OUTCOME_COLUMNS) for cells in sources):
        return ARCHIVE_TEMPLATE
    assert outcomes.doc is not None and outcomes.last_table is not None
    header = outcomes.doc.lines[outcomes.last_table.header_line].rstrip("\r\n")
    width = len(outcomes.last_table.columns)
    top = ARCHIVE_TEMPLATE[: ARCHIVE_TEMPLATE.index("| ID")]
    return top + header + "\n|" + "---|" * width + "\n"


def _refuse_lost_cells(sources: list[dict[str, str]], columns: list[str]) -> None:
    lost = sorted(
        {key for cells in sources for key, value in cells.items() if value and key not in columns}
    )
    if lost:
        raise InputError(
            f"ARCHIVE.md has no column for {', '.join(lost)}; pruning would lose those cells "
            "(add the columns to its header first)"
        )


def _apply(paths: MemoryPaths, outcomes: OutcomesFile, plan: PrunePlan, move: ArchiveMove) -> None:
    assert outcomes.doc is not None
    snapshot = outcomes.doc.text
    moved = {
        outcomes.doc.lines[r.line_no].strip() for r in plan.candidates if r.line_no is not None
    }
    drop = {n for n in _row_lines(outcomes) if outcomes.doc.lines[n].strip() in moved}
    kept = [line for n, line in enumerate(outcomes.doc.lines) if n not in drop]
    rows_text = "\n".join(encode_row(list(r)) for r in move.rows)
    try:
        atomic_write(paths.archive, move.text, root=paths.root, keep_undecodable=True)
        atomic_write(paths.outcomes, "".join(kept), root=paths.root, keep_undecodable=True)
    except OSError as exc:
        _restore(paths, snapshot)
        raise WriteFailedError(
            f"prune aborted, OUTCOMES.md unchanged: {exc.strerror or exc}", record_text=rows_text
        ) from exc
    if not _verified(paths, plan, move, moved):
        _restore(paths, snapshot)
        raise WriteFailedError(VERIFY_FAILED, record_text=rows_text)


def _verified(paths: MemoryPaths, plan: PrunePlan, move: ArchiveMove, moved: set[str]) -> bool:
    """Every moved row is in ARCHIVE.md as written, none is left in OUTCOMES.md, counts add up."""
    after = read_outcomes(paths.outcomes)
    archive = read_outcomes(paths.archive)
    if not after.parseable or not archive.parseable or archive.doc is None or after.doc is None:
        return False
    archived = {tuple(archive.doc.values(t, n)) for t in archive.tables for n in t.row_lines}
    left = {after.doc.lines[n].strip() for n in _row_lines(after)}
    return (
        len(after.records) == plan.total - len(plan.candidates)
        and all(row in archived for row in move.rows)
        and not moved & left
    )


def _row_lines(parsed: OutcomesFile) -> list[int]:
    """Line numbers of the outcome tables' rows: the only lines a prune removes (text that repeats
    a row elsewhere, in a code block or another table, stays)."""
    return [n for table in parsed.tables for n in table.row_lines]


def _restore(paths: MemoryPaths, snapshot: str) -> None:
    if read_text_keeping(paths.outcomes) != snapshot:
        atomic_write(paths.outcomes, snapshot, root=paths.root, keep_undecodable=True)
