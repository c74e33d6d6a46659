"""The front desk of `legion-llm mcp` (mcp/frontdesk.py): once the SDK has answered a handshake,
the next start answers `initialize` and `tools/list` with the same bytes before the SDK is
loaded, hands everything else to the SDK, and repairs a stored answer that no longer holds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import legion_llm
from legion_llm.mcp import frontdesk
from legion_llm.mcp.frontdesk import Handshake, fingerprint
from tests.conftest import FIXTURES

SERVER = Path(sys.executable).with_name("legion-llm")
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "desk", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
BRIEFING = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "memory_summary", "arguments": {"today": "2026-06-15"}}}  # fmt: skip
SESSION = [INITIALIZE, INITIALIZED, TOOLS, BRIEFING]

# The server with its SDK loader held until the file argv[2] exists (or 30 s have passed); the
# loader marks when it goes on (argv[2] + ".loading"): what is answered before that mark was
# answered by the desk.
HELD = """
import sys, time
from pathlib import Path
from legion_llm.mcp import frontdesk
run = frontdesk.Loader.run
def held(self):
    until = time.monotonic() + 30
    while not Path(sys.argv[2]).exists() and time.monotonic() < until:
        time.sleep(0.01)
    Path(sys.argv[2] + ".loading").touch()
    run(self)
frontdesk.Loader.run = held
frontdesk.serve_with_front_desk(Path(sys.argv[1]).resolve(), None)
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


@pytest.fixture
def cache_home(tmp_path: Path) -> Path:
    return tmp_path / "xdg"


def env(cache_home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline",
            "XDG_CACHE_HOME": str(cache_home)}  # fmt: skip


def serve(root: Path, cache_home: Path, lines: list[Any]) -> list[str]:
    """One whole session: the lines, then the end of input; the reply lines."""
    done = subprocess.run(
        [str(SERVER), "mcp", "--root", str(root)], cwd=root, env=env(cache_home), timeout=120,
        input="".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.splitlines()


def stored(cache_home: Path) -> dict[str, Any]:
    [path] = (cache_home / "legion-llm").glob("mcp-handshake-*.json")
    found: dict[str, Any] = json.loads(path.read_text())
    return found


@pytest.mark.subprocess
def test_the_second_start_answers_the_handshake_before_the_sdk_loads_with_the_same_bytes(
    root: Path, cache_home: Path, tmp_path: Path
) -> None:
    cold = serve(root, cache_home, SESSION)
    assert [json.loads(line)["id"] for line in cold] == [1, 2, 3]
    assert set(stored(cache_home)["versions"]) == {"2025-06-18"}
    release = tmp_path / "release"
    with subprocess.Popen(
        [sys.executable, "-c", HELD, str(root), str(release)], cwd=root, env=env(cache_home),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    ) as held:  # fmt: skip
        assert held.stdin is not None and held.stdout is not None
        warm = []
        for message in (INITIALIZE, INITIALIZED, TOOLS):
            held.stdin.write(json.dumps(message) + "\n")
            held.stdin.flush()
            if "id" in message:
                warm.append(held.stdout.readline().rstrip("\n"))  # while the loader is held
        assert not Path(f"{release}.loading").exists()  # the SDK was not loaded yet
        release.touch()
        held.stdin.write(json.dumps(BRIEFING) + "\n")
        held.stdin.close()
        warm += held.stdout.read().splitlines()
        assert held.wait(timeout=120) == 0
    assert warm == cold  # byte for byte, and the SDK's own handshake answers were not repeated
    assert json.loads(warm[-1])["result"].get("isError") is not True  # the tool ran


@pytest.mark.subprocess
def test_the_instructions_name_this_starts_root(
    root: Path, cache_home: Path, tmp_path: Path
) -> None:
    serve(root, cache_home, SESSION)
    other = tmp_path / "other project"
    shutil.copytree(root, other)
    [answer] = serve(other, cache_home, [INITIALIZE])
    assert str(other.resolve()) in json.loads(answer)["result"]["instructions"]
    assert str(root) not in json.loads(answer)["result"]["instructions"]


@pytest.mark.subprocess
def test_a_stored_answer_that_no_longer_holds_is_replaced(root: Path, cache_home: Path) -> None:
    cold = serve(root, cache_home, SESSION)
    [path] = (cache_home / "legion-llm").glob("mcp-handshake-*.json")
    body = stored(cache_home)
    body["versions"]["2025-06-18"]["tools/list"] = '{"tools":[]}'
    path.write_text(json.dumps(body))
    stale = serve(root, cache_home, SESSION)
    assert json.loads(stale[1])["result"] == {"tools": []}  # the desk answered from the cache
    assert stored(cache_home)["versions"]["2025-06-18"]["tools/list"] != '{"tools":[]}'
    assert serve(root, cache_home, SESSION) == cold  # repaired


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "first",
    [
        {**INITIALIZE, "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
        {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2024-11-05"}},  # type: ignore[dict-item]
        "not json",
    ],
    ids=["no-client-info", "version-not-stored", "not-json"],
)
def test_what_the_desk_does_not_know_is_answered_by_the_sdk(
    root: Path, cache_home: Path, tmp_path: Path, first: Any
) -> None:
    serve(root, cache_home, SESSION)
    without = serve(root, tmp_path / "no-cache", [first, TOOLS])
    assert serve(root, cache_home, [first, TOOLS]) == without


@pytest.mark.subprocess
def test_with_no_cache_folder_the_sdk_answers_everything(root: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SERVER), "mcp", "--root", str(root)], cwd=root, timeout=120, check=True,
        env={"PATH": "/usr/bin:/bin", "LEGION_LLM_ENGINE": "offline"}, capture_output=True,
        input="".join(json.dumps(line) + "\n" for line in SESSION), text=True,
    )  # fmt: skip
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1, 2, 3]


# ---------------------------------------------------------------- the desk's rules, in process


@pytest.fixture
def desk(tmp_path: Path) -> Handshake:
    handshake = Handshake(tmp_path, "f" * 64)
    handshake.stored = {"2025-06-18": {"initialize": '{"instructions":\x00}', "tools/list": "[]"}}
    return handshake


def line(message: Any) -> bytes:
    return (message if isinstance(message, str) else json.dumps(message)).encode()


def test_the_desk_answers_initialize_then_tools_list_and_lets_notifications_wait(
    desk: Handshake, tmp_path: Path
) -> None:
    assert desk.answer(line(TOOLS)) is None  # not before initialize
    reply = desk.answer(line(INITIALIZE))
    assert reply is not None
    assert json.loads(reply) == {"jsonrpc": "2.0", "id": 1,
                                 "result": {"instructions": frontdesk.instructions_for(tmp_path)}}  # fmt: skip
    assert desk.answer(line(INITIALIZED)) == ""
    assert desk.answer(line(TOOLS)) == '{"jsonrpc":"2.0","id":2,"result":[]}'


@pytest.mark.parametrize(
    "message",
    [
        "{",
        "[1]",
        {"id": 1, "method": "initialize"},
        {**INITIALIZE, "id": True},
        {**INITIALIZE, "id": [1]},
        {**INITIALIZE, "method": "ping"},
        {**INITIALIZE, "params": {**INITIALIZE["params"], "clientInfo": {"name": "x"}}},  # type: ignore[dict-item]
    ],
    ids=["cut-off", "array", "no-jsonrpc", "bool-id", "list-id", "other-method", "no-version"],
)
def test_the_desk_leaves_anything_else_to_the_sdk(desk: Handshake, message: Any) -> None:
    assert desk.answer(line(message)) is None


def test_the_desk_answers_one_initialize_and_each_id_once(desk: Handshake) -> None:
    assert desk.answer(line(INITIALIZE)) is not None
    assert desk.answer(line({**INITIALIZE, "id": 5})) is None  # a second initialize
    assert desk.answer(line({**TOOLS, "params": {"cursor": "x"}})) is None  # a next page
    assert desk.answer(line(TOOLS)) is not None
    assert desk.answer(line(TOOLS)) is None  # the same id again


def test_the_fingerprint_follows_every_source_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "legion_llm"
    shutil.copytree(Path(legion_llm.__file__).parent, package)
    monkeypatch.setattr(legion_llm, "__file__", str(package / "__init__.py"))
    before = fingerprint()
    assert before == fingerprint() and len(before) == 64
    (package / "mcp" / "tools_memory.py").write_text("# changed\n", encoding="utf-8")
    assert fingerprint() != before
