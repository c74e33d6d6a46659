"""The row scan of a recall and a briefing (memory/outcomes/fastrecall.py) answers exactly what
the full parse and `recall` / `briefing` answer: the same records, weights, scores and order,
the same top agents, the same record count and the same warnings, on generated layouts (those it scans and those it must hand to the full parse)
and on every real markdown file read as an OUTCOMES.md."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from legion_llm.memory.outcomes.fastrecall import (
    OutcomeRows,
    RecallRead,
    brief_outcomes,
    recall_outcomes,
)
from legion_llm.memory.outcomes.read import OUTCOME_HEADER, OUTCOMES_TEMPLATE, read_outcomes
from legion_llm.memory.outcomes.recall import RecallQuery, briefing, recall
from tests.conftest import FIXTURES, corpus_files

TODAY = date(2026, 6, 15)
QUERIES = [
    RecallQuery(),
    RecallQuery(limit=1),
    RecallQuery(limit=3),
    RecallQuery(limit=None),
    RecallQuery(limit=0),
    RecallQuery(agent="dev"),
    RecallQuery(tags=["api", "Team"], limit=5),
    RecallQuery(task_type="BACKEND", branch="main"),
    RecallQuery(branch="feature/x", limit=None),
]


def answers(read: RecallRead) -> tuple[Any, ...]:
    return ([(s.record, s.recency_weight, s.score) for s in read.found], read.total, read.warnings)


def reference(path: Path, query: RecallQuery) -> tuple[Any, ...]:
    outcomes = read_outcomes(path)
    found = recall(outcomes.records, query, TODAY)
    return answers(RecallRead(found, len(outcomes.records), outcomes.warnings))


def assert_same(path: Path) -> None:
    for query in QUERIES:
        assert answers(recall_outcomes(path, query, TODAY)) == reference(path, query), query
    outcomes = read_outcomes(path)
    assert brief_outcomes(path, TODAY) == (briefing(outcomes, TODAY), outcomes.warnings)


def scanned(path: Path) -> bool:
    return (
        OutcomeRows.scan(path.name, path.read_bytes().decode("utf-8", "surrogateescape"))
        is not None
    )


# ------------------------------------------------------------------ generated layouts

CELL = st.sampled_from(
    ["", " ", "x", "api", "Team", "dev", "ops, dev", "dev , qa", "backend", "BACKEND, api",
     "main", "feature/x", "success", "", "dev,", "Partial", "FAILED", "done", "1", "3", "5", "9", "0", "02",
     "2026-06-14", "2026-06-01", "2026-03-20", "2025-01-01", "2026-06-14T09:00", "someday",
     "O-001", "O-002", "O-010", "PAT-4", "a \\| b", "back\\\\slash", "line<br>break", "<b>",
     "\\-", "\xa0nbsp\xa0", "tab\tbed", "ünïcode"]
)  # fmt: skip


def row_text(cells: list[str], closed: bool = True) -> str:
    return "| " + " | ".join(cells) + (" |" if closed else "")


ROW = st.builds(row_text, st.lists(CELL, min_size=11, max_size=11), st.booleans())
NARROW = st.builds(row_text, st.lists(CELL, min_size=1, max_size=10))
WIDE = st.builds(row_text, st.lists(CELL, min_size=12, max_size=14))
SIMPLE_LINE = st.one_of(ROW, ROW, ROW, NARROW, WIDE)


@st.composite
def simple_files(draw: st.DrawFn) -> str:
    """The common layout: canonical tables, rows of any cells, duplicates, narrow and wide rows,
    a second separator line, more tables after prose; CRLF or LF. (A separator after a row would
    make that row a header: another layout.)"""
    lines = draw(st.lists(SIMPLE_LINE, max_size=30))
    lines += draw(st.lists(st.sampled_from(lines), max_size=5)) if lines else []  # duplicates
    stray = "|---|---|\n" if draw(st.booleans()) else ""
    text = OUTCOMES_TEMPLATE + stray + "".join(line + "\n" for line in lines)
    if draw(st.booleans()):
        more = draw(st.lists(ROW, max_size=5))
        text += (
            "\nSome prose between tables.\n\n" + OUTCOME_HEADER + "".join(r + "\n" for r in more)
        )
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


OTHER_LINE = st.sampled_from(
    ["", "prose | with a pipe", "## Phase 2 — Shipped 2026-06-10", "agent: dev", "outcome: success",
     "```", "~~~", "   ```text", "- a list item", "# Heading", "\xa0| indented by nbsp |",
     "| ID | Date | Agent | Outcome | Summary |", "|----|------|-------|---------|---------|",
     "| Name | Value |", "|---|---|", "| A | B |", "\u2028", "caf\udce9 bytes"]
)  # fmt: skip


@st.composite
def any_files(draw: st.DrawFn) -> str:
    """Simple files with anything else spliced in: other headers, key:value sections, fences,
    prose, a table continued without a header, bytes that are not UTF-8."""
    lines = draw(simple_files()).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.one_of(OTHER_LINE, ROW)))
    return "\n".join(lines)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "OUTCOMES.md"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    return path


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(simple_files())
def test_the_common_layout_is_scanned_and_answers_the_same(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    assert scanned(path)
    assert_same(path)


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(any_files())
def test_any_layout_answers_the_same(tmp_path: Path, text: str) -> None:
    assert_same(write(tmp_path, text))


@pytest.mark.parametrize(
    "extra",
    [
        "\n```\n| O-900 | 2026-06-14 | main | 1 | 01-01 | dev | backend | failed | 5 | api | fenced |\n```\n",
        "\n## Phase 9 — Shipped 2026-06-10\nagent: dev\noutcome: failed\n",
        "\nProse.\n| O-901 | 2026-06-14 | main | 1 | 01-01 | dev | backend | failed | 5 | api | continued |\n",
        "\n| Name | Value |\n|---|---|\n| a | b |\n",
        "| O-902 | 2026-06-14 | main | 1 | 01-01 | dev | backend | failed | 5 | api | caf\udce9 |\n",
    ],
    ids=["fence", "key-value", "continued-without-header", "other-table", "not-utf8"],
)
def test_each_uncommon_layout_goes_to_the_full_parse(tmp_path: Path, extra: str) -> None:
    row = "| O-001 | 2026-06-14 | main | 1 | 01-01 | dev | backend | success | 2 | api | one |\n"
    path = write(tmp_path, OUTCOMES_TEMPLATE + row + extra)
    assert not scanned(path)
    assert_same(path)


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    assert_same(tmp_path / "OUTCOMES.md")
    folder = tmp_path / "memory" / "OUTCOMES.md"
    folder.mkdir(parents=True)  # a folder where the file should be: one warning, no records
    assert answers(recall_outcomes(folder, RecallQuery(), TODAY)) == reference(
        folder, RecallQuery()
    )


def test_a_large_log_is_scanned_and_answers_the_same(tmp_path: Path) -> None:
    agents = ["dev", "ops, dev", "qa"]
    piped = " \\| piped"
    rows = [
        f"| O-{i:03d} | 2026-{1 + i % 6:02d}-{1 + i % 28:02d} | main | {i % 9} | 01-01 | "
        f"{agents[i % 3]} | backend | {['success', 'partial', 'failed'][i % 7 % 3]} | {1 + i % 5} | "
        f"api, team | Outcome {i}{piped if i % 25 == 0 else ''} |\n"
        for i in range(1, 5001)
    ]
    path = write(tmp_path, OUTCOMES_TEMPLATE + "".join(rows))
    assert scanned(path)
    assert_same(path)


# ------------------------------------------------------------------ real files


def real_markdown() -> list[Path]:
    found = sorted(FIXTURES.rglob("*.md"))
    found += [p for p in corpus_files("*") if ".md" in p.name]
    return found


@pytest.mark.corpus
def test_every_real_markdown_file_read_as_an_outcomes_log_answers_the_same(tmp_path: Path) -> None:
    files = real_markdown()
    scanned_files = 0
    for source in files:
        path = write(tmp_path, source.read_bytes().decode("utf-8", "surrogateescape"))
        assert_same(path)
        scanned_files += scanned(path)
    assert scanned_files >= 10  # the real outcome logs and fixtures take the scan
