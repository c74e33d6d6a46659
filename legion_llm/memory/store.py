"""Store Outcome (spec section 3): importance, task_type inference, next ID, locked atomic append."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from legion_llm.errors import InputError, WriteFailedError
from legion_llm.memory.catalog import first_task_type, load_catalog
from legion_llm.memory.files import atomic_write, locked, read_text
from legion_llm.memory.gitinfo import current_branch
from legion_llm.memory.outcomes import (
    OUTCOME_COLUMNS,
    OUTCOMES_TEMPLATE,
    OutcomesFile,
    base_importance,
    parse_outcomes,
    read_outcomes,
)
from legion_llm.memory.table import MarkdownDoc, encode_row
from legion_llm.project import MemoryPaths
from legion_llm.records import OUTCOME_VALUES, OutcomeRecord, format_id, id_number, split_list


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


def is_first_time(records: list[OutcomeRecord], agent: str, task_type: str) -> bool:
    agents = set(split_list(agent))
    types = set(split_list(task_type))
    return not any(agents & set(r.agents) and types & set(r.task_types) for r in records)


def next_id(*files: OutcomesFile) -> str:
    """One more than the highest O- number in OUTCOMES.md and ARCHIVE.md: IDs are never reused."""
    highest = max(
        (n for f in files for r in f.records if (n := id_number(r.id)) is not None), default=0
    )
    return format_id("O", highest + 1)


def add_outcome(
    paths: MemoryPaths, data: OutcomeInput, *, today: date, catalog_file: Path
) -> StoredOutcome:
    data = validate(data)
    task_type = resolve_task_type(data.task_type, data.agent, catalog_file)
    branch = data.branch or current_branch(paths.root)
    with locked(paths.memory_dir, root=paths.root):
        current = _read_for_write(paths.outcomes)
        archive = read_outcomes(paths.archive)
        history = current.records + archive.records
        record = OutcomeRecord(
            id=next_id(current, archive),
            date=today.isoformat(),
            branch=branch,
            phase=data.phase.strip(),
            plan=data.plan.strip(),
            agent=data.agent.strip(),
            task_type=task_type,
            outcome=data.outcome,
            importance=compute_importance(
                data, first_time=is_first_time(history, data.agent, task_type)
            ),
            tags=[t for tag in data.tags for t in split_list(tag)],
            summary=data.summary,
        )
        text, row = insert_row(current, record)
        _write_or_fail(paths, text, record, row)
    return StoredOutcome(record, row, len(current.records) + 1, current.warnings)


def _read_for_write(path: Path) -> OutcomesFile:
    try:
        text = read_text(path)
    except (UnicodeDecodeError, OSError) as exc:
        raise InputError(f"{path.name} cannot be read ({type(exc).__name__})") from exc
    parsed = parse_outcomes(path, text if text is not None else OUTCOMES_TEMPLATE)
    parsed.exists = text is not None
    if not parsed.parseable:
        raise InputError(f"{path.name} could not be parsed; fix it by hand before storing into it")
    return parsed


def row_for(record: OutcomeRecord, columns: list[str]) -> str:
    values = record.to_dict()
    cells = []
    for column in columns:
        value = values.get(column, "")
        if column == "tags":
            value = ", ".join(record.tags)
        cells.append(str(value) if value is not None else "")
    return encode_row(cells)


def insert_row(current: OutcomesFile, record: OutcomeRecord) -> tuple[str, str]:
    """The file text with the record's row after the last outcome row; everything else unchanged."""
    doc = current.doc
    assert doc is not None
    table = current.last_table
    if table is None:
        return _append_new_table(doc, record)
    row = row_for(record, table.columns)
    if "id" not in table.columns:
        record.id = None  # the file's table has no ID column: the row carries none
    lines = list(doc.lines)
    at = table.last_line
    if not lines[at].endswith("\n"):
        lines[at] += _newline(doc)
    lines.insert(at + 1, row + _newline(doc))
    return "".join(lines), row


def _append_new_table(doc: MarkdownDoc, record: OutcomeRecord) -> tuple[str, str]:
    row = row_for(record, list(OUTCOME_COLUMNS))
    text = doc.text
    if text and not text.endswith("\n"):
        text += _newline(doc)
    header = OUTCOMES_TEMPLATE[OUTCOMES_TEMPLATE.index("## Records") :]
    separator = "\n" if text.strip() else ""
    body = (OUTCOMES_TEMPLATE if not text.strip() else separator + header) + row + "\n"
    return text + body.replace("\n", _newline(doc)), row


def _newline(doc: MarkdownDoc) -> str:
    return "\r\n" if doc.lines and doc.lines[0].endswith("\r\n") else "\n"


def _write_or_fail(paths: MemoryPaths, text: str, record: OutcomeRecord, row: str) -> None:
    try:
        atomic_write(paths.outcomes, text, root=paths.root)
        written = read_text(paths.outcomes) or ""
    except OSError as exc:
        raise WriteFailedError(
            f"could not write {paths.outcomes}: {exc.strerror or exc}",
            record_text=row,
            data={"record": record.to_dict()},
        ) from exc
    if row not in written:
        raise WriteFailedError(
            f"{paths.outcomes} does not hold the new row after writing",
            record_text=row,
            data={"record": record.to_dict()},
        )
