"""Every line the two desks read is answered (issue 34, point 8): the plugin's first-start desk
(mcp/firststart.py) and the server's front desk (mcp/frontdesk.py, answering the handshake from
its cache) read lines before the SDK does. JSON nested past MAX_DEPTH (Python's decoder raises
RecursionError on it) and a lone surrogate escape (`"\\ud800"`, which no UTF-8 text carries)
are a JSON-RPC parse error like any line that is not JSON, and the desk goes on serving."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.mcp.firststart import MAX_DEPTH, Desk, load_answers, nesting
from tests.conftest import FIXTURES

ANSWERS = Path(__file__).resolve().parents[2] / "integrations/claude-code/mcp-handshake.json"
SERVER = Path(sys.executable).with_name("legion-llm")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}  # fmt: skip
DEEP = (
    '{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"a": '
    + "[" * 5000
    + "]" * 5000
    + "}}"
)
LONE_ID = '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}'
LONE_METHOD = '{"jsonrpc": "2.0", "id": 2, "method": "tools/list\\udc00"}'
LINES = {"deep": DEEP, "lone surrogate id": LONE_ID, "lone surrogate method": LONE_METHOD}


@pytest.mark.parametrize("line", LINES.values(), ids=LINES.keys())
def test_the_first_start_desk_answers_a_deep_or_lone_surrogate_line(
    tmp_path: Path, line: str
) -> None:
    desk = Desk(tmp_path, load_answers(ANSWERS), lambda: "building", "/data/install.log")
    answer = desk.reply(line.encode())
    assert answer is not None
    error = json.loads(answer)
    assert error["id"] is None and error["error"]["code"] == -32700
    assert error["error"]["message"].startswith("Parse error: the line is not JSON (")
    assert desk.backlog == []  # nothing of it is handed to the real server
    ping = desk.reply(b'{"jsonrpc": "2.0", "id": 3, "method": "ping"}')
    assert ping is not None and json.loads(ping) == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_a_surrogate_pair_is_text_and_brackets_in_strings_do_not_nest(tmp_path: Path) -> None:
    desk = Desk(tmp_path, load_answers(ANSWERS), lambda: "building", "/data/install.log")
    answer = desk.reply(b'{"jsonrpc": "2.0", "id": "\\ud83d\\ude00", "method": "ping"}')
    assert answer is not None and json.loads(answer)["id"] == "\U0001f600"
    assert nesting(b'{"a": "' + b"[" * 1000 + b'\\"{"}') == 1
    assert nesting(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)) == MAX_DEPTH + 1


def _serve(root: Path, cache: Path, lines: list[Any]) -> list[dict[str, Any]]:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run(
        [str(SERVER), "mcp", "--root", str(root)], input=text.encode(), capture_output=True,
        timeout=60, cwd=root,
        env={"PATH": "/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline", "XDG_CACHE_HOME": str(cache)},
    )  # fmt: skip
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.subprocess
@pytest.mark.parametrize("line", LINES.values(), ids=LINES.keys())
def test_the_front_desk_hands_a_deep_or_lone_surrogate_line_to_the_sdk(
    tmp_path: Path, line: str
) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    cache = tmp_path / "cache"
    tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    _serve(root, cache, [INITIALIZE, tools])  # the handshake answers are stored
    assert list(cache.rglob("mcp-handshake-*.json")), "the front desk's cache was not written"
    replies = _serve(root, cache, [INITIALIZE, line, {"jsonrpc": "2.0", "id": 3, "method": "ping"}])
    assert [reply["id"] for reply in replies] == [1, None, 3]
    assert replies[1]["error"]["code"] == -32700 and replies[2]["result"] == {}
