"""The Claude Code drop-in files cannot rot: every `legion-llm ...` line in the skills parses against
the real CLI (command names, options, required values, types), every MCP tool they name exists,
the .mcp.json entry starts the server, and both skills keep the silent-skip rule."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer

from legion_llm.entry import build_app
from legion_llm.mcp.server import build_server
from tests.conftest import REPO

INTEGRATION = REPO / "integrations/claude-code"
SKILLS = sorted(INTEGRATION.glob("skills/*/SKILL.md"))
COMMAND = re.compile(r"`(legion-llm [^`]+)`")
MCP_TOOL = re.compile(r"MCP `([a-z_]+)`")
MCP_CHOICE = re.compile(r"MCP `([a-z_]+)` `(kind|view): \"([a-z_]+)\"`")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
SHELL = {"|", "||", "&&", ";", "<", ">", "2>&1"}


def command_lines() -> list[tuple[str, str]]:
    found = []
    for skill in SKILLS:
        for line in COMMAND.findall(skill.read_text(encoding="utf-8")):
            found.append((skill.parent.name, line))
    return found


def argv(line: str) -> list[str]:
    """The arguments after `legion-llm`, up to any shell operator; {placeholders} become `x`."""
    words = shlex.split(line)[1:]
    cut = next((i for i, word in enumerate(words) if word in SHELL), len(words))
    return [PLACEHOLDER.sub("x", word) for word in words[:cut]]


def parse(args: list[str]) -> Any:
    """Parse like the real CLI without running: unknown commands or options, missing required
    options and wrong types all raise. (typer 0.29 vendors click: groups are found by `commands`.)"""
    command: Any = typer.main.get_command(build_app())
    path, rest = ["legion-llm"], list(args)
    while getattr(command, "commands", None):
        name = rest.pop(0)
        assert name in command.commands, f"no command {' '.join([*path, name])!r}"
        command, path = command.commands[name], [*path, name]
    return command.make_context(" ".join(path), rest)


def test_there_are_two_skills_with_many_operations() -> None:
    assert [skill.parent.name for skill in SKILLS] == ["memory-manager", "mission-memory"]
    counts = {name: sum(1 for n, _ in command_lines() if n == name) for name in ("memory-manager",
              "mission-memory")}  # fmt: skip
    assert counts["memory-manager"] >= 20 and counts["mission-memory"] >= 3


@pytest.mark.parametrize(("skill", "line"), command_lines())
def test_every_command_line_parses_against_the_cli(skill: str, line: str, cli: Any) -> None:
    args = argv(line)
    parse(args)
    assert "--json" in args, f"{skill}: {line} (every operation returns the JSON shape shown)"
    assert cli(*args, "--help").exit_code == 0, line


def test_every_mcp_tool_named_in_the_skills_exists(tmp_path: Path) -> None:
    listed = {tool.name: tool for tool in anyio.run(build_server(tmp_path).list_tools)}
    named = {name for skill in SKILLS for name in MCP_TOOL.findall(skill.read_text())}
    assert named and named <= set(listed), named - set(listed)
    choices = [c for skill in SKILLS for c in MCP_CHOICE.findall(skill.read_text())]
    assert choices  # `kind: "outcome"`, `view: "signals"`: a value the tool takes
    for tool, argument, value in choices:
        assert value in listed[tool].input_schema["properties"][argument]["enum"], (tool, value)


@pytest.mark.parametrize("skill", SKILLS, ids=lambda p: p.parent.name)
def test_skills_have_frontmatter_and_skip_memory_silently(skill: Path) -> None:
    text = skill.read_text(encoding="utf-8")
    front = text.split("---\n")[1]
    assert f"name: {skill.parent.name}\n" in front and "description: " in front
    assert "command -v legion-llm" in text
    assert re.search(r"not installed.{0,40}\*\*skip [a-z -]+silently\*\*", text, re.DOTALL)


def test_mcp_json_starts_the_server_on_the_project_root() -> None:
    """The plugin's server: its launcher serving `mcp` in the folder Claude Code starts it in
    (the project; the root is discovered from there)."""
    config = json.loads((INTEGRATION / ".mcp.json").read_text(encoding="utf-8"))
    server = config["mcpServers"]["legion-llm"]
    assert server["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/legion-llm"
    assert server["args"] == ["mcp"]
    assert parse(server["args"]).params["root"] is None
