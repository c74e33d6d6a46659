"""Raw JSON-RPC lines written to a real `legion-llm mcp` subprocess, as a broken or hostile client
would: every line gets an answer and the server keeps serving; huge string arguments are refused
with a clear tool error and nothing is stored."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

pytestmark = pytest.mark.subprocess

SERVER = Path(sys.executable).with_name("legion-llm")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}  # fmt: skip
TIMEOUT = 20


class Raw:
    """A server subprocess spoken to line by line."""

    def __init__(self, root: Path) -> None:
        env = {"PATH": "/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline"}
        self.process = subprocess.Popen(
            [str(SERVER), "mcp", "--root", str(root)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=root,
        )  # fmt: skip
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: str | bytes | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        raw = json.dumps(line) if isinstance(line, dict) else line
        self.process.stdin.write((raw if isinstance(raw, bytes) else raw.encode()) + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.lines.get(timeout=TIMEOUT))
        return found

    def call(self, id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": id_, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})  # fmt: skip
        return self.reply()

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=TIMEOUT)
        self.reader.join(timeout=TIMEOUT)
        self.process.stdout.close()


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[Raw]:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    server = Raw(root)
    server.send(INITIALIZE)
    assert server.reply()["id"] == 1
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield server
    server.close()


def test_every_malformed_line_gets_an_error_reply_and_the_server_keeps_serving(raw: Raw) -> None:
    raw.send("this is not json")
    assert raw.reply() == {"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32700, "message": "Parse error: the line is not JSON"}}  # fmt: skip
    raw.send('{"jsonrpc": "2.0", "id": 9, "method": ')  # cut off
    assert raw.reply()["error"]["code"] == -32700
    raw.send(b"\xff\xfe not utf-8 \x00")
    assert raw.reply()["error"]["code"] == -32700
    raw.send('{"hello": "world"}')
    invalid = raw.reply()
    assert invalid["error"]["code"] == -32600 and invalid["id"] is None
    raw.send('{"jsonrpc": "2.0", "id": 42, "method": 7}')
    assert raw.reply()["error"] == {"code": -32600,
                                    "message": "Invalid Request: not a JSON-RPC 2.0 message"}  # fmt: skip
    raw.send("[1, 2, 3]")
    assert raw.reply()["error"]["code"] == -32600
    briefing = raw.call(2, "memory_summary", {"today": "2026-06-15"})
    assert briefing["id"] == 2 and not briefing["result"].get("isError")
    assert json.loads(briefing["result"]["content"][0]["text"])["ok"] is True


def test_a_20_mb_summary_is_refused_with_a_clear_error_and_nothing_is_stored(
    raw: Raw, tmp_path: Path
) -> None:
    outcomes = tmp_path / "demo/.planning/memory/OUTCOMES.md"
    before = outcomes.read_bytes()
    record = {"kind": "outcome", "phase": "4", "plan": "04-05", "agent": "dev",
              "outcome": "success"}  # fmt: skip
    huge = raw.call(3, "memory_store", {**record, "summary": "x" * 20_000_000})
    assert huge["id"] == 3 and huge["result"]["isError"] is True
    text = huge["result"]["content"][0]["text"]
    assert "summary" in text and "at most 1,000,000 characters" in text
    stored = raw.call(4, "memory_store", {**record, "summary": "s" * 30_000})
    assert "at most 20,000 characters" in stored["result"]["content"][0]["text"]
    assert outcomes.read_bytes() == before
    goal = raw.call(5, "memory_recall", {"kind": "learnings", "query": "g" * 1_000_001})
    assert goal["result"]["isError"] is True and "query" in goal["result"]["content"][0]["text"]
    tags = raw.call(6, "memory_recall", {"kind": "outcomes",
                                          "tags": ["t" * 600_000, "u" * 600_000]})  # fmt: skip
    assert tags["result"]["isError"] is True  # the strings in a list count together
    assert (
        raw.call(7, "memory_summary", {"today": "2026-06-15"})["result"].get("isError") is not True
    )


def test_a_client_that_closes_stdin_after_its_requests_gets_every_answer(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    calls = [{"jsonrpc": "2.0", "id": n, "method": "tools/call",
              "params": {"name": "memory_summary", "arguments": {}}} for n in range(2, 8)]  # fmt: skip
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *calls,
             {"jsonrpc": "2.0", "id": 10, "method": "tools/list"}]  # fmt: skip
    done = subprocess.run(
        [str(SERVER), "mcp", "--root", str(root)],
        input="".join(json.dumps(line) + "\n" for line in lines).encode(),
        capture_output=True, timeout=TIMEOUT * 3, cwd=root,
        env={"PATH": "/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline"},
    )  # fmt: skip
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert sorted(r["id"] for r in replies) == [1, 2, 3, 4, 5, 6, 7, 10]
    assert all("result" in r and not r["result"].get("isError") for r in replies)


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [("phase_read", {"phase": "3\x00"}, "phase"),
     ("phase_compact", {"phase": "\x003", "engine": "offline"}, "phase"),
     ("memory_extract_learnings", {"mission": "missions/a\x00b"}, "mission"),
     ("memory_recall", {"kind": "outcomes", "tags": ["ok", "b\x00d"]}, "tags"),
     ("memory_store", {"kind": "outcome", "phase": "4", "plan": "04-05", "agent": "dev",
                       "outcome": "success", "summary": "nul \x00 byte"}, "summary")],
    ids=["phase_read", "phase_compact", "mission", "a list", "stored text"],
)  # fmt: skip
def test_a_nul_in_any_string_argument_is_a_one_line_tool_error(
    raw: Raw, tmp_path: Path, tool: str, arguments: dict[str, Any], named: str
) -> None:
    before = {p: p.read_bytes() for p in (tmp_path / "demo/.planning").rglob("*") if p.is_file()}
    answer = raw.call(5, tool, arguments)
    assert answer["id"] == 5 and answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert f"argument {named!r} must not hold a NUL character" in text
    assert "internal error" not in text and "\n" not in text
    after = {p: p.read_bytes() for p in (tmp_path / "demo/.planning").rglob("*") if p.is_file()}
    assert after == before  # nothing ran
