"""Store Outcome (spec section 3): importance, task_type inference, next ID, locked atomic append."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from legion_llm.errors import InputError, WriteFailedError
from legion_llm.memory.catalog import first_task_type, load_catalog
from legion_llm.memory.files import (
    NotUtf8Error,
    locked,
    read_bytes,
    read_problem,
    undecodable_refusal,
    write_or_fail,
)
from legion_llm.memory.gitinfo import current_branch
from legion_llm.memory.outcomes.fastscan import StoreScan, scan_for_store
from legion_llm.memory.outcomes.read import (
    OUTCOME_COLUMNS,
    OUTCOMES_TEMPLATE,
    OutcomesFile,
    base_importance,
    parse_outcomes,
)
from legion_llm.memory.redact import project_redactor, write_warning
from legion_llm.memory.table import append_rows, encode_row
from legion_llm.project import MemoryPaths
from legion_llm.records import OUTCOME_VALUES, OutcomeRecord, format_id, id_number, split_list

# A phase as the ROADMAP numbers it: 4, 04, 6.1, 12.3.1 (never negative, never a word).
PHASE_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)*")


@dataclass
class OutcomeInput:
    phase: str
    plan: str
    agent: str
    outcome: str
    summary: str
    task_type: str | None = None
    tags: list[str] = field(default_factory=list)
    review_cycles: int = 1
    escalated: bool = False
    trivial: bool = False
    blockers: int = 0
    cross_division: bool = False
    importance: int | None = None
    branch: str | None = None


@dataclass
class StoredOutcome:
    record: OutcomeRecord
    row: str
    record_count: int
    warnings: list[str] = field(default_factory=list)


def validate(data: OutcomeInput) -> OutcomeInput:
    outcome = data.outcome.strip().lower()
    if outcome not in OUTCOME_VALUES:
        raise InputError(
            f"--outcome must be one of {', '.join(OUTCOME_VALUES)}, not {data.outcome!r}"
        )
    for name in ("phase", "plan", "agent", "summary"):
        if not getattr(data, name).strip():
            raise InputError(f"--{name} must not be empty")
    if not split_list(data.agent):
        raise InputError(f"--agent must name an agent, not {data.agent!r}")
    if not PHASE_NUMBER.fullmatch(data.phase.strip()):
        raise InputError(f"--phase must be a phase number such as 4 or 6.1, not {data.phase!r}")
    if data.importance is not None and not 1 <= data.importance <= 5:
        raise InputError(f"--importance must be 1 to 5, not {data.importance}")
    if data.review_cycles < 0 or data.blockers < 0:
        raise InputError("--review-cycles and --blockers must be 0 or more")
    data.outcome = outcome
    return data


def compute_importance(data: OutcomeInput, *, first_time: bool) -> int:
    """Base score from the outcome, +1 per modifier, always within 1..5; --importance overrides."""
    if data.importance is not None:
        return min(5, max(1, data.importance))
    if data.outcome == "failed":
        score = 5
    elif data.escalated:
        score = 4
    elif data.outcome == "partial" or data.review_cycles >= 2:
        score = 3
    elif data.trivial:
        score = 1
    else:
        score = base_importance(data.outcome)
    score += first_time + data.cross_division + (data.blockers >= 3)
    return min(5, max(1, score))


def resolve_task_type(given: str | None, agent: str, catalog_file: Path) -> str:
    """Spec step 4: the given task type, else the agent's first CATALOG task type, else general."""
    if given and given.strip():
        return given.strip()
    first_agent = split_list(agent)[0] if split_list(agent) else agent
    if first_agent != "autonomous":
        found = first_task_type(load_catalog(catalog_file), first_agent)
        if found:
            return found
    return "general"


class LogView:
    """What a store needs from one outcomes file, read in full (any layout)."""

    def __init__(self, parsed: OutcomesFile) -> None:
        self.parsed = parsed
        self.warnings = parsed.warnings

    def max_id(self) -> int:
        return max(
            (n for r in self.parsed.records if (n := id_number(r.id)) is not None), default=0
        )

    def count(self) -> int:
        return len(self.parsed.records)

    def has_agent_task(self, agents: list[str], task_types: list[str]) -> bool:
        return any(
            set(agents) & set(r.agents) and set(task_types) & set(r.task_types)
            for r in self.parsed.records
        )

    def insert(self, record: OutcomeRecord) -> tuple[str | list[bytes | memoryview], str]:
        """The new file content and the row line added to it."""
        return insert_row(self.parsed, record)


class FastLogView(LogView):
    """The same facts from regex scans of a common-layout file (see fastscan.py)."""

    def __init__(self, scan: StoreScan) -> None:
        self.scan = scan
        self.warnings = []

    def max_id(self) -> int:
        return self.scan.max_id

    def count(self) -> int:
        return self.scan.row_count

    def has_agent_task(self, agents: list[str], task_types: list[str]) -> bool:
        return self.scan.has_agent_task(agents, task_types)

    def insert(self, record: OutcomeRecord) -> tuple[str | list[bytes | memoryview], str]:
        row = row_for(record, self.scan.columns)
        return self.scan.with_row(row), row


@contextlib.contextmanager
def _locked_or_print(
    paths: MemoryPaths, data: OutcomeInput, task_type: str, branch: str, today: date
) -> Iterator[None]:
    """The memory folder's lock; when it cannot even be created, the record is printed (exit 3)."""
    try:
        lock = locked(paths.memory_dir, root=paths.root)
        lock.__enter__()
    except OSError as exc:
        pending = OutcomeRecord(
            "O-???", today.isoformat(), branch, data.phase.strip(), data.plan.strip(),
            data.agent.strip(), task_type, data.outcome, compute_importance(data, first_time=False),
            ", ".join(data.tags), data.summary,
        )  # fmt: skip
        raise WriteFailedError(
            f"could not open {paths.memory_dir}: {exc.strerror or exc}",
            record_text=row_for(pending, list(OUTCOME_COLUMNS)),
            data={"record": pending.to_dict()},
        ) from exc
    try:
        yield
    finally:
        lock.__exit__(None, None, None)


def open_log(path: Path) -> LogView:
    """A view of OUTCOMES.md / ARCHIVE.md for a store; a missing file reads as the empty template.
    Either file unreadable, unparseable or holding bytes that are not UTF-8 stops the store: its
    IDs could not be known, or the row would be stored next to a line no reader takes."""
    try:
        data = read_bytes(path)
    except OSError as exc:
        raise InputError(f"{path.name} {read_problem(exc)}") from exc
    if data is None:
        data = OUTCOMES_TEMPLATE.encode("utf-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = NotUtf8Error(path, exc)
        raise InputError(undecodable_refusal(path.name, {bad.line - 1: bad.byte})) from None
    scan = scan_for_store(data, OUTCOME_COLUMNS)
    if scan is not None:
        return FastLogView(scan)
    parsed = parse_outcomes(path, text)
    if not parsed.parseable:
        raise InputError(
            f"{path.name} could not be parsed; fix it by hand before storing an outcome"
        )
    return LogView(parsed)


def add_outcome(
    paths: MemoryPaths, data: OutcomeInput, *, today: date, catalog_file: Path
) -> StoredOutcome:
    redactor = project_redactor(paths.root)
    data, hits = redactor.record(validate(data))
    task_type = resolve_task_type(data.task_type, data.agent, catalog_file)
    branch = data.branch or current_branch(paths.root)
    agents, types = split_list(data.agent), split_list(task_type)
    with _locked_or_print(paths, data, task_type, branch, today):
        current = open_log(paths.outcomes)
        archive = open_log(paths.archive)
        done_before = current.has_agent_task(agents, types) or archive.has_agent_task(agents, types)
        record = OutcomeRecord(
            id=format_id("O", max(current.max_id(), archive.max_id()) + 1),
            date=today.isoformat(),
            branch=branch,
            phase=data.phase.strip(),
            plan=data.plan.strip(),
            agent=data.agent.strip(),
            task_type=task_type,
            outcome=data.outcome,
            importance=compute_importance(data, first_time=not done_before),
            tags_text=", ".join(t for tag in data.tags for t in split_list(tag)),
            summary=data.summary,
        )
        text, row = current.insert(record)
        write_or_fail(
            paths.outcomes, text, root=paths.root, record_text=row, record=record.to_dict()
        )
    notes = write_warning(redactor, hits, paths.outcomes.name)
    return StoredOutcome(record, row, current.count() + 1, [*current.warnings, *notes])


def row_for(record: OutcomeRecord, columns: list[str]) -> str:
    values = record.to_dict()
    cells = []
    for column in columns:
        value = values.get(column, "")
        if column == "tags":
            value = record.tags_text
        cells.append(str(value) if value is not None else "")
    return encode_row(cells)


def insert_row(current: OutcomesFile, record: OutcomeRecord) -> tuple[str, str]:
    """The file text with the record's row after the last outcome row; everything else unchanged."""
    assert current.doc is not None
    table = current.last_table
    columns = table.columns if table is not None else list(OUTCOME_COLUMNS)
    row = row_for(record, columns)
    if "id" not in columns:
        record.id = None  # the file's table has no ID column: the row carries none
    return append_rows(current.doc, table, [row], template=OUTCOMES_TEMPLATE), row
