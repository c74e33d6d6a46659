from __future__ import annotations

import errno
import os
from datetime import date
from pathlib import Path

import pytest

from legion_llm.errors import InputError, WriteFailedError
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE, read_outcomes
from legion_llm.memory.outcomes.store import (
    OutcomeInput,
    add_outcome,
    compute_importance,
    resolve_task_type,
)
from legion_llm.project import MemoryPaths

TODAY = date(2026, 3, 10)
CATALOG = """# Agent Catalog

## Section 1: Agent Catalog

### Engineering Division (2 agents)

| ID | File | Specialty | Task Types |
|----|------|-----------|------------|
| eng-backend | `a.md` | APIs | backend, api-design |
| eng-empty | `b.md` | Nothing |  |

## Section 2: Intent Routing

| ID | File | Specialty | Task Types |
|----|------|-----------|------------|
| not-an-agent | `x.md` | routing table | routing |
"""


def item(**overrides: object) -> OutcomeInput:
    values: dict[str, object] = dict(
        phase="2", plan="02-01", agent="eng-backend", outcome="success", summary="Did it",
        task_type="backend", branch="main",
    )  # fmt: skip
    values.update(overrides)
    return OutcomeInput(**values)  # type: ignore[arg-type]


def store(root: Path, **overrides: object) -> dict[str, object]:
    stored = add_outcome(
        MemoryPaths(root), item(**overrides), today=TODAY, catalog_file=root / "C.md"
    )
    return stored.record.to_dict()


def test_first_store_creates_the_exact_header_template(tmp_path: Path) -> None:
    record = store(tmp_path)
    text = (tmp_path / ".planning/memory/OUTCOMES.md").read_text()
    assert text == OUTCOMES_TEMPLATE + (
        "| O-001 | 2026-03-10 | main | 2 | 02-01 | eng-backend | backend | success | 3 |  | Did it |\n"
    )
    assert record["importance"] == 3  # standard success 2, +1 first time this agent does backend


def test_next_id_is_highest_in_outcomes_and_archive_plus_one(tmp_path: Path) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    row = "| O-{n} | 2026-01-01 | main | 1 | 01-01 | a | t | success | 2 | x | s |\n"
    (memory / "OUTCOMES.md").write_text(
        OUTCOMES_TEMPLATE + row.format(n="004") + row.format(n="002")
    )
    (memory / "ARCHIVE.md").write_text(OUTCOMES_TEMPLATE + row.format(n="007"))
    assert store(tmp_path)["id"] == "O-008"


def test_ids_pass_999_without_losing_padding(tmp_path: Path) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    row = "| O-999 | 2026-01-01 | main | 1 | 01-01 | a | t | success | 2 | x | s |\n"
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + row)
    assert store(tmp_path)["id"] == "O-1000"
    assert store(tmp_path)["id"] == "O-1001"


def test_untouched_bytes_stay_and_crlf_is_kept(tmp_path: Path) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    before = (
        OUTCOMES_TEMPLATE
        + "| O-001 | 2026-01-01 | main | 1 | 01-01 | a | t | success | 2 | x | s |\n"
        + "\n## Notes\nhand-written note  \n"
    ).replace("\n", "\r\n")
    (memory / "OUTCOMES.md").write_bytes(before.encode())
    store(tmp_path)
    after = (memory / "OUTCOMES.md").read_bytes().decode()
    new_row = "| O-002 | 2026-03-10 | main | 2 | 02-01 | eng-backend | backend | success | 3 |  | Did it |\r\n"
    cut = before.index("\r\n## Notes")
    assert after == before[:cut] + new_row + before[cut:]


def test_legacy_table_gets_a_row_in_its_own_columns(tmp_path: Path) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "OUTCOMES.md").write_text(
        "| ID | Date | Phase | Plan | Agent | Task Type | Outcome | Importance | Tags | Summary |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n"
        "| O-001 | 2026-01-01 | 1 | 01-01 | a | t | success | 2 | x | s |\n"
    )
    store(tmp_path)
    records = read_outcomes(memory / "OUTCOMES.md").records
    assert [r.id for r in records] == ["O-001", "O-002"]
    assert records[1].summary == "Did it"


def test_pipes_and_newlines_in_fields_round_trip(tmp_path: Path) -> None:
    summary = "a | b\nsecond line \\ with <br> and `x \\| y`"
    store(tmp_path, summary=summary, tags=["t|1", "t2"])
    [record] = read_outcomes(tmp_path / ".planning/memory/OUTCOMES.md").records
    assert record.summary == summary
    assert record.tags == ["t|1", "t2"]


@pytest.mark.parametrize(
    ("overrides", "first_time", "expected"),
    [
        ({"outcome": "failed"}, False, 5),
        ({"escalated": True}, False, 4),
        ({"outcome": "partial"}, False, 3),
        ({"review_cycles": 2}, False, 3),
        ({}, False, 2),
        ({"trivial": True}, False, 1),
        ({"trivial": True}, True, 2),
        ({"cross_division": True, "blockers": 3}, True, 5),
        ({"outcome": "failed", "cross_division": True}, True, 5),
        ({"importance": 9}, False, 5),
        ({"importance": 0}, False, 1),
    ],
)
def test_importance(overrides: dict[str, object], first_time: bool, expected: int) -> None:
    data = item(**overrides)
    assert compute_importance(data, first_time=first_time) == expected


def test_first_time_is_computed_from_existing_records(tmp_path: Path) -> None:
    assert store(tmp_path)["importance"] == 3
    assert store(tmp_path)["importance"] == 2
    assert store(tmp_path, task_type="frontend")["importance"] == 3


def test_task_type_inference_chain(tmp_path: Path) -> None:
    catalog = tmp_path / "CATALOG.md"
    catalog.write_text(CATALOG)
    assert resolve_task_type("frontend", "eng-backend", catalog) == "frontend"
    assert resolve_task_type(None, "eng-backend", catalog) == "backend"
    assert resolve_task_type("  ", "eng-backend, other", catalog) == "backend"
    assert resolve_task_type(None, "eng-empty", catalog) == "general"
    assert resolve_task_type(None, "not-an-agent", catalog) == "general"
    assert resolve_task_type(None, "autonomous", catalog) == "general"
    assert resolve_task_type(None, "eng-backend", tmp_path / "missing.md") == "general"


@pytest.mark.parametrize("field", ["phase", "plan", "agent", "summary"])
def test_empty_required_fields_are_refused(tmp_path: Path, field: str) -> None:
    with pytest.raises(InputError):
        store(tmp_path, **{field: " "})
    assert not (tmp_path / ".planning/memory/OUTCOMES.md").exists()


def test_storing_into_an_unparseable_file_refuses_and_leaves_it(tmp_path: Path) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "OUTCOMES.md").write_text("| broken |\n")
    with pytest.raises(InputError):
        store(tmp_path)
    assert (memory / "OUTCOMES.md").read_text() == "| broken |\n"


def test_write_failure_keeps_the_old_file_and_carries_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store(tmp_path)
    path = tmp_path / ".planning/memory/OUTCOMES.md"
    before = path.read_bytes()

    def disk_full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(WriteFailedError) as caught:
        store(tmp_path, summary="lost?")
    assert path.read_bytes() == before
    assert "| O-002 |" in caught.value.record_text and "lost?" in caught.value.record_text
    assert caught.value.data["record"]["summary"] == "lost?"
    assert [p.name for p in path.parent.iterdir()] == ["OUTCOMES.md"]  # no temp file left


@pytest.mark.parametrize(
    "archive",
    [
        b"## Phase 1 \xe9 Shipped 2026-01-01\nagent: a\n| O-050 | x |\n",
        b"| just | garbage |\nno table\n",
    ],
)
def test_an_unreadable_archive_stops_the_store_instead_of_reusing_ids(
    tmp_path: Path, archive: bytes
) -> None:
    memory = tmp_path / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "ARCHIVE.md").write_bytes(archive)
    with pytest.raises(InputError, match=r"ARCHIVE\.md (could not be parsed|line 1 is not UTF-8)"):
        store(tmp_path)
    assert not (memory / "OUTCOMES.md").exists()


def test_a_read_only_log_is_not_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rename of an atomic write would replace a file its owner made read-only."""
    store(tmp_path)
    path = tmp_path / ".planning/memory/OUTCOMES.md"
    before = path.read_bytes()
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode, **kw: False if Path(p).name == path.name else real_access(p, mode, **kw),
    )
    with pytest.raises(WriteFailedError, match="Permission denied"):
        store(tmp_path, summary="not written")
    assert path.read_bytes() == before
