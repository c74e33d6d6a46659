from __future__ import annotations

import multiprocessing
import os
from datetime import date
from pathlib import Path

import pytest

from legion_llm.config import Settings, load_settings
from legion_llm.errors import WriteFailedError
from legion_llm.memory.outcomes import prune as prune_module
from legion_llm.memory.outcomes.prune import NOTHING_TO_PRUNE, prune
from legion_llm.memory.outcomes.read import ARCHIVE_TEMPLATE, OUTCOMES_TEMPLATE, read_outcomes
from legion_llm.project import MemoryPaths

TODAY = date(2026, 6, 30)
ROWS = [
    # id, date, phase, importance
    ("O-001", "2026-01-01", "1", 2),  # old, low: candidate
    ("O-002", "2026-01-02", "1", 4),  # old, high: preserved
    ("O-003", "2026-01-03", "3", 3),  # old, current phase: preserved
    ("O-004", "2026-06-20", "2", 1),  # recent: kept
    ("O-005", "2026-02-01", "2", 3),  # old, low: candidate
    ("O-006", "bad date", "2", 1),  # age unknown: kept
]


def make_project(root: Path, rows: list[tuple[str, str, str, int]] = ROWS) -> MemoryPaths:
    paths = MemoryPaths(root)
    paths.memory_dir.mkdir(parents=True)
    body = "".join(
        f"| {i} | {d} | main | {p} | 0{p}-01 | agent | t | success | {imp} | x | row {i} |\n"
        for i, d, p, imp in rows
    )
    paths.outcomes.write_text(OUTCOMES_TEMPLATE + body + "\ntrailing note\n")
    paths.state.write_text(
        "# Project State\n\n## Current Position\n- **Phase**: 3 of 5 (executing)\n"
    )
    return paths


def ids(path: Path) -> list[str | None]:
    return [r.id for r in read_outcomes(path).records]


def test_prune_moves_only_old_low_importance_records_of_other_phases(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    report = prune(paths, Settings(), TODAY)
    assert report.applied
    assert ids(paths.outcomes) == ["O-002", "O-003", "O-004", "O-006"]
    assert ids(paths.archive) == ["O-001", "O-005"]
    assert paths.archive.read_text().startswith(ARCHIVE_TEMPLATE)
    assert paths.outcomes.read_text().endswith("\ntrailing note\n")
    assert report.text() == (
        "Pruned 2 records → .planning/memory/ARCHIVE.md\n"
        "Remaining: 4 active records\n"
        "Preserved: 1 high-importance (4-5), 1 current-phase\n"
        "Archive total: 2 records"
    )


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    before = paths.outcomes.read_bytes()
    report = prune(paths, Settings(), TODAY, dry_run=True)
    assert [r.id for r in report.plan.candidates] == ["O-001", "O-005"]
    assert report.text().startswith("Would prune 2 records")
    assert paths.outcomes.read_bytes() == before and not paths.archive.exists()


def test_age_threshold_comes_from_settings(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    report = prune(paths, Settings(prune_age_days=160), TODAY)
    assert [r.id for r in report.plan.candidates] == ["O-001"]


def test_zero_candidates_message(tmp_path: Path) -> None:
    paths = make_project(tmp_path, [("O-001", "2026-06-29", "1", 2)])
    report = prune(paths, Settings(), TODAY)
    assert report.text() == NOTHING_TO_PRUNE and not report.applied and not paths.archive.exists()


def test_second_prune_appends_to_the_archive(tmp_path: Path) -> None:
    paths = make_project(tmp_path)
    prune(paths, Settings(), TODAY)
    prune(paths, Settings(), date(2026, 12, 31))
    assert ids(paths.archive) == ["O-001", "O-005", "O-004"]
    assert ids(paths.outcomes) == ["O-002", "O-003", "O-006"]


def _crash_at(root: str, crash_on_call: int) -> None:
    """Run prune in a child and kill the process (no cleanup runs) at the Nth os.replace."""
    real_replace = os.replace
    calls = {"n": 0}

    def replace(src: str, dst: str, **dir_fds: int) -> None:
        calls["n"] += 1
        if calls["n"] == crash_on_call:
            os._exit(9)
        real_replace(src, dst, **dir_fds)

    os.replace = replace  # type: ignore[assignment]
    prune(MemoryPaths(Path(root)), Settings(), TODAY)


@pytest.mark.parametrize("crash_on_call", [1, 2])
def test_crash_during_prune_loses_no_record(tmp_path: Path, crash_on_call: int) -> None:
    paths = make_project(tmp_path)
    all_ids = set(ids(paths.outcomes))
    child = multiprocessing.get_context("fork").Process(
        target=_crash_at, args=(str(tmp_path), crash_on_call)
    )
    child.start()
    child.join(timeout=60)
    assert child.exitcode == 9
    survived = set(ids(paths.outcomes)) | set(ids(paths.archive))
    assert survived == all_ids
    # the next prune finishes the job and archives each ID once
    prune(paths, Settings(), TODAY)
    assert ids(paths.outcomes) == ["O-002", "O-003", "O-004", "O-006"]
    assert sorted(i for i in ids(paths.archive) if i) == ["O-001", "O-005"]
    assert sorted(p.name for p in paths.memory_dir.iterdir()) == ["ARCHIVE.md", "OUTCOMES.md"]


def test_interrupted_prune_state_is_completed_without_duplicates(tmp_path: Path) -> None:
    """A crash after ARCHIVE.md was written: records in both files; prune archives each once."""
    paths = make_project(tmp_path)
    row = "| O-001 | 2026-01-01 | main | 1 | 01-01 | agent | t | success | 2 | x | row O-001 |\n"
    paths.archive.write_text(ARCHIVE_TEMPLATE + row)
    report = prune(paths, Settings(), TODAY)
    assert report.archive_total == 2
    assert ids(paths.archive) == ["O-001", "O-005"]


def test_verification_failure_restores_outcomes_and_prints_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_project(tmp_path)
    before = paths.outcomes.read_bytes()
    monkeypatch.setattr(prune_module, "_verified", lambda *_: False)
    with pytest.raises(WriteFailedError) as caught:
        prune(paths, Settings(), TODAY)
    assert (
        caught.value.message
        == "Prune verification failed. OUTCOMES.md restored to pre-prune state."
    )
    assert paths.outcomes.read_bytes() == before
    assert "| O-001 |" in caught.value.record_text and "| O-005 |" in caught.value.record_text


def test_archive_write_failure_aborts_with_outcomes_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_project(tmp_path)
    before = paths.outcomes.read_bytes()

    def fail(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(WriteFailedError) as caught:
        prune(paths, Settings(), TODAY)
    assert paths.outcomes.read_bytes() == before
    assert "| O-005 |" in caught.value.record_text


def test_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert load_settings(path) == Settings()
    path.write_text('{"memory": {"auto_prune": true, "prune_threshold": 5, "prune_age_days": 30}}')
    assert load_settings(path) == Settings(auto_prune=True, prune_threshold=5, prune_age_days=30)
    path.write_text("{not json")
    broken = load_settings(path)
    assert (broken.auto_prune, broken.prune_threshold, broken.prune_age_days) == (False, 200, 90)
    assert len(broken.warnings) == 1 and "settings.json" in broken.warnings[0]
    path.write_text('{"memory": {"prune_threshold": "many"}}')
    assert load_settings(path).prune_threshold == 200 and load_settings(path).warnings


def test_an_id_collision_with_the_archive_loses_nothing(tmp_path: Path) -> None:
    """The spec's count+1 IDs collide after a prune: an archived O-001 is not this O-001."""
    paths = make_project(tmp_path, [("O-001", "2026-01-01", "1", 2)])
    archived = "| O-001 | 2025-01-01 | main | 1 | 01-01 | agent | t | success | 2 | x | an older record |\n"
    paths.archive.write_text(ARCHIVE_TEMPLATE + archived)
    report = prune(paths, Settings(), TODAY)
    assert report.applied and report.archive_total == 2
    summaries = [r.summary for r in read_outcomes(paths.archive).records]
    assert summaries == ["an older record", "row O-001"]
    assert ids(paths.outcomes) == []


def test_columns_beyond_the_canonical_header_move_with_the_row(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True)
    header = (
        "| ID | Date | Agent | Task Type | Outcome | Importance | Duration | Reviewer | Summary |\n"
    )
    paths.outcomes.write_text(
        header
        + "|---|---|---|---|---|---|---|---|---|\n| O-001 | 2025-01-01 | a | t | Success | 9x | 45 min | alice | old work |\n"
    )
    prune(paths, Settings(), TODAY)
    archive = paths.archive.read_text()
    assert archive.startswith("# Memory — Archived Outcomes")
    assert "| O-001 | 2025-01-01 | a | t | Success | 9x | 45 min | alice | old work |" in archive


def test_a_prune_that_would_drop_cells_is_refused(tmp_path: Path) -> None:
    from legion_llm.errors import InputError

    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True)
    paths.outcomes.write_text(
        "| ID | Date | Agent | Outcome | Importance | Reviewer |\n|---|---|---|---|---|---|\n| O-002 | 2025-01-01 | a | success | 2 | alice |\n"
    )
    paths.archive.write_text(ARCHIVE_TEMPLATE)
    before = (paths.outcomes.read_bytes(), paths.archive.read_bytes())
    with pytest.raises(InputError, match="no column for reviewer"):
        prune(paths, Settings(), TODAY)
    assert (paths.outcomes.read_bytes(), paths.archive.read_bytes()) == before


def test_duplicate_rows_are_moved_together(tmp_path: Path) -> None:
    paths = make_project(
        tmp_path,
        [
            ("O-001", "2026-01-01", "1", 2),
            ("O-001", "2026-01-01", "1", 2),
            ("O-002", "2026-06-29", "1", 2),
        ],
    )
    report = prune(paths, Settings(), TODAY)
    assert report.applied
    assert ids(paths.outcomes) == ["O-002"] and "| O-001 |" not in paths.outcomes.read_text()
    assert ids(paths.archive) == ["O-001"]


def test_an_unparseable_archive_stops_the_prune(tmp_path: Path) -> None:
    from legion_llm.errors import InputError

    paths = make_project(tmp_path)
    paths.archive.write_bytes(b"| ID | Date |\n|--|--|\n| O-000 | caf\xe9 |\n")
    before = paths.outcomes.read_bytes()
    with pytest.raises(InputError, match=r"ARCHIVE\.md could not be parsed"):
        prune(paths, Settings(), TODAY)
    assert paths.outcomes.read_bytes() == before
