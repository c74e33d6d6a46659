"""The plugin's first start, through its launcher (integrations/claude-code/bin/legion-llm) and
with a Python that has nothing but the standard library (`-S`: no site-packages at all): while
the install runs, the hooks answer in full from the plugin's source and `legion-llm mcp` answers
the handshake at once (legion_llm/mcp/firststart.py). Nothing is written outside the data folder,
and no hook fails.

The install itself is held: its lock is taken by this test, as a running install holds it."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from legion_llm.app.commands.hooks import LEARNINGS_LATER
from tests.conftest import FIXTURES, REPO

pytestmark = pytest.mark.subprocess
PLUGIN = REPO / "integrations" / "claude-code"
LAUNCHER = PLUGIN / "bin" / "legion-llm"
BASE = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    (folder / "install.lock").mkdir(parents=True)
    (folder / "install.lock" / "pid").write_text(f"{os.getpid()}\n", "utf-8")  # alive: this test
    return folder


def python(tmp_path: Path, *flags: str) -> Path:
    """A `python3` for LEGION_LLM_PYTHON: this interpreter's base, with `flags`."""
    wrapper = tmp_path / "python3"
    wrapper.write_text(f"#!/bin/sh\nexec '{BASE}' {' '.join(flags)} \"$@\"\n", "utf-8")
    wrapper.chmod(0o755)
    return wrapper


def environment(tmp_path: Path, data: Path, interpreter: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "PYTHON"))}
    return {**env, "HOME": str(tmp_path / "home"), "CLAUDE_PLUGIN_DATA": str(data),
            "LEGION_LLM_PYTHON": str(interpreter), "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "PYTHONPATH": sysconfig.get_paths()["purelib"]}  # -I: ignored  # fmt: skip


def hook(event: str, project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), "hook", event], input=json.dumps({"cwd": str(project)}),
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip


def tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_with_the_standard_library_alone_both_hooks_answer_while_the_install_runs(
    tmp_path: Path, project: Path, data: Path
) -> None:
    env = environment(tmp_path, data, python(tmp_path, "-S"))
    before, plugin = tree(project), tree(REPO / "legion_llm")
    started = hook("session-start", project, env)
    assert (started.returncode, started.stderr) == (0, "")
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("legion-llm memory briefing (13 outcome records")
    assert "Top agents: engineering-backend-architect" in context
    assert context.endswith(LEARNINGS_LATER)  # one honest line, no traceback, no yaml
    stop = hook("stop", project, env)
    assert (stop.returncode, stop.stderr) == (0, "")
    assert json.loads(stop.stdout)["systemMessage"].startswith("legion-llm: Phase 3 (FX rates)")
    assert tree(project) == before and tree(REPO / "legion_llm") == plugin  # nothing written
    assert sorted(p.name for p in data.iterdir()) == ["install.lock", "pycache"]
    assert not (tmp_path / "home").exists()


def test_the_hooks_answer_the_same_as_the_installed_program_once_yaml_is_there(
    tmp_path: Path, project: Path, data: Path
) -> None:
    """Where the system Python has PyYAML, the first session's briefing is the whole one."""
    if subprocess.run([str(BASE), "-I", "-c", "import yaml"], capture_output=True).returncode:
        pytest.skip(f"{BASE} has no PyYAML")
    env = environment(tmp_path, data, python(tmp_path))
    early = hook("session-start", project, env)
    installed = subprocess.run(
        [sys.executable, "-m", "legion_llm", "hook", "session-start"], capture_output=True,
        input=json.dumps({"cwd": str(project)}), text=True, timeout=60,
    )  # fmt: skip
    assert early.stdout == installed.stdout and "## Project Learnings" in early.stdout


def test_a_hook_without_python_3_11_exits_0_in_one_line(
    tmp_path: Path, project: Path, data: Path
) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in ("python3.14", "python3.13", "python3.12", "python3.11", "python3", "too-old"):
        (old / name).write_text("#!/bin/sh\nexit 1\n", "utf-8")
        (old / name).chmod(0o755)
    env = {**environment(tmp_path, data, old / "too-old"), "PATH": f"{old}:/usr/bin:/bin"}
    done = subprocess.run([str(LAUNCHER), "hook", "stop"], input="{}", env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == "legion-llm: no Python 3.11 or newer on PATH (set LEGION_LLM_PYTHON)\n"


def test_the_mcp_server_answers_the_handshake_at_once_while_the_install_runs(
    tmp_path: Path, project: Path, data: Path
) -> None:
    env = environment(tmp_path, data, python(tmp_path, "-S"))
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "first-start", "version": "1"}}}  # fmt: skip
    started = time.monotonic()
    with subprocess.Popen([str(LAUNCHER), "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=project) as server:  # fmt: skip
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write((json.dumps(hello) + "\n").encode())
        server.stdin.flush()
        readable, _, _ = select.select([server.stdout], [], [], 30)
        answered_s = time.monotonic() - started
        if not readable:
            server.kill()
            pytest.fail("no answer to initialize in 30 s")
        answer = json.loads(server.stdout.readline())
        calls = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "memory_summary", "arguments": {}}}  # fmt: skip
        rest, err = server.communicate((json.dumps(calls) + "\n").encode(), timeout=60)
    assert answered_s < 5  # Claude Code gives a server 30 s; pip needs about a minute
    assert answer["result"]["serverInfo"]["name"] == "legion-llm"
    assert str(project.resolve()) in answer["result"]["instructions"]
    assert json.loads(rest)["result"]["isError"] is True
    assert "still installing" in json.loads(rest)["result"]["content"][0]["text"]
    assert server.returncode == 0 and b"Traceback" not in err
    assert sorted(p.name for p in data.iterdir()) == ["install.lock", "pycache"]
