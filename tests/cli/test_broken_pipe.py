"""A reader that stops early (`legion-llm ... | head -c 10`) ends the command quietly with exit 0,
as other Unix tools do: no `error: Broken pipe`, no traceback, on the fast path and through typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.subprocess

COMMANDS = [
    ["outcomes", "recall", "--json"],  # the fast path, --json
    ["outcomes", "recall"],  # the fast path, a table
    ["outcomes", "archetypes", "--json"],  # through typer
    ["recall", "rates"],  # through typer, a table
    ["--help"],
]


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_a_pipe_closed_early_ends_quietly(demo_project: Path, words: list[str]) -> None:
    command = [sys.executable, "-m", "legion_llm", *words]
    if words != ["--help"]:
        command += ["--root", str(demo_project), "--today", "2026-06-15"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader is gone before the program writes a byte
    with process.stderr:
        stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0, stderr
    assert stderr == ""


def test_another_programs_closed_pipe_is_still_an_error(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only standard output's reader going away ends quietly: a pipe to another program (a
    `claude` that died) that closes is said, exit 1."""
    from legion_llm.app.commands import outcomes

    def broken(*args: Any, **kwargs: Any) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(outcomes, "recall_result", broken)
    result = cli("outcomes", "recall", "--root", project)
    assert result.exit_code == 1 and result.stderr == "error: Broken pipe\n"
