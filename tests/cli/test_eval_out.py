"""An eval's log goes where --out names, inside the project or not (a temporary folder is a fine
place for a log); a place it could not be written is refused before the suite runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

EVAL = ["eval", "compaction", "--engine", "offline", "--fixtures"]


@pytest.fixture
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    folder = tmp_path_factory.mktemp("cases")
    shutil.copytree(FIXTURES / "phases" / "letter-suffix-plan", folder / "letter-suffix-plan")
    return folder


def test_an_out_outside_the_project_gets_the_log(
    cli: Any, project: Path, tmp_path_factory: pytest.TempPathFactory, cases: Path
) -> None:
    elsewhere = tmp_path_factory.mktemp("logs") / "x.json"
    result = cli(*EVAL, cases, "--out", elsewhere, "--root", project, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(elsewhere.read_text(encoding="utf-8"))["engine"] == "offline"
    assert result.json["data"]["log"] == str(elsewhere.resolve())
    assert sorted(p.name for p in project.iterdir()) == [".planning"]  # no eval-logs/ made


def test_a_relative_out_is_under_the_root(cli: Any, project: Path, cases: Path) -> None:
    result = cli(*EVAL, cases, "--out", "logs/run.json", "--root", project)
    assert result.exit_code == 0, result.stderr
    assert json.loads((project / "logs/run.json").read_text(encoding="utf-8"))["passed"] is True


@pytest.mark.parametrize("where", ["missing folder", "a folder"])
def test_an_out_that_cannot_take_the_log_is_refused_before_the_run(
    cli: Any, project: Path, tmp_path_factory: pytest.TempPathFactory, cases: Path, where: str
) -> None:
    base = tmp_path_factory.mktemp("logs")
    out = base / "no-such-folder" / "x.json" if where == "missing folder" else base
    result = cli(*EVAL, cases, "--out", out, "--root", project)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("error: --out ") and result.stderr.count("\n") == 1
    assert list(base.iterdir()) == [] and sorted(p.name for p in project.iterdir()) == [".planning"]
