from __future__ import annotations

import multiprocessing
from datetime import date
from pathlib import Path

from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.outcomes.store import OutcomeInput, add_outcome
from legion_llm.project import MemoryPaths

WRITERS = 8
EACH = 25


def _writer(root: str, writer: int) -> None:
    paths = MemoryPaths(Path(root))
    for n in range(EACH):
        data = OutcomeInput(
            phase="1", plan="01-01", agent=f"agent-{writer}", outcome="success",
            summary=f"writer {writer} item {n} | with a pipe", task_type="backend", branch="main",
        )  # fmt: skip
        add_outcome(paths, data, today=date(2026, 3, 1), catalog_file=Path(root) / "none.md")


def test_eight_processes_adding_at_once_lose_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w)) for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    result = read_outcomes(tmp_path / ".planning/memory/OUTCOMES.md")
    assert result.parseable and result.warnings == []
    assert len(result.records) == WRITERS * EACH
    assert len({r.id for r in result.records}) == WRITERS * EACH
    summaries = {r.summary for r in result.records}
    assert summaries == {
        f"writer {w} item {n} | with a pipe" for w in range(WRITERS) for n in range(EACH)
    }
