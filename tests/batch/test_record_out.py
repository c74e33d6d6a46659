"""An eval batch's record is a file in the project (a repository can carry one): when it is
collected, the log goes where the record says only under the root; a path outside it (whoever
wrote it) is not written, the log goes to eval-logs/ under the root instead."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from legion_llm.app.commands.evals.batch import eval_job
from legion_llm.app.context import Common


def record(out: str | None) -> Any:
    options = {"today": "2026-06-15", "suite": "distill", "fixtures": None, "out": out}
    return SimpleNamespace(options=options, id="msgbatch_test")


def test_a_recorded_log_outside_the_root_is_not_where_the_log_goes(tmp_path: Path) -> None:
    c = Common(tmp_path, date(2026, 6, 15), True)
    assert eval_job(c, record(str(Path.home() / ".bashrc"))).out is None
    assert eval_job(c, record("../elsewhere.json")).out is None


def test_a_recorded_log_under_the_root_is_kept(tmp_path: Path) -> None:
    c = Common(tmp_path, date(2026, 6, 15), True)
    assert eval_job(c, record("logs/run.json")).out == Path("logs/run.json")
    assert eval_job(c, record(str(tmp_path / "run.json"))).out == tmp_path / "run.json"
