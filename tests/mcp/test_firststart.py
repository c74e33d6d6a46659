"""The plugin's first-start desk (legion_llm/mcp/firststart.py): the answers it ships are the
live server's, it runs on the standard library alone, it never makes up a tool's answer, and
it becomes the real server (same process, no answer twice) once the venv is ready.

The launcher around it (which Python, when) is tests/integrations/test_first_start.py; the real
Claude Code CLI meeting it is tests/integrations/test_plugin_real_cli.py."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from legion_llm.mcp import firststart
from legion_llm.mcp.firststart import Desk, load_answers
from tests.conftest import FIXTURES, REPO

ANSWERS = REPO / "integrations" / "claude-code" / "mcp-handshake.json"
SERVER = Path(sys.executable).with_name("legion-llm")  # the real server, as a venv's
BARE = [str(Path(sys.base_prefix) / "bin" / "python3"), "-I", "-S"]  # the standard library only
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "desk", "version": "1"}}}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def call(request_id: int, name: str = "memory_summary") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": {}}}  # fmt: skip


# ---------------------------------------------------------------- the shipped answers


@pytest.mark.subprocess
def test_the_shipped_answers_are_the_live_servers() -> None:
    """Regenerated from the server this checkout runs: a change to the tools, the instructions,
    the version or the SDK makes the file stale, and this fails until it is regenerated."""
    live = firststart.generate([sys.executable, "-m", "legion_llm", "mcp"])
    assert ANSWERS.read_text("utf-8") == live, "stale: run `python3 dev.py handshake`"


def test_the_shipped_answers_cover_every_method_for_any_version() -> None:
    answers = load_answers(ANSWERS)
    assert set(answers) == set(firststart.METHODS)
    instructions = answers["initialize"][firststart.ANY_VERSION]["instructions"]
    assert instructions.count(firststart.ROOT_MARK) == 1
    assert answers["tools/list"][firststart.ANY_VERSION]["tools"]  # a server with tools


# ---------------------------------------------------------------- the desk's rules, in process


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk(tmp_path, load_answers(ANSWERS), lambda: "building", "/data/install.log")


def reply(desk: Desk, message: Any) -> Any:
    raw = (message if isinstance(message, str) else json.dumps(message)).encode()
    answer = desk.reply(raw)
    return None if answer is None else json.loads(answer)


def test_the_handshake_is_the_servers_with_this_root(desk: Desk, tmp_path: Path) -> None:
    answers = load_answers(ANSWERS)
    hello = reply(desk, INITIALIZE)
    assert hello["id"] == 1
    assert hello["result"]["protocolVersion"] == "2025-06-18"
    assert hello["result"]["instructions"] == answers["initialize"]["2025-06-18"][
        "instructions"
    ].replace("{root}", str(tmp_path))
    assert reply(desk, INITIALIZED) is None
    assert reply(desk, TOOLS) == {"jsonrpc": "2.0", "id": 2, "result": answers["tools/list"]["*"]}
    unknown = Desk(tmp_path, answers, lambda: "building", "log")
    params = {"protocolVersion": "1999-01-01", "capabilities": {}}
    other = reply(unknown, {**INITIALIZE, "params": params})["result"]
    assert other["protocolVersion"] == answers["initialize"]["*"]["protocolVersion"]  # the server's


def test_a_tool_call_is_an_honest_tool_error_and_nothing_runs(desk: Desk) -> None:
    reply(desk, INITIALIZE)
    answer = reply(desk, call(3))
    assert answer["result"]["isError"] is True
    (text,) = [block["text"] for block in answer["result"]["content"]]
    assert "still installing" in text and "/data/install.log" in text and "nothing was run" in text
    failed = Desk(desk.root, desk.answers, lambda: "failed", "/data/install.log")
    (block,) = reply(failed, call(4))["result"]["content"]
    assert "could not install" in block["text"] and "/data/install.log" in block["text"]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("{", -32700),
        ([1], -32600),
        ({"jsonrpc": "2.0", "id": 5}, -32600),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "x"}}, -32603),
        ({**INITIALIZE, "id": 9}, -32602),  # a second initialize
    ],
    ids=["not-json", "array", "no-method", "bool-id", "other-method", "second-initialize"],
)
def test_anything_else_is_a_json_rpc_error(desk: Desk, message: Any, code: int) -> None:
    reply(desk, INITIALIZE)
    answer = reply(desk, message)
    assert answer["error"]["code"] == code and "result" not in answer


def test_the_handover_holds_the_handshake_and_not_the_tool_calls(desk: Desk) -> None:
    for message in (INITIALIZE, INITIALIZED, TOOLS, call(3), {"jsonrpc": "2.0", "id": 4,
                    "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/cancelled"}):  # fmt: skip
        reply(desk, message)
    handover = json.loads(desk.handover())
    methods = [json.loads(line)["method"] for line in handover["lines"]]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "ping"]
    assert [request_id for request_id, _ in handover["sent"]] == [1, 2, 4]


# ---------------------------------------------------------------- the desk as a process


class Client:
    """The desk run as the launcher runs it, with a bare interpreter; lines in and out."""

    def __init__(self, root: Path, data: Path, cache: Path) -> None:
        boot = (
            "import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from legion_llm.mcp.firststart import main; sys.exit(main(sys.argv[1:]))"
        )
        venv = data / "venv-test"
        args = [str(ANSWERS), str(venv), str(data / "install.lock"), str(data / "install.log")]
        env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache), "LEGION_LLM_ENGINE": "offline",
               "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
        self.venv = venv
        self.process = subprocess.Popen(
            [*BARE, "-B", "-c", boot, str(REPO), *args, "mcp", "--root", str(root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root,
        )  # fmt: skip

    def send(self, message: Any) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write((json.dumps(message) + "\n").encode())
        stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        readable, _, _ = select.select([stdout], [], [], timeout)
        assert readable, "no answer"
        found: dict[str, Any] = json.loads(stdout.readline())
        return found

    def close(self) -> tuple[bytes, str]:
        rest, err = self.process.communicate(timeout=120)
        return rest, err.decode()

    def ready(self) -> None:
        """The venv built: its stamp, and the real server as its `legion-llm`."""
        (self.venv / "bin").mkdir(parents=True)
        (self.venv / "bin" / "legion-llm").symlink_to(SERVER)
        (self.venv / ".installed").write_text("test\n", "utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """The plugin's data folder with an install under way (its lock held by this test)."""
    folder = tmp_path / "data"
    (folder / "install.lock").mkdir(parents=True)
    (folder / "install.lock" / "pid").write_text(f"{os.getpid()}\n", "utf-8")
    return folder


@pytest.mark.subprocess
def test_on_the_standard_library_alone_the_desk_answers_and_then_becomes_the_server(
    project: Path, data: Path, tmp_path: Path
) -> None:
    client = Client(project, data, tmp_path / "cache")
    started = time.monotonic()
    client.send(INITIALIZE)
    hello = client.receive()
    assert time.monotonic() - started < 5  # no SDK, no venv: the standard library answers
    assert str(project.resolve()) in hello["result"]["instructions"]
    client.send(INITIALIZED)
    client.send(TOOLS)
    listed = client.receive()
    client.send(call(3))
    assert client.receive()["result"]["isError"] is True  # not run: the venv is not there
    pid = client.process.pid
    client.ready()
    time.sleep(4 * firststart.POLL_S)  # the desk sees it while the client is quiet
    if Path("/proc").is_dir():  # the same process, now the venv's server
        assert "venv-test/bin/legion-llm" in Path(f"/proc/{pid}/cmdline").read_text()
    client.send(call(4))
    answer = client.receive()
    rest, err = client.close()
    assert answer["id"] == 4 and not answer["result"].get("isError")  # the real tool ran
    assert json.loads(answer["result"]["content"][0]["text"])["ok"] is True
    assert rest == b""  # the server sent no second answer to what the desk answered
    assert "out of date" not in err  # its own handshake answers were the desk's, byte for byte
    assert client.process.returncode == 0
    live = subprocess.run([str(SERVER), "mcp", "--root", str(project)], cwd=project, timeout=120,
                          input=json.dumps(INITIALIZE) + "\n" + json.dumps(TOOLS) + "\n",
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "c2")})  # fmt: skip
    assert [json.loads(line) for line in live.stdout.splitlines()] == [hello, listed]


@pytest.mark.subprocess
def test_a_failed_install_is_said_in_the_tool_error(
    project: Path, data: Path, tmp_path: Path
) -> None:
    (data / "install.lock" / "pid").unlink()
    (data / "install.lock").rmdir()  # the install ended without a venv
    client = Client(project, data, tmp_path / "cache")
    client.send(INITIALIZE)
    client.receive()
    client.send(call(2))
    (block,) = client.receive()["result"]["content"]
    _, err = client.close()
    assert "could not install" in block["text"] and str(data / "install.log") in block["text"]
    assert client.process.returncode == 0 and "Traceback" not in err
