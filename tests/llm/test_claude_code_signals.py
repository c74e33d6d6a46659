"""No `claude` CLI outlives legion-llm (issue 34, point 6): Ctrl-C, SIGTERM and SIGHUP sent to
the command while the CLI answers stop the CLI too (it runs in a session of its own, so the
terminal's signal never reaches it), and the command ends with the signal's exit code."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.llm.claude_stub import StubClaude, reply

pytestmark = pytest.mark.subprocess

PROGRAM = Path(sys.executable).with_name("legion-llm")


def running_cli(stub: StubClaude, timeout: float = 20) -> int:
    """The pid of the stub's `-p` run, once it has started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        calls = stub.print_calls()
        if calls:
            return int(calls[-1]["pid"])
        time.sleep(0.05)
    raise AssertionError("the claude CLI was never asked")


def gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["ctrl-c", "sigterm", "sighup"])  # fmt: skip
def test_a_signal_mid_call_ends_the_claude_cli_with_the_command(
    tmp_path: Path, signum: signal.Signals
) -> None:
    stub = StubClaude(tmp_path / "bin").script(reply("sleep", seconds=120, on_term="cleanup"))
    root = tmp_path / "project"
    (root / ".planning").mkdir(parents=True)
    env = {**os.environ, "PATH": stub.on_path(), "LEGION_LLM_DEADLINE": "300"}
    command = subprocess.Popen(
        [str(PROGRAM), "llm", "selftest", "--engine", "claude-code", "--root", str(root)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        child = running_cli(stub)
        command.send_signal(signum)
        _, err = command.communicate(timeout=30)
        assert gone(child), "the claude CLI kept running after legion-llm ended"
        assert {"terminated": True, "pid": child} in stub.calls()  # SIGTERM first: it cleaned up
        assert command.returncode == 128 + signum
        assert b"Traceback" not in err and b"internal error" not in err
    finally:
        command.kill()
        for call in stub.print_calls():
            if not gone(call["pid"], 0):
                os.kill(call["pid"], signal.SIGKILL)


def test_a_command_that_ends_leaves_no_claude_cli_registered(tmp_path: Path) -> None:
    """The registry of running CLIs is empty after a run, whatever ended it."""
    from legion_llm.llm.claude_code import cli as claude_cli

    stub = StubClaude(tmp_path / "bin").script(reply("sleep", seconds=30))
    with pytest.raises(claude_cli.CliTimeout):
        claude_cli.run_cli([str(stub.path), "-p", "--output-format", "json"], timeout=0.5)
    assert not claude_cli._RUNNING
    assert json.dumps(stub.print_calls()[0]["argv"])  # it did run
