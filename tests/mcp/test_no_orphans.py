"""No `claude` CLI outlives the MCP server (issue 34, point 6): SIGTERM, SIGHUP or SIGINT to
`legion-llm mcp` during a tool call that asked the CLI, or a client that goes away mid-call,
stops the CLI too (it runs in a session of its own: no signal to the server reaches it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.llm.claude_stub import StubClaude, reply
from tests.llm.test_claude_code_signals import gone, running_cli

pytestmark = pytest.mark.subprocess

SERVER = Path(sys.executable).with_name("legion-llm")
HELLO = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "raw", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"}]  # fmt: skip


def compact_call(**arguments: object) -> dict[str, object]:
    """Request 2: compact phase 3 through the Claude Code CLI, `arguments` added."""
    given = {"phase": 3, "force": True, "engine": "claude-code", **arguments}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "phase_compact", "arguments": given}}  # fmt: skip


def start(tmp_path: Path, **arguments: object) -> tuple[subprocess.Popen[bytes], StubClaude]:
    """The server on a copy of the demo, asked to compact phase 3 with the stub CLI, which
    sleeps; `arguments` are added to the call's."""
    stub = StubClaude(tmp_path / "bin").script(reply("sleep", seconds=120, on_term="cleanup"))
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    env = {"PATH": f"{stub.folder}:/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline",
           "LEGION_LLM_DEADLINE": "300", "XDG_CACHE_HOME": str(tmp_path / "cache")}  # fmt: skip
    server = subprocess.Popen(
        [str(SERVER), "mcp", "--root", str(root)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root,
    )  # fmt: skip
    send(server, [*HELLO, compact_call(**arguments)])
    return server, stub


def send(server: subprocess.Popen[bytes], messages: list[dict[str, object]]) -> None:
    assert server.stdin is not None
    server.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    server.stdin.flush()


def cleanup(server: subprocess.Popen[bytes], stub: StubClaude) -> None:
    server.kill()
    server.wait()
    for pipe in (server.stdin, server.stdout, server.stderr):
        if pipe is not None:
            pipe.close()
    for call in stub.print_calls():
        if not gone(call["pid"], 0):
            os.kill(call["pid"], signal.SIGKILL)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["sigterm", "sighup", "sigint"])  # fmt: skip
def test_a_signal_to_the_server_mid_call_ends_the_claude_cli(
    tmp_path: Path, signum: signal.Signals
) -> None:
    server, stub = start(tmp_path)
    try:
        child = running_cli(stub, timeout=60)
        server.send_signal(signum)
        server.wait(timeout=30)
        assert gone(child), "the claude CLI kept running after the server ended"
        assert {"terminated": True, "pid": child} in stub.calls()
        assert server.returncode == 128 + signum
        assert server.stderr is not None and b"Traceback" not in server.stderr.read()
    finally:
        cleanup(server, stub)


def test_a_client_that_goes_away_mid_call_ends_the_claude_cli(tmp_path: Path) -> None:
    server, stub = start(tmp_path)
    try:
        child = running_cli(stub, timeout=60)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()  # the client ended: both its pipes close
        server.stdout.close()
        server.wait(timeout=30)
        assert gone(child), "the claude CLI kept running after its client left"
        assert server.stderr is not None
        assert b"the client is gone" in server.stderr.read()
    finally:
        cleanup(server, stub)


def test_a_client_that_only_closes_stdin_still_gets_the_answer(tmp_path: Path) -> None:
    """Closing stdin alone is not leaving: the call runs to its end and is answered."""
    server, stub = start(tmp_path)
    stub.script(reply("sleep", seconds=1))
    try:
        running_cli(stub, timeout=60)
        assert server.stdin is not None and server.stdout is not None
        server.stdin.close()
        started = time.monotonic()
        lines = server.stdout.read().splitlines()
        assert time.monotonic() - started < 60
        assert [json.loads(line)["id"] for line in lines] == [1, 2]
    finally:
        cleanup(server, stub)


def test_a_cancelled_call_ends_the_claude_cli_writes_nothing_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    """`notifications/cancelled` for a call that waits on the CLI stops the CLI (its session,
    as on a timeout), the call writes nothing and is never answered, and the next call is."""
    server, stub = start(tmp_path, apply=True)
    compacted = tmp_path / "demo/.planning/phases/03-fx-rates/03-COMPACTED.md"
    try:
        child = running_cli(stub, timeout=60)
        send(server, [{"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 2, "reason": "the user pressed Esc"}},
                      {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}])  # fmt: skip
        assert gone(child, within=15), "the claude CLI kept running after its call was cancelled"
        assert {"terminated": True, "pid": child} in stub.calls()
        assert server.stdout is not None
        answered = [json.loads(server.stdout.readline())["id"] for _ in range(2)]
        assert answered == [1, 3]  # the cancelled call is never answered
        assert not compacted.exists()
        assert len(stub.print_calls()) == 1  # no re-ask, no other engine after the cancel
        assert server.poll() is None
    finally:
        cleanup(server, stub)
