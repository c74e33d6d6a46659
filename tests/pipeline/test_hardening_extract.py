"""Issue 17 (attack pass), learning extraction: concurrent runs of one mission (point 4), a deeply
nested or huge mission.json (point 6), a FIFO or a link out of the root in a mission (7, 17)."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path
from typing import Any

from legion_llm.llm.engine import OfflineEngine
from legion_llm.pipeline.learnings.extract import run_extract
from legion_llm.pipeline.learnings.mission import read_mission
from legion_llm.project import MemoryPaths
from tests.hostile import unblocking

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "missions" / "project"
INVOICE = ".mission-control/missions/archive/mission-2026-02-03-invoice-pdf"
NOW = "2026-04-05T12:00:00Z"
RUNS = 4


class BarrierEngine(OfflineEngine):
    """The offline engine, but every run waits until all runs have read the existing learnings
    (the engine is asked after that read): the worst interleaving, every time."""

    def __init__(self, barrier: Any) -> None:
        super().__init__()
        self.barrier = barrier

    def ask(self, *args: Any, **kwargs: Any) -> Any:
        self.barrier.wait(timeout=60)
        return super().ask(*args, **kwargs)


def _extract(root: str, barrier: Any) -> None:
    paths = MemoryPaths(Path(root))
    run_extract(paths, paths.root / INVOICE, BarrierEngine(barrier), now=NOW)


def test_concurrent_extractions_of_one_mission_write_each_learning_once(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    alone = tmp_path / "alone"
    shutil.copytree(PROJECT, alone)
    expected = run_extract(MemoryPaths(alone), alone / INVOICE, OfflineEngine(), now=NOW)
    written = sorted(p["file"] for p in expected.to_dict()["written"])
    assert written

    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(RUNS)
    workers = [context.Process(target=_extract, args=(str(root), barrier)) for _ in range(RUNS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    names = sorted(p.name for p in (root / ".mission-control/memory").glob("*.md"))
    assert names == sorted(p.name for p in (alone / ".mission-control/memory").glob("*.md"))
    assert set(written) <= set(names)
    for name in names:
        assert (root / ".mission-control/memory" / name).read_bytes() == (
            alone / ".mission-control/memory" / name
        ).read_bytes()


def _mission(tmp_path: Path, state: str) -> Path:
    folder = tmp_path / "project" / ".mission-control" / "missions" / "m-deep"
    (folder / "tasks").mkdir(parents=True)
    (folder / "mission.json").write_text(state)
    events = [
        {"event": "task_started", "task": "T1"},
        {
            "event": "task_failed",
            "task": "T1",
            "error": "Error: connect ECONNREFUSED 127.0.0.1:5432",
        },
        {"event": "retry", "task": "T1", "note": "Run `docker compose up -d db` before the tests"},
        {"event": "task_completed", "task": "T1"},
    ]
    (folder / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return folder


def test_a_deeply_nested_mission_json_is_one_warning(tmp_path: Path, cli: Any) -> None:
    folder = _mission(tmp_path, '{"id": "m-deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    mission = read_mission(folder)
    assert [w for w in mission.warnings if "mission.json" in w and "nested" in w]
    assert mission.findings  # the log is still read
    result = cli("learnings", "extract", str(folder), "--root", tmp_path / "project",
                 "--engine", "offline", "--dry-run", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr


def test_a_deeply_nested_log_line_is_one_warning(tmp_path: Path) -> None:
    folder = _mission(tmp_path, '{"id": "m-deep"}')
    with (folder / "log.jsonl").open("a") as log:
        log.write('{"event": "note", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    mission = read_mission(folder)
    assert any("log.jsonl line 5" in w and "nested" in w for w in mission.warnings)
    assert mission.findings


def test_a_fifo_or_an_outside_link_in_a_mission_is_one_warning(tmp_path: Path) -> None:
    folder = _mission(tmp_path, '{"id": "m-deep"}')
    os.mkfifo(folder / "notes.jsonl")
    (tmp_path / "secret.json").write_text('{"id": "T9", "name": "SECRET"}')
    (folder / "tasks" / "T9.json").symlink_to(tmp_path / "secret.json")
    mission = unblocking(lambda: read_mission(folder), [folder / "notes.jsonl"])
    assert any("notes.jsonl" in w and "not a regular file" in w for w in mission.warnings)
    assert any("T9.json" in w and "outside the project root" in w for w in mission.warnings)
    assert "SECRET" not in mission.text
    assert mission.findings


def test_repeated_failures_are_one_finding_and_each_error_keeps_its_own_fix(
    tmp_path: Path,
) -> None:
    """The failure loop works on positions (it was quadratic, and an error event equal to an
    earlier one found the earlier one's place): the note after each error is its fix, and the
    same failure repeated 2,000 times is one finding."""
    folder = _mission(tmp_path, '{"id": "m-deep"}')
    error = {"event": "task_failed", "task": "T2", "error": "Error: ETIMEDOUT on src/api/client.ts"}
    events = [{"event": "task_started", "task": "T2"}]
    for note in ["Raise the client timeout with `--timeout 30`", "Retry behind `p-retry`"]:
        events += [error, {"event": "retry", "task": "T2", "note": note}]
    for _ in range(2_000):
        events += [error, {"event": "retry", "task": "T2", "note": "Retry behind `p-retry`"}]
    events.append({"event": "task_completed", "task": "T2"})
    with (folder / "log.jsonl").open("a") as log:
        log.write("".join(json.dumps(e) + "\n" for e in events))
    fixes = [f.text for f in read_mission(folder).findings if f.where == "T2"]
    assert fixes == ["Raise the client timeout with `--timeout 30`", "Retry behind `p-retry`"]
