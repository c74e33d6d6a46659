"""The hot commands import only what they use (`python -X importtime`, whole process): no typer,
no pydantic, no pipeline, no LLM layer, no tiktoken, no SDK. The LLM layer's two leaf modules
every output passes through (llm/scrub.py masks keys, llm/errors.py names failures) import
nothing but the standard library and legion_llm.errors, and are allowed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

pytestmark = pytest.mark.subprocess

HEAVY = (
    "typer", "click", "pydantic", "pydantic_core", "legion_llm.pipeline", "tiktoken",
    "tiktoken_ext", "anthropic", "httpx", "httpx2", "tenacity", "mcp", "mcp_types", "anyio",
    "yaml", "rapidfuzz", "starlette",
)  # fmt: skip
LIGHT_LLM = {"legion_llm.llm", "legion_llm.llm.scrub", "legion_llm.llm.errors"}


def imported(args: list[str], cwd: Path, stdin: str = "") -> set[str]:
    """Every module the whole `legion-llm ARGS` process imports."""
    env = {**os.environ, "COLUMNS": "100", "LEGION_LLM_ENGINE": "offline"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "legion_llm", *args], input=stdin,
        capture_output=True, text=True, cwd=cwd, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [
        line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    return {parts[2].strip() for parts in lines if len(parts) == 3} - {"package"}


def too_heavy(modules: set[str]) -> list[str]:
    heavy = [m for m in modules if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    llm = [m for m in modules if m.startswith("legion_llm.llm.") and m not in LIGHT_LLM]
    return sorted(heavy + llm)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hot") / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ["outcomes", "recall", "--json"],
        ["outcomes", "recall", "--limit", "5", "--agent", "engineering-backend-architect"],
        ["briefing", "--json"],
        ["briefing"],
    ],
    ids=" ".join,
)
def test_a_hot_command_imports_nothing_heavy(demo: Path, args: list[str]) -> None:
    modules = imported([*args, "--root", str(demo), "--today", "2026-06-15"], demo)
    assert "legion_llm.cli.fast" in modules  # answered by the fast path
    assert too_heavy(modules) == []
    if "--json" in args:
        assert not any(m.split(".")[0] == "rich" for m in modules)  # tables only for humans


def test_the_mcp_front_desk_imports_nothing_heavy_before_the_sdk_is_needed(demo: Path) -> None:
    code = (
        "import legion_llm.entry, legion_llm.cli.app, legion_llm.cli.fast, legion_llm.mcp.frontdesk"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, timeout=60
    )
    lines = [
        line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    assert too_heavy({parts[2].strip() for parts in lines if len(parts) == 3}) == []


def test_the_mcp_server_answers_initialize_without_the_command_line_parser(demo: Path) -> None:
    """`legion-llm mcp` reaches the server through the fast path: the MCP front end never
    imports the CLI's commands, so typer (the CLI's parser) is not loaded to serve tools."""
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
    modules = imported(["mcp", "--root", str(demo)], demo, json.dumps(hello) + "\n")
    assert "legion_llm.mcp.server" in modules and "legion_llm.mcp.tools_memory" in modules
    assert sorted(m for m in modules if m.split(".")[0] == "typer") == []
    assert sorted(m for m in modules if m.startswith("legion_llm.cli.")) == [
        "legion_llm.cli.app", "legion_llm.cli.fast", "legion_llm.cli.render",
    ]  # fmt: skip


# The plugin's hooks (cli/hook.py) run on every Claude Code session start and stop. SessionStart
# reads the mission learnings, whose frontmatter is YAML: PyYAML is the one heavy module it may
# import, and only when .mission-control/memory/ holds learnings (the demo project does).
HOOK_ALLOWED = {"session-start": {"yaml"}, "stop": set()}


@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_the_plugin_hooks_import_nothing_heavy(demo: Path, event: str) -> None:
    payload = f'{{"hook_event_name": "x", "cwd": "{demo}", "session_id": "s"}}'
    modules = imported(["hook", event], demo, payload)
    assert "legion_llm.cli.fast" in modules  # answered by the fast path
    assert "legion_llm.memory.phases.find" in modules or event != "stop"  # it did look
    assert [m for m in too_heavy(modules) if m.split(".")[0] not in HOOK_ALLOWED[event]] == []


def test_the_session_start_hook_imports_no_yaml_without_learnings(
    demo: Path, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    shutil.copytree(demo / ".planning", root / ".planning")
    payload = f'{{"hook_event_name": "SessionStart", "cwd": "{root}", "session_id": "s"}}'
    assert too_heavy(imported(["hook", "session-start"], root, payload)) == []
