"""OUTCOMES.md and ARCHIVE.md: every layout real projects use, read into OutcomeRecords.

Layouts accepted: the canonical 11 columns; the legacy 10 columns without Branch; tables without
an ID column; columns in any order (located by header name); a table interrupted by other
markdown and continued without a header; and `## Phase N — Shipped <date>` sections followed by
`key: value` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from legion_llm.memory.files import (
    not_utf8_warning,
    read_problem,
    read_text_keeping,
    undecodable_lines,
)
from legion_llm.memory.gcpause import gc_paused
from legion_llm.memory.table import MarkdownDoc, TableBlock, parse_markdown
from legion_llm.records import OutcomeRecord

OUTCOME_COLUMNS = (
    "id",
    "date",
    "branch",
    "phase",
    "plan",
    "agent",
    "task_type",
    "outcome",
    "importance",
    "tags",
    "summary",
)
OUTCOME_HEADER = (
    "| ID | Date | Branch | Phase | Plan | Agent | Task Type | Outcome | Importance | Tags | Summary |\n"
    "|----|------|--------|-------|------|-------|-----------|---------|------------|------|---------|\n"
)
OUTCOMES_TEMPLATE = (
    "# Memory — Outcome Log\n\n"
    "Records agent performance and task outcomes for cross-session learning.\n"
    "Managed by memory-manager skill. Do not edit manually unless pruning old records.\n\n"
    "## Records\n\n" + OUTCOME_HEADER
)
ARCHIVE_TEMPLATE = (
    "# Memory — Archived Outcomes\n\n"
    "Pruned records from OUTCOMES.md. Preserved for historical reference.\n"
    "Records archived by memory-manager prune operation. Do not edit manually.\n\n"
    "## Archived Records\n\n" + OUTCOME_HEADER
)
_ALIASES = {"result": "outcome", "status": "outcome", "type": "task_type"}
_BASE_IMPORTANCE = {"failed": 5, "partial": 3, "success": 2}
_KV_HEADING_RE = re.compile(r"^#{2,4}\s+(.+?)\s*$")
_KV_LINE_RE = re.compile(r"^\s*([A-Za-z][\w -]*?)\s*:\s*(.*?)\s*$")
_KV_RECORD_KEYS = {"task_type", "agent", "outcome", "importance", "summary", "tags"}
_PHASE_RE = re.compile(r"\bphase\s+(\d+(?:\.\d+)?)", re.IGNORECASE)
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def unparseable_warning(name: str) -> str:
    return f"Warning: {name} could not be parsed. Proceeding without memory."


@dataclass
class OutcomesFile:
    """One parsed OUTCOMES.md / ARCHIVE.md. `exists` False means the file is absent."""

    path: Path
    exists: bool
    parseable: bool
    records: list[OutcomeRecord] = field(default_factory=list)
    doc: MarkdownDoc | None = None
    tables: list[TableBlock] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _table_at: dict[int, TableBlock] = field(default_factory=dict, repr=False)

    @property
    def last_table(self) -> TableBlock | None:
        return self.tables[-1] if self.tables else None

    def cells_at(self, line_no: int) -> dict[str, str]:
        """The row at `line_no` as written: decoded cells keyed by its table's columns."""
        assert self.doc is not None
        if not self._table_at:
            self._table_at = {n: t for t in self.tables for n in t.row_lines}
        return self.doc.cells(self._table_at[line_no], line_no)


def normalise_column(key: str) -> str:
    return _ALIASES.get(key, key)


def is_outcome_table(columns: list[str]) -> bool:
    known = [c for c in columns if c in OUTCOME_COLUMNS]
    return len(known) >= 2 and bool({"outcome", "agent", "summary"} & set(known))


def base_importance(outcome: str) -> int:
    return _BASE_IMPORTANCE.get(outcome, 2)


def importance_of(cell: str, outcome: str) -> int:
    """A row's importance: its Importance cell (clamped to 1-5), else its outcome's base."""
    if cell.isdigit():
        return min(5, max(1, int(cell)))
    return base_importance(outcome)


def record_from_fields(fields: list[str], line_no: int | None) -> OutcomeRecord:
    """Cell values in OUTCOME_COLUMNS order ("" where the file has no such column) -> record."""
    id_, when, branch, phase, plan, agent, task_type, outcome, importance, tags, summary = fields
    outcome = outcome.lower()
    return OutcomeRecord(
        id_ or None, when, branch or "main", phase, plan, agent, task_type, outcome,
        importance_of(importance, outcome), tags, summary, line_no,
    )  # fmt: skip


def unreadable_warning(name: str, exc: OSError) -> str:
    return f"Warning: {name} {read_problem(exc)}. Proceeding without memory."


def read_outcomes(path: Path) -> OutcomesFile:
    """Parse one outcomes file. Missing: empty, no warning. Unreadable or unparseable: empty plus
    one warning saying why. A line that is not UTF-8 is one warning; the other lines are read
    (and a rewrite keeps its bytes: see `read_text_keeping`)."""
    try:
        text = read_text_keeping(path)
    except OSError as exc:
        return OutcomesFile(path, True, False, warnings=[unreadable_warning(path.name, exc)])
    if text is None:
        return OutcomesFile(path, False, True)
    return parse_outcomes(path, text)


def parse_outcomes(path: Path, text: str) -> OutcomesFile:
    """Parse outcomes text. The garbage collector is paused: 100,000 rows build many small
    objects that it would otherwise rescan again and again."""
    with gc_paused():
        return _parse_outcomes(path, text)


def _parse_outcomes(path: Path, text: str) -> OutcomesFile:
    doc = parse_markdown(text)
    result = OutcomesFile(path, True, True, doc=doc)
    bad = undecodable_lines(doc.lines)
    result.warnings += [not_utf8_warning(path.name, n, byte) for n, byte in bad.items()]
    for table in doc.tables:
        table.columns = [normalise_column(c) for c in table.columns]
        if is_outcome_table(table.columns):
            result.tables.append(table)
    seen: set[str] = set()
    for table in result.tables:
        positions = [
            table.columns.index(c) if c in table.columns else None for c in OUTCOME_COLUMNS
        ]
        canonical = table.columns == list(OUTCOME_COLUMNS)
        width = len(table.columns)
        for line_no in table.row_lines:
            line = doc.lines[line_no].strip()
            if line in seen or line_no in bad:
                continue  # the same row twice (a merge, an interrupted prune): count it once
            seen.add(line)
            values = doc.values(table, line_no)
            if len(values) < width:
                result.warnings.append(
                    f"Warning: {path.name} line {line_no + 1} is not a valid row; skipped."
                )
                continue
            fields = (
                values if canonical else [values[p] if p is not None else "" for p in positions]
            )
            result.records.append(record_from_fields(fields, line_no))
    result.records.extend(_kv_records(doc, bad))
    if not result.tables and not result.records and text.strip() and not _only_headings(doc):
        warnings = [*result.warnings, unparseable_warning(path.name)]
        return OutcomesFile(path, True, False, warnings=warnings)
    return result


def _only_headings(doc: MarkdownDoc) -> bool:
    """A file holding nothing but headings and prose without any table: an empty log."""
    return not any(line.lstrip().startswith("|") for line in doc.lines) and any(
        line.startswith("#") for line in doc.lines
    )


def is_kv_line(line: str) -> bool:
    """A `key: value` line of a key:value section (not a row, heading or list item)."""
    return bool(_KV_LINE_RE.match(line)) and not line.lstrip().startswith(("|", "#", "-", "*"))


def _kv_records(doc: MarkdownDoc, bad: dict[int, int]) -> list[OutcomeRecord]:
    """`## Phase 2 — Shipped 2026-10-10` followed by `key: value` lines -> one record each.
    A line that is not UTF-8 ends the section."""
    records: list[OutcomeRecord] = []
    lines = doc.lines
    for i, line in enumerate(lines):
        heading = _KV_HEADING_RE.match(line) if line.startswith("#") and i not in bad else None
        if not heading:
            continue
        values: dict[str, str] = {}
        for j, follow in enumerate(lines[i + 1 :], start=i + 1):
            kv = _KV_LINE_RE.match(follow)
            if not kv or j in bad or not is_kv_line(follow):
                break
            values[normalise_column(kv.group(1).strip().lower().replace(" ", "_"))] = kv.group(2)
        if not _KV_RECORD_KEYS & values.keys():
            continue
        title = heading.group(1)
        phase = _PHASE_RE.search(title)
        when = _DATE_RE.search(title)
        values.setdefault("phase", phase.group(1) if phase else "")
        values.setdefault("date", when.group(0) if when else "")
        values.setdefault("summary", title)
        records.append(record_from_fields([values.get(c, "") for c in OUTCOME_COLUMNS], None))
    return records
