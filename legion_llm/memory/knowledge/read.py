"""PATTERNS.md, ERRORS.md and PREFERENCES.md (spec sections 8, 9, 13): both formats read.

A file may hold the spec's table, `/legion:learn` heading entries, or both. Table rows and entries
become one kind of record; entries keep their own IDs (PAT-, PIT-, PRF-) and are never rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.memory.files import (
    not_utf8_warning,
    read_problem,
    read_text_keeping,
    undecodable_lines,
)
from legion_llm.memory.knowledge.learn_entries import LearnEntry, parse_learn_entries
from legion_llm.memory.outcomes.read import unparseable_warning
from legion_llm.memory.table import MarkdownDoc, TableBlock, parse_markdown
from legion_llm.records import split_list

DECISION_POINTS = (
    "review-verdict",
    "review-override",
    "agent-selection",
    "manual-edit",
    "fix-acceptance",
)
SIGNALS = ("positive", "negative", "corrective")


@dataclass(frozen=True)
class KnowledgeKind:
    """One knowledge-base file: its columns, ID prefix, template and how entries map to columns."""

    name: str  # patterns | errors | preferences
    file_name: str
    prefix: str
    columns: tuple[str, ...]
    headers: tuple[str, ...]
    template: str
    title_column: str  # the column a learn entry's title fills
    body_column: str  # the column a learn entry's body fills

    @property
    def text_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in ("id", "date", "branch", "tags"))


def _template(
    title: str, intro: str, section: str, headers: tuple[str, ...], separator: str
) -> str:
    return (
        f"# Memory — {title}\n\n{intro}\n"
        "Managed by memory-manager skill. Do not edit manually unless curating entries.\n\n"
        f"## {section}\n\n| " + " | ".join(headers) + f" |\n{separator}\n"
    )


PATTERNS = KnowledgeKind(
    "patterns", "PATTERNS.md", "P",
    ("id", "date", "branch", "pattern", "context", "reuse_criteria", "source", "tags"),
    ("ID", "Date", "Branch", "Pattern", "Context", "Reuse Criteria", "Source", "Tags"),
    _template(
        "Pattern Library",
        "Successful patterns distilled from agent outcomes. Each pattern captures what worked, "
        "under what conditions, and when to reuse it.",
        "Patterns",
        ("ID", "Date", "Branch", "Pattern", "Context", "Reuse Criteria", "Source", "Tags"),
        "|----|------|--------|---------|---------|----------------|--------|------|",
    ),
    "pattern", "context",
)  # fmt: skip
ERRORS = KnowledgeKind(
    "errors", "ERRORS.md", "E",
    ("id", "date", "branch", "error_signature", "fix", "agent", "resolved", "tags"),
    ("ID", "Date", "Branch", "Error Signature", "Fix", "Agent", "Resolved", "Tags"),
    _template(
        "Error Fixes",
        "Error signatures mapped to known fixes. When an agent encounters a matching error, it "
        "should try the documented fix before investigating from scratch.",
        "Errors",
        ("ID", "Date", "Branch", "Error Signature", "Fix", "Agent", "Resolved", "Tags"),
        "|----|------|--------|-----------------|-----|-------|----------|------|",
    ),
    "error_signature", "fix",
)  # fmt: skip
PREFERENCES = KnowledgeKind(
    "preferences", "PREFERENCES.md", "D",
    ("id", "date", "branch", "decision_point", "context", "proposed", "user_choice", "signal",
     "agent", "tags"),
    ("ID", "Date", "Branch", "Decision Point", "Context", "Proposed", "User Choice", "Signal",
     "Agent", "Tags"),
    _template(
        "User Preferences",
        "Decision signals from user interactions with agent proposals. Each record captures what "
        "was proposed, what the user chose, and the preference signal. Used by /legion:plan to "
        "improve agent and approach recommendations.",
        "Preferences",
        ("ID", "Date", "Branch", "Decision Point", "Context", "Proposed", "User Choice", "Signal",
         "Agent", "Tags"),
        "|----|------|--------|---------------|---------|----------|-------------|--------|-------|------|",
    ),
    "context", "user_choice",
)  # fmt: skip
KINDS = {kind.name: kind for kind in (PATTERNS, ERRORS, PREFERENCES)}


@dataclass
class KnowledgeRecord:
    """A table row or a learn entry. `values` holds every column of the kind (snake_case)."""

    kind: KnowledgeKind
    values: dict[str, str]
    format: str  # "table" | "learn"
    line_no: int | None = None
    entry: LearnEntry | None = None
    table: TableBlock | None = None  # the table a row stands in (its columns, for a rewrite)

    @property
    def id(self) -> str:
        return self.values.get("id", "")

    @property
    def date(self) -> str:
        return self.values.get("date", "")

    @property
    def branch(self) -> str:
        return self.values.get("branch") or "main"

    @property
    def tags(self) -> list[str]:
        return split_list(self.values.get("tags", ""))

    @property
    def resolved(self) -> bool:
        return self.values.get("resolved", "").strip().lower() in ("true", "yes", "1")

    @property
    def title(self) -> str:
        return self.values.get(self.kind.title_column, "")

    def text(self) -> str:
        """Every free-text column, for substring and keyword matching."""
        return "\n".join(self.values.get(c, "") for c in self.kind.text_columns)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {c: self.values.get(c, "") for c in self.kind.columns}
        data["branch"] = self.branch
        data["tags"] = self.tags
        if self.kind is ERRORS:
            data["resolved"] = self.resolved
        data["format"] = self.format
        if self.entry is not None:
            data["type"] = self.entry.fields.get("type", "")
            data["phase"] = self.entry.fields.get("phase", "")
        return data


@dataclass
class KnowledgeFile:
    kind: KnowledgeKind
    path: Path
    exists: bool
    records: list[KnowledgeRecord] = field(default_factory=list)
    doc: MarkdownDoc | None = None
    table: TableBlock | None = None  # the table new rows go into
    warnings: list[str] = field(default_factory=list)
    undecodable: dict[int, int] = field(default_factory=dict)  # line number -> bad byte

    def max_id(self) -> int:
        """The highest `P-NNN` (E-, D-) in any table row of the file, even one the reader skipped
        (inside a learn entry, say): IDs are never reused."""
        if self.doc is None:
            return 0
        pattern = re.compile(rf"^\s*\|\s*{self.kind.prefix}-(\d+)\s*\|", re.MULTILINE)
        return max((int(n) for n in pattern.findall(self.doc.text)), default=0)


def read_knowledge(kind: KnowledgeKind, path: Path) -> KnowledgeFile:
    """Missing: empty, silent. Unreadable or without any table or entry: empty, one warning. A line
    that is not UTF-8 is one warning; the other lines are read."""
    try:
        text = read_text_keeping(path)
    except OSError as exc:
        warning = f"Warning: {path.name} {read_problem(exc)}. Proceeding without memory."
        return KnowledgeFile(kind, path, True, warnings=[warning])
    if text is None:
        return KnowledgeFile(kind, path, False)
    return parse_knowledge(kind, path, text)


def parse_knowledge(kind: KnowledgeKind, path: Path, text: str) -> KnowledgeFile:
    entries = parse_learn_entries(text)
    inside_entries = {n for e in entries for n in range(e.first_line, e.last_line + 1)}
    doc = parse_markdown(text)
    result = KnowledgeFile(kind, path, True, doc=doc, undecodable=undecodable_lines(doc.lines))
    result.warnings += [not_utf8_warning(path.name, n, b) for n, b in result.undecodable.items()]
    skip = inside_entries | result.undecodable.keys()
    for table in doc.tables:
        if table.header_line in inside_entries or not _is_kind_table(kind, table.columns):
            continue
        result.table = table
        for line_no in table.row_lines:
            if line_no in skip:
                continue
            cells = doc.cells(table, line_no)
            if len(cells) < len(table.columns):
                result.warnings.append(
                    f"Warning: {path.name} line {line_no + 1} is not a valid row; skipped."
                )
                continue
            result.records.append(
                KnowledgeRecord(kind, _aliased(cells), "table", line_no, table=table)
            )
    result.records.extend(
        _entry_record(kind, e)
        for e in entries
        if not any(n in result.undecodable for n in range(e.first_line, e.last_line + 1))
    )
    if not result.records and result.table is None and text.strip() and "|" in text:
        warnings = [*result.warnings, unparseable_warning(path.name)]
        return KnowledgeFile(kind, path, True, warnings=warnings, undecodable=result.undecodable)
    return result


COLUMN_ALIASES = {
    "signature": "error_signature",
    "error": "error_signature",
    "choice": "user_choice",
}
# a column -> the option (CLI) and argument (MCP) that fills it, where they differ: a message
# about a field names it as the user gave it
OPTION_NAMES = {"error_signature": "signature"}


def option_name(column: str) -> str:
    """`error_signature` -> `--signature`, `reuse_criteria` -> `--reuse-criteria`."""
    return "--" + OPTION_NAMES.get(column, column).replace("_", "-")


def _aliased(cells: dict[str, str]) -> dict[str, str]:
    return {COLUMN_ALIASES.get(k, k): v for k, v in cells.items()}


def _is_kind_table(kind: KnowledgeKind, columns: list[str]) -> bool:
    known = {COLUMN_ALIASES.get(c, c) for c in columns} & set(kind.columns)
    return kind.title_column in known and len(known) >= 3


def _entry_record(kind: KnowledgeKind, entry: LearnEntry) -> KnowledgeRecord:
    values = {key: value for key, value in entry.fields.items() if key in kind.columns}
    values.update(id=entry.id, date=entry.date, tags=entry.fields.get("tags", ""))
    values[kind.title_column] = entry.title
    values.setdefault(kind.body_column, entry.body)
    if kind is ERRORS:
        values.setdefault("resolved", "true")  # a recorded pitfall states its known remedy
    return KnowledgeRecord(kind, values, "learn", entry.first_line, entry)
