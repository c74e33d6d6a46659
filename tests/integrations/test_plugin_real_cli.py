"""The plugin through the real Claude Code CLI (npm, in a temp prefix: the fixture of
tests/llm/test_claude_code_real.py, skipped without npm or the registry).

HOME and CLAUDE_CONFIG_DIR are temp folders, so the user's ~/.claude is never read or touched;
non-essential traffic is off and the API host is a loopback fake, so nothing leaves the machine.
`claude plugin marketplace add` takes this checkout, `claude plugin install legion-llm@legion-llm`
copies the plugin into the temp config's cache, and `claude plugin details` lists what it brings.
The slow tests then start Claude Code right after the install: with the venv build held, the first
session gets the hooks' answers and a connected server (the plugin's first-start path, printed
times in `-s` output); with the build running, `claude mcp list` connects while pip works, and once
the venv is built a real session uses it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from legion_llm.app.commands.hooks import LEARNINGS_LATER
from tests.conftest import FIXTURES, REPO
from tests.fakes import FakeMessagesAPI, Reply
from tests.llm.test_claude_code_real import real_claude

pytestmark = [pytest.mark.real_claude_cli, pytest.mark.slow, pytest.mark.subprocess]
PLUGIN = REPO / "integrations" / "claude-code"
__all__ = ["real_claude"]  # the session fixture: one npm install for both modules' tests


def claude_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC_"))}
    return {
        **env, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", **extra,
    }  # fmt: skip


def claude(cli: Path, env: dict[str, str], *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=180)  # fmt: skip
    assert done.returncode == 0, f"claude {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture
def installed(real_claude: Path, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], Path]]:
    """The plugin installed from this checkout into a temp config: (cli, env, install path)."""
    home = tmp_path / "home"
    home.mkdir()
    env = claude_env(home)
    claude(real_claude, env, "plugin", "marketplace", "add", str(REPO))
    claude(real_claude, env, "plugin", "install", "legion-llm@legion-llm")
    registry = json.loads((home / ".claude/plugins/installed_plugins.json").read_text("utf-8"))
    (entry,) = registry["plugins"]["legion-llm@legion-llm"]
    yield real_claude, env, Path(entry["installPath"])


def test_the_manifests_validate_strictly(real_claude: Path, tmp_path: Path) -> None:
    env = claude_env(tmp_path)
    assert "Validation passed" in claude(
        real_claude, env, "plugin", "validate", "--strict", str(REPO)
    )
    shown = claude(real_claude, env, "plugin", "validate", "--strict", str(PLUGIN))
    assert "Validation passed" in shown


def test_install_brings_the_skills_the_hooks_and_the_mcp_server(
    installed: tuple[Path, dict[str, str], Path],
) -> None:
    cli, env, _ = installed
    shown = claude(cli, env, "plugin", "details", "legion-llm@legion-llm")
    skills = sorted(p.name for p in (PLUGIN / "skills").iterdir() if (p / "SKILL.md").is_file())
    events = list(json.loads((PLUGIN / "hooks/hooks.json").read_text("utf-8"))["hooks"])
    servers = list(json.loads((PLUGIN / ".mcp.json").read_text("utf-8"))["mcpServers"])
    rows = dict(re.findall(r"(?m)^\s*((?:Skills|Hooks|MCP servers) \(\d+\))\s+(.*)$", shown))
    assert rows[f"Skills ({len(skills)})"].split(", ") == skills
    assert rows[f"Hooks ({len(events)})"].startswith(", ".join(events))
    assert rows[f"MCP servers ({len(servers)})"].split()[0] == servers[0]
    listed = claude(cli, env, "plugin", "list")
    assert "legion-llm@legion-llm" in listed


def test_the_installed_copy_holds_the_source_itself(
    installed: tuple[Path, dict[str, str], Path],
) -> None:
    _, _, copy = installed
    source = copy / "source"
    assert not (source / "pyproject.toml").is_symlink()  # the cache copied what the link names
    assert (source / "pyproject.toml").read_bytes() == (REPO / "pyproject.toml").read_bytes()
    hook = source / "legion_llm" / "cli" / "hook.py"
    assert hook.read_bytes() == (REPO / "legion_llm/cli/hook.py").read_bytes()
    assert os.access(copy / "bin" / "legion-llm", os.X_OK)
    handshake = (PLUGIN / "mcp-handshake.json").read_bytes()  # the first start's answers
    assert (copy / "mcp-handshake.json").read_bytes() == handshake


def test_uninstall_removes_the_plugin(installed: tuple[Path, dict[str, str], Path]) -> None:
    cli, env, _ = installed
    claude(cli, env, "plugin", "uninstall", "legion-llm@legion-llm")
    assert "legion-llm@legion-llm" not in claude(cli, env, "plugin", "list")


def snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def test_the_installed_launcher_builds_once_and_a_real_session_uses_the_plugin(
    installed: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    cli, env, copy = installed
    env = {**env, **offline_pip()}  # the venv built below sees its dependencies only so
    data = Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "legion-llm-legion-llm"
    launcher = copy / "bin" / "legion-llm"
    before = snapshot(copy)
    project = tmp_path / "project"
    _copy_demo(project)
    run_env = {**env, "CLAUDE_PLUGIN_DATA": str(data), "LEGION_LLM_INSTALL_TIMEOUT": "600"}
    started = time.monotonic()  # the first start: the server answers while pip builds the venv
    health = claude(cli, env, "mcp", "list", cwd=project)
    listed_s = time.monotonic() - started
    assert re.search(r"(?m)^plugin:legion-llm:legion-llm: .* Connected$", health), health
    assert listed_s < LIMIT_S and not list(data.glob("venv-*/.installed"))
    first = subprocess.run([str(launcher), "briefing", "--json"], capture_output=True, text=True,
                           env=run_env, cwd=project, timeout=700)  # fmt: skip
    built_s = time.monotonic() - started
    assert first.returncode == 0, first.stderr + (data / "install.log").read_text("utf-8")
    assert json.loads(first.stdout)["ok"] is True  # stdout is the command's alone
    assert "installing legion-llm" in (data / "install.log").read_text("utf-8")
    assert snapshot(copy) == before  # nothing written into the plugin
    (venv,) = data.glob("venv-*")
    stamp = (venv / ".installed").stat().st_mtime_ns
    again = subprocess.run([str(launcher), "hook", "stop"], input=json.dumps({"cwd": str(project)}),
                           capture_output=True, text=True, env=run_env, timeout=60)  # fmt: skip
    assert again.returncode == 0 and "Phase 3" in json.loads(again.stdout)["systemMessage"]
    assert again.stderr == "" and (venv / ".installed").stat().st_mtime_ns == stamp  # no reinstall

    health = claude(cli, env, "mcp", "list", cwd=project)
    assert "plugin:legion-llm:legion-llm" in health and "Connected" in health

    with FakeMessagesAPI() as api:
        api.responder = lambda request: Reply.text("ok")
        session_env = {**env, "ANTHROPIC_BASE_URL": api.base_url,
                       "CLAUDE_CODE_OAUTH_TOKEN": "oauth-dummy-token-for-tests"}  # fmt: skip
        claude(cli, session_env, "-p", "hello", "--max-turns", "1", "--debug", cwd=project)
        sent = json.dumps([call.body for call in api.calls()])
    assert "legion-llm memory briefing" in sent  # the SessionStart context reached the model
    assert "Project Learnings" in sent
    debug = (Path(env["CLAUDE_CONFIG_DIR"]) / "debug" / "latest").read_text("utf-8")
    assert "Plugin loading errors" not in debug and "[ERROR]" not in debug
    assert 'MCP server "plugin:legion-llm:legion-llm": Successfully connected' in debug
    assert '{"systemMessage": "legion-llm: Phase 3 (FX rates) is complete' in debug  # Stop ran
    print(f"\nfirst start: `claude mcp list` {listed_s:.1f} s (Connected) while pip builds the "
          f"venv; the venv ready after {built_s:.0f} s")  # fmt: skip


# ---------------------------------------------------------------- the first session

LIMIT_S = 30.0  # how long Claude Code gives an MCP server to start
HOLDING = """#!/bin/sh
# The launcher's Python, whose install waits at its first step (`-m venv`) while {hold} exists
# (then fails): the whole first session runs while the venv is being built.
if [ "$1" = -m ] && [ "$2" = venv ]; then
    while [ -e '{hold}' ]; do sleep 0.2; done
    exit 1
fi
exec '{python}' "$@"
"""


def test_the_first_session_gets_the_hooks_and_a_connected_server_while_the_venv_builds(
    installed: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> None:
    """Right after `claude plugin install`, with no venv: `claude mcp list` says Connected in
    Claude Code's start-up limit, the SessionStart context reaches the model, the tools are
    listed to it, a tool call is answered with the honest 'still installing' error, and the Stop
    hook speaks; all while the install runs (held at its first step, so it cannot finish)."""
    cli, env, copy = installed
    data = Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "legion-llm-legion-llm"
    project = tmp_path / "project"
    _copy_demo(project)
    hold = tmp_path / "hold"
    hold.touch()
    python = tmp_path / "python3"
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    python.write_text(HOLDING.format(hold=hold, python=base), encoding="utf-8")
    python.chmod(0o755)
    env = {**env, "LEGION_LLM_PYTHON": str(python)}
    before = snapshot(copy)
    try:
        started = time.monotonic()
        health = claude(cli, env, "mcp", "list", cwd=project)
        listed_s = time.monotonic() - started
        assert re.search(r"(?m)^plugin:legion-llm:legion-llm: .* Connected$", health), health
        assert listed_s < LIMIT_S
        assert (data / "install.lock").is_dir()  # the install runs: started by the launcher

        tools = json.loads((copy / "mcp-handshake.json").read_text("utf-8"))["answers"]
        name = tools["tools/list"]["*"]["tools"][0]["name"]
        tool = f"mcp__plugin_legion-llm_legion-llm__{name}"
        with FakeMessagesAPI() as api:
            api.responder = lambda request: (
                Reply.tool({}, name=tool)
                if tool in json.dumps(request.body.get("tools"))
                and "tool_result" not in json.dumps(request.body["messages"])
                else Reply.text("ok")
            )
            session_env = {**env, "ANTHROPIC_BASE_URL": api.base_url,
                           "CLAUDE_CODE_OAUTH_TOKEN": "oauth-dummy-token-for-tests"}  # fmt: skip
            started = time.monotonic()
            claude(cli, session_env, "-p", "hello", "--max-turns", "3", "--debug",
                   "--allowedTools", tool, cwd=project)  # fmt: skip
            session_s = time.monotonic() - started
            sent = json.dumps([call.body for call in api.calls()])
        assert not list(data.glob("venv-*/.installed"))  # all of it before the venv was built
    finally:
        hold.unlink()  # the held install fails and lets its lock go
    assert "legion-llm memory briefing (13 outcome records" in sent  # SessionStart reached it
    has_yaml = subprocess.run([str(base), "-I", "-c", "import yaml"]).returncode == 0
    assert ("Project Learnings" if has_yaml else LEARNINGS_LATER) in sent  # whether PyYAML is there
    assert tool in sent  # the tools the desk listed reached the model
    assert "legion-llm is still installing its Python environment" in sent  # the tool's answer
    debug = (Path(env["CLAUDE_CONFIG_DIR"]) / "debug" / "latest").read_text("utf-8")
    assert 'MCP server "plugin:legion-llm:legion-llm": Successfully connected' in debug
    assert '{"systemMessage": "legion-llm: Phase 3 (FX rates) is complete' in debug  # Stop ran
    assert snapshot(copy) == before  # nothing written into the plugin
    print(f"\nfirst session: `claude mcp list` {listed_s:.1f} s (Connected), "
          f"`claude -p` session {session_s:.1f} s")  # fmt: skip


def offline_pip() -> dict[str, str]:
    """The launcher's pip with no network: the dependencies (and hatchling, to build the
    source) are this test interpreter's, seen through PYTHONPATH, and pip may not use an index.
    The launcher's venv still gets its own non-editable legion-llm built from the plugin copy."""
    site = sysconfig.get_paths()["purelib"]
    return {"PYTHONPATH": site, "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}


def _copy_demo(target: Path) -> None:
    import shutil

    shutil.copytree(FIXTURES / "demo-project", target)
