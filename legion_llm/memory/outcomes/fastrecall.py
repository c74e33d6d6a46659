"""Recall over a large OUTCOMES.md without building a record per row.

A recall needs, of every row, only what it is scored and filtered by (Date, Outcome and
Importance; Tags, Agent, Task Type and Branch when a filter asks), and a whole record only for
the rows that can be in the answer. In the common layout (every table an outcome table with the
same columns, every run of table lines opened by its header, no fenced block, no `key: value`
section, every line UTF-8) the rows are found and cut into cells by operations over the whole
list of lines (in C, not a Python step per row), each distinct cell value is interpreted once,
and the rows that can be in the answer are decoded by the table codec exactly as the full parse
decodes them (memory/table.py, read.py). Any other layout returns None and the caller parses the
file in full. Both give the same answer, total and warnings (tests/memory/test_fastrecall.py
compares them over generated layouts and the real files).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from heapq import nlargest
from itertools import compress, repeat
from operator import and_, contains, ge, gt, itemgetter, le, lt, methodcaller, not_
from pathlib import Path
from typing import Any

from legion_llm.memory.files import read_text_keeping, undecodable_lines
from legion_llm.memory.gcpause import gc_paused
from legion_llm.memory.outcomes.read import (
    OUTCOME_COLUMNS,
    OutcomesFile,
    importance_of,
    is_kv_line,
    is_outcome_table,
    normalise_column,
    parse_outcomes,
    record_from_fields,
    unreadable_warning,
)
from legion_llm.memory.outcomes.recall import (
    RecallQuery,
    briefing,
    first_ranked,
    matches,
    recall,
    scored_dict,
)
from legion_llm.memory.outcomes.scoring import MIN_DECAY_SCORE, recency_weight
from legion_llm.memory.table import (
    MarkdownDoc,
    TableBlock,
    column_key,
    decode_cell,
    is_separator_line,
    opens_fence,
    split_row,
)
from legion_llm.records import OutcomeRecord, Scored, split_list

# A line that may be a separator row (nothing but pipes, colons, dashes and spaces); each one
# found is then checked with the codec's own rule. The leading newline lets the regex engine
# jump from line to line instead of trying every position of the file.
_SEPARATOR_CANDIDATE_RE = re.compile(r"\n[^\S\n]*\|(?:[^\S\n]|[|:-])*(?=\n|$)")
_FILTERED = ("tags", "agent", "task_type", "branch")
_SCORED = ("date", "importance", "outcome")  # the cells a score is computed from
_OPENS_ROW = methodcaller("startswith", "|")


@dataclass
class RecallRead:
    """A recall read straight from a file: the answer, the file's record count, its warnings."""

    found: list[Scored]
    total: int
    warnings: list[str]


def recall_outcomes(path: Path, query: RecallQuery, today: date) -> RecallRead:
    """What `recall(read_outcomes(path).records, query, today)` answers, with the record count
    and the warnings of `read_outcomes`; by the row scan when the layout allows it."""
    try:
        text = read_text_keeping(path)
    except OSError as exc:
        return RecallRead([], 0, [unreadable_warning(path.name, exc)])
    if text is None:
        return RecallRead([], 0, [])
    with gc_paused():
        rows = OutcomeRows.scan(path.name, text)
        if rows is not None:
            return rows.recall(query, today)
    outcomes = parse_outcomes(path, text)
    found = recall(outcomes.records, query, today)
    return RecallRead(found, len(outcomes.records), outcomes.warnings)


def brief_outcomes(path: Path, today: date) -> tuple[dict[str, Any], list[str]]:
    """What `briefing(read_outcomes(path), today)` answers, with the warnings of
    `read_outcomes`; by the row scan when the layout allows it."""
    try:
        text = read_text_keeping(path)
    except OSError as exc:
        return briefing(OutcomesFile(path, True, False), today), [
            unreadable_warning(path.name, exc)
        ]
    if text is None:
        return briefing(OutcomesFile(path, False, True), today), []
    with gc_paused():
        rows = OutcomeRows.scan(path.name, text)
        if rows is not None:
            return rows.briefing(today)
    outcomes = parse_outcomes(path, text)
    return briefing(outcomes, today), outcomes.warnings


@dataclass
class OutcomeRows:
    """The distinct row lines of a file's outcome tables in file order (where each first occurs)."""

    name: str
    doc: MarkdownDoc
    table: TableBlock  # the columns every table of the file has (its rows are not listed)
    line_numbers: list[int]
    rows: list[str]  # each row line stripped

    @classmethod
    def scan(cls, name: str, text: str) -> OutcomeRows | None:
        """The rows of `text` when its layout is the common one, else None."""
        lines = text.split("\n")
        if lines and not lines[-1]:
            lines.pop()  # as memory/table.py splits: no empty last line
        pipe = list(map(_OPENS_ROW, lines))  # a table line: "|" after any whitespace
        for i in compress(range(len(lines)), map(not_, pipe)):
            pipe[i] = lines[i].lstrip().startswith("|")
        others = list(compress(range(len(lines)), map(not_, pipe)))  # few lines
        if undecodable_lines(lines) or any(opens_fence(lines[i]) for i in others):
            return None  # a fence opens only on a line that is not a table line
        headings = (i for i in others if lines[i].startswith("#"))
        if any(i + 1 < len(lines) and is_kv_line(lines[i + 1]) for i in headings):
            return None  # maybe a key:value record
        separators = _separator_lines(text, lines)
        headers = [
            s - 1 for s in sorted(separators) if s and pipe[s - 1] and s - 1 not in separators
        ]
        opened = set(headers)
        starts = compress(range(len(lines)), map(gt, pipe, [False, *pipe[:-1]]))
        if not headers or any(start not in opened for start in starts):
            return None  # a run of table lines without its header: the full parse decides
        layouts = {
            tuple(normalise_column(column_key(c)) for c in split_row(lines[h]) or [])
            for h in headers
        }
        columns = list(layouts.pop())
        if layouts or not is_outcome_table(columns):
            return None
        for skipped in opened | separators:
            pipe[skipped] = False
        numbers = list(compress(range(len(lines)), pipe))
        rows = list(map(str.strip, map(lines.__getitem__, numbers)))
        if len(set(rows)) < len(rows):  # the same row twice: counted once, where it first is
            first = dict(zip(reversed(rows), reversed(numbers), strict=True))
            rows = list(dict.fromkeys(rows))
            numbers = list(map(first.__getitem__, rows))
        found = cls(
            name, MarkdownDoc(text, lines, []), TableBlock(columns, headers[0]), numbers, rows
        )
        return found if found._reads_no_last_column() else None

    def _reads_no_last_column(self) -> bool:
        """The last column takes a row's extra cells: the columns read here must be others."""
        last = len(self.table.columns) - 1
        return all(self._position(c) != last for c in (*_SCORED, *_FILTERED))

    def _position(self, column: str) -> int | None:
        columns = self.table.columns
        return columns.index(column) if column in columns else None

    def _valid(self) -> tuple[list[bool], list[str]]:
        """Whether each row has at least one cell per column, and a warning for each narrower
        row, as the full parse words it."""
        rows = self.rows
        width = len(self.table.columns)
        # the cells split_row cuts: one per pipe, less the empty one after a closing pipe; only
        # a row of `width` pipes or fewer can be narrow (and a row of one pipe is, either way)
        sizes = list(map(methodcaller("count", "|"), rows))
        for index in compress(range(len(rows)), map(le, sizes, repeat(width))):
            sizes[index] -= rows[index].endswith("|")
        for index, raw in self._escaped.items():
            sizes[index] = len(raw)
        warnings = [
            f"Warning: {self.name} line {self.line_numbers[index] + 1} is not a valid row; skipped."
            for index in compress(range(len(rows)), map(lt, sizes, repeat(width)))
        ]
        return list(map(ge, sizes, repeat(width))), warnings

    @cached_property
    def _escaped(self) -> dict[int, list[str]]:
        """The raw cells of each row holding a backslash or `<`, as the codec splits it (a
        `\\|` is no cell boundary), by row index: their cells are decoded one by one."""
        rows, indexes = self.rows, range(len(self.rows))
        marked: set[int] = set()
        for char in ("\\", "<"):
            if char in self.doc.text:
                marked.update(compress(indexes, map(contains, rows, repeat(char))))
        return {i: split_row(rows[i]) or [] for i in sorted(marked)}

    def _cells(self, valid: list[bool], columns: tuple[str, ...]) -> list[list[str]]:
        """Of each valid row, its cells up to the last of `columns` (raw; decoded by the codec
        where the row holds a backslash or `<`), at index position + 1."""
        last = max((p for p in map(self._position, columns) if p is not None), default=0)
        cells = list(map(methodcaller("split", "|", last + 2), self.rows))  # "", cells, the rest
        for index, raw in self._escaped.items():  # decoded as MarkdownDoc.values decodes
            cells[index] = ["", *map(decode_cell, raw[: last + 1])]
        return list(compress(cells, valid))

    def _column(self, cells: list[list[str]], name: str) -> Iterator[str]:
        """One column's cells as cut (untrimmed); "" for every row when the table has none."""
        position = self._position(name)
        return repeat("", len(cells)) if position is None else map(itemgetter(position + 1), cells)

    def record(self, index: int) -> OutcomeRecord:
        """Row `index` as the full parse builds it."""
        line_no = self.line_numbers[index]
        values = self.doc.values(self.table, line_no)
        if self.table.columns != list(OUTCOME_COLUMNS):
            values = [
                values[p] if p is not None else "" for p in map(self._position, OUTCOME_COLUMNS)
            ]
        return record_from_fields(values, line_no)

    def _passing(self, cells: list[list[str]], query: RecallQuery) -> Iterator[bool]:
        """Whether each row passes the query's filters, decided once per distinct set of the
        filtered cells, on a record built from them as the full parse builds it."""
        keys = list(zip(*(self._column(cells, name) for name in _FILTERED), strict=True))
        verdicts: dict[tuple[str, ...], bool] = {}
        for key in set(keys):
            tags, agent, task_type, branch = (cell.strip() for cell in key)
            values = dict.fromkeys(OUTCOME_COLUMNS, "")
            values.update(tags=tags, agent=agent, task_type=task_type, branch=branch)
            verdicts[key] = matches(record_from_fields(list(values.values()), None), query)
        return map(verdicts.__getitem__, keys)

    def recall(self, query: RecallQuery, today: date) -> RecallRead:
        """`recall` over these rows: the same scores, cut, ties and order."""
        is_valid, warnings = self._valid()
        valid = list(compress(range(len(self.rows)), is_valid))
        filtered = query.tags or query.agent or query.task_type or query.branch
        cells = self._cells(is_valid, (*_SCORED, "id", *(_FILTERED if filtered else ())))
        dates, importances, outcomes = (self._column(cells, name) for name in _SCORED)
        graded = list(zip(dates, importances, outcomes, strict=True))
        score_of = {key: _score(*key, today) for key in set(graded)}
        scores = list(map(score_of.__getitem__, graded))
        eligible = map(ge, scores, repeat(MIN_DECAY_SCORE))
        if filtered:
            eligible = map(and_, eligible, self._passing(cells, query))
        chosen = list(compress(range(len(scores)), eligible))
        if query.limit is not None and 0 < query.limit < len(chosen):
            boundary = nlargest(query.limit, map(scores.__getitem__, chosen))[-1]
            chosen = list(
                compress(chosen, map(ge, map(scores.__getitem__, chosen), repeat(boundary)))
            )
        # recall's cut_at_limit (every row scoring at least the limit-th score), sorted as recall
        # sorts (best first, file order among equals), without sorting the rest
        cut = sorted(
            zip(map(scores.__getitem__, chosen), chosen, strict=True),
            key=itemgetter(0),
            reverse=True,
        )
        keys = {
            i: (self._cell(cells, i, "date"), self._cell(cells, i, "id") or None) for _, i in cut
        }
        ranked = first_ranked(cut, query.limit, keys.__getitem__)
        records = [(score, self.record(valid[i])) for score, i in ranked]
        found = [Scored(r, recency_weight(r.date, today), score) for score, r in records]
        return RecallRead(found, len(valid), warnings)

    def briefing(self, today: date) -> tuple[dict[str, Any], list[str]]:
        """`briefing` over these rows: the same recent outcomes, top agents and total."""
        recent = self.recall(RecallQuery(limit=5), today)
        is_valid, _ = self._valid()
        cells = self._cells(is_valid, ("agent", "importance", "outcome"))
        columns = (self._column(cells, name) for name in ("agent", "importance", "outcome"))
        tallies: dict[str, list[int]] = {}  # agent -> [records, successes, importance summed]
        for (agent, importance, outcome), count in Counter(zip(*columns, strict=True)).items():
            outcome = outcome.strip().lower()
            weight = importance_of(importance.strip(), outcome)
            for name in split_list(agent.strip()):
                tally = tallies.setdefault(name, [0, 0, 0])
                tally[0] += count
                tally[1] += count * (outcome == "success")
                tally[2] += count * weight
        top = sorted(tallies.items(), key=lambda kv: (-kv[1][0], kv[0]))[:3]
        data = {
            "recent_outcomes": [scored_dict(s) for s in recent.found],
            "top_agents": [
                {
                    "agent": agent,
                    "total_tasks": total,
                    "success_rate": round(successes / total, 4),
                    "avg_importance": round(summed / total, 4),
                }
                for agent, (total, successes, summed) in top
            ],
            "total_records": recent.total,
        }
        return data, recent.warnings

    def _cell(self, cells: list[list[str]], index: int, name: str) -> str:
        position = self._position(name)
        return "" if position is None else cells[index][position + 1].strip()


def _score(date_cell: str, importance_cell: str, outcome_cell: str, today: date) -> float:
    """A row's decay score from its cells, as recall computes it from the record."""
    importance = importance_of(importance_cell.strip(), outcome_cell.strip().lower())
    return round(importance * recency_weight(date_cell.strip(), today), 4)


def _separator_lines(text: str, lines: list[str]) -> set[int]:
    """Line numbers of the separator rows, by the codec's rule."""
    found = {0} if lines and is_separator_line(lines[0]) else set()
    line, offset = 0, 0
    for match in _SEPARATOR_CANDIDATE_RE.finditer(text):
        line += text.count("\n", offset, match.start() + 1)
        offset = match.start() + 1
        if is_separator_line(lines[line]):
            found.add(line)
    return found
