"""The plugin's files agree with each other and with the package, and the launcher behaves
(integrations/claude-code/bin/legion-llm, POSIX sh) without building anything: a ready
environment is a stub script, a missing Python is a PATH of impostors.

The real install (pip, about a minute) runs once, in tests/integrations/test_plugin_real_cli.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from legion_llm import __version__
from legion_llm.cli import fast
from tests.conftest import REPO

PLUGIN = REPO / "integrations" / "claude-code"
LAUNCHER = PLUGIN / "bin" / "legion-llm"
VERSION = __version__  # pyproject.toml reads it from legion_llm/__init__.py, as the launcher does
EVENTS = {"SessionStart": "session-start", "Stop": "stop"}


def load(path: Path) -> dict:  # type: ignore[type-arg]
    found: dict = json.loads(path.read_text("utf-8"))  # type: ignore[type-arg]
    return found


def test_the_marketplace_lists_the_plugin_in_this_repository() -> None:
    marketplace = load(REPO / ".claude-plugin" / "marketplace.json")
    (entry,) = marketplace["plugins"]
    assert entry["name"] == marketplace["name"] == "legion-llm"
    assert (REPO / entry["source"]).resolve() == PLUGIN
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "legion-llm"
    assert manifest["version"] == VERSION  # a release changes both: Claude Code updates on it
    assert "hooks" not in manifest  # hooks/hooks.json loads by itself; naming it fails the plugin
    assert (PLUGIN / manifest["skills"]).is_dir()
    assert (PLUGIN / manifest["mcpServers"]).is_file()


def test_each_hook_runs_its_fast_command_through_the_launcher() -> None:
    hooks = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert set(hooks) == set(EVENTS)
    for event, groups in hooks.items():
        ((command,),) = [group["hooks"] for group in groups]
        assert command["type"] == "command" and command["timeout"] <= 30
        assert (
            command["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/bin/legion-llm" hook {EVENTS[event]}'
        )
        assert fast.spec_of(("hook", EVENTS[event])) is not None


def test_the_mcp_server_is_the_launcher_serving_mcp() -> None:
    (server,) = load(PLUGIN / ".mcp.json")["mcpServers"].values()
    assert server == {"command": "${CLAUDE_PLUGIN_ROOT}/bin/legion-llm", "args": ["mcp"]}
    assert os.access(LAUNCHER, os.X_OK)


def test_the_source_folder_holds_everything_the_package_build_reads() -> None:
    """source/ is what the launcher installs (pip builds it with hatchling): every file the
    build names must be there, or the installed plugin cannot build itself."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = ["pyproject.toml", project["project"]["readme"], *wheel["packages"]]
    needed += list(wheel.get("force-include", {}))
    source = PLUGIN / "source"
    for name in needed:
        assert (source / name).resolve() == (REPO / name).resolve(), name


# ---------------------------------------------------------------- the launcher


def stub_venv(data: Path, version: str = VERSION) -> Path:
    """A ready environment whose `legion-llm` prints its arguments and its stdin."""
    venv = data / f"venv-{version}"
    (venv / "bin").mkdir(parents=True)
    stub = venv / "bin" / "legion-llm"
    stub.write_text('#!/bin/sh\nprintf "ran %s\\n" "$*"\ncat\n', encoding="utf-8")
    stub.chmod(0o755)
    (venv / ".installed").write_text(f"{version}\n", encoding="utf-8")
    return venv


def launch(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "XDG_DATA"))}
    return {**env, "HOME": str(tmp_path / "home"), **extra}


@pytest.mark.subprocess
def test_a_ready_environment_is_run_with_the_arguments_and_stdin(tmp_path: Path) -> None:
    data = tmp_path / "data"
    stub_venv(data)
    done = launch("hook", "stop", env=base_env(tmp_path, CLAUDE_PLUGIN_DATA=str(data)), stdin="{}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ran hook stop\n{}", "")


@pytest.mark.subprocess
def test_the_data_folder_is_claude_codes_else_the_users_data_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fallback = stub_venv(tmp_path / "xdg" / "legion-llm" / "claude-plugin")
    env = base_env(tmp_path, XDG_DATA_HOME=str(tmp_path / "xdg"), CLAUDECODE="1")
    assert launch("briefing", env=env).stdout == "ran briefing\n"
    (fallback / "bin" / "legion-llm").write_text("#!/bin/sh\necho fallback\n", "utf-8")
    assert launch("x", env=env).stdout == "fallback\n"
    plugin_data = home / ".claude" / "plugins" / "data" / "legion-llm-legion-llm"
    stub_venv(plugin_data)  # Claude Code's folder for this plugin, once the hooks built it there
    assert launch("x", env=env).stdout == "ran x\n"
    assert launch("x", env={**env, "CLAUDECODE": ""}).stdout == "fallback\n"  # not under Claude


@pytest.fixture
def no_python(tmp_path: Path) -> str:
    """A PATH where every python3 the launcher looks for is older than 3.11."""
    impostors = tmp_path / "impostors"
    impostors.mkdir()
    for name in ("python3.14", "python3.13", "python3.12", "python3.11", "python3"):
        (impostors / name).write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        (impostors / name).chmod(0o755)
    return f"{impostors}{os.pathsep}{os.environ['PATH']}"


@pytest.mark.subprocess
def test_without_python_3_11_a_command_fails_in_words_and_a_hook_exits_0(
    tmp_path: Path, no_python: str
) -> None:
    data = tmp_path / "data"
    stub_venv(data, "0.0.1")  # an older version's environment: a new one must be built
    env = base_env(tmp_path, CLAUDE_PLUGIN_DATA=str(data), PATH=no_python)
    done = launch("briefing", "--json", env=env)
    assert done.returncode == 1 and done.stdout == ""  # stdout stays the command's
    assert f"installing legion-llm {VERSION}" in done.stderr
    assert "no Python 3.11 or newer on PATH" in done.stderr
    assert done.stderr.rstrip().endswith(f"the install failed (log: {data / 'install.log'})")
    hook = launch("hook", "session-start", env=env, stdin="{}")
    assert (hook.returncode, hook.stdout) == (0, "")  # it started the install in the background
    for _ in range(100):  # ... which fails at once again: wait for its lock to go
        if not (data / "install.lock").exists():
            break
        time.sleep(0.1)
    assert "no Python 3.11 or newer on PATH" in (data / "install.log").read_text("utf-8")
    assert sorted(p.name for p in data.iterdir()) == ["install.log", "venv-0.0.1"]  # nothing else
    assert not (tmp_path / "home").exists()


@pytest.mark.subprocess
def test_a_hook_never_waits_for_an_install_that_runs(tmp_path: Path) -> None:
    """It answers from the plugin's source meanwhile (tests/integrations/test_first_start.py
    has what it says); outside a project, nothing."""
    data = tmp_path / "data"
    (data / "install.lock").mkdir(parents=True)
    (data / "install.lock" / "pid").write_text(f"{os.getpid()}\n", "utf-8")  # alive: this test
    env = base_env(tmp_path, CLAUDE_PLUGIN_DATA=str(data))
    started = time.monotonic()
    done = launch("hook", "stop", env=env, stdin=json.dumps({"cwd": str(tmp_path)}))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert time.monotonic() - started < 10
    assert sorted(p.name for p in data.iterdir()) == ["install.lock", "pycache"]  # no 2nd install


@pytest.mark.subprocess
def test_a_broken_plugin_copy_fails_in_words(tmp_path: Path) -> None:
    copy = tmp_path / "plugin"
    shutil.copytree(PLUGIN / "bin", copy / "bin")
    env = base_env(tmp_path, CLAUDE_PLUGIN_DATA=str(tmp_path / "data"))
    done = subprocess.run([str(copy / "bin" / "legion-llm"), "briefing"], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert (
        done.stderr
        == f"legion-llm: no pyproject.toml in {copy / 'source'} (a broken plugin copy?)\n"
    )
    hook = subprocess.run([str(copy / "bin" / "legion-llm"), "hook", "stop"], capture_output=True,
                          text=True, env=env, timeout=60)  # fmt: skip
    assert hook.returncode == 0 and hook.stdout == ""
    assert not (tmp_path / "data").exists()


def test_the_sdist_skips_the_plugins_links_without_entering_them() -> None:
    """Hatch follows links and walks each real folder once: were source/ entered, the package
    would be stored under it and be missing at the top of the sdist (and of a wheel built from
    it). Measured with hatchling 1.33: without these two settings the sdist lacks legion_llm/."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    sdist = project["tool"]["hatch"]["build"]["targets"]["sdist"]
    assert "/integrations/claude-code/source" in sdist["exclude"]
    assert sdist["skip-excluded-dirs"] is True
