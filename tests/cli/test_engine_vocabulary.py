"""One engine vocabulary: `--engine` takes exactly the values docs/engines.md's table lists, on
every command that has it, and the MCP tools' `engine` argument takes the same; `host` is the host
route (--prepare / --proposal), refused as an --engine value in one line that points to it;
`sampling` on the command line says in one line that it works only inside `legion-llm mcp`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from legion_llm.app.session import HOST_ROUTE
from legion_llm.cli import COMMANDS
from legion_llm.cli.llm import ENGINE_HELP
from legion_llm.llm.config import ENGINE_CHOICES
from tests.conftest import REPO

# Every command line with --engine, with what it needs besides (it is refused before it runs).
ENGINE_COMMANDS = [
    ["compact", "3"], ["distill"], ["learnings", "extract", "."],
    ["errors", "add", "--signature", "E: x", "--fix", "f", "--agent", "a"],
    ["errors", "match", "E: x"], ["llm", "check"], ["llm", "selftest"],
    ["eval", "compaction"], ["eval", "errors"], ["eval", "learnings"], ["eval", "distill"],
    ["demo"],
]  # fmt: skip


def _commands_with_engine() -> set[str]:
    """Every command of the typer app that declares --engine, as 'group name'."""
    from legion_llm.entry import build_app

    found: set[str] = set()

    def walk(command: Any, words: list[str]) -> None:
        for sub_name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*words, sub_name])
        if any("--engine" in getattr(p, "opts", ()) for p in getattr(command, "params", [])):
            found.add(" ".join(words))

    walk(typer.main.get_command(build_app()), [])
    return found


def test_the_list_of_commands_here_is_every_command_with_an_engine() -> None:
    listed = {" ".join(w for w in args if not w.startswith("-") and w not in ("3", ".", "E: x",
              "f", "a")) for args in ENGINE_COMMANDS}  # fmt: skip
    assert _commands_with_engine() == listed
    assert set(COMMANDS) >= {args[0] for args in ENGINE_COMMANDS}


def docs_engines() -> list[str]:
    """The first column of docs/engines.md's `--engine` table."""
    text = (REPO / "docs/engines.md").read_text(encoding="utf-8")
    table = text[text.index("| `--engine` |") :].split("\n\n")[0]
    return re.findall(r"^\| `([a-z-]+)`", table, flags=re.M)[1:]  # past the header row


def test_the_docs_table_lists_exactly_the_engine_choices() -> None:
    assert docs_engines() == list(ENGINE_CHOICES)
    for engine in ENGINE_CHOICES:
        assert engine in ENGINE_HELP
    assert "host" not in ENGINE_HELP.split(";")[0]  # the values; host is named only as a route


@pytest.mark.parametrize("args", ENGINE_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_engine_command_refuses_host_pointing_to_the_host_route(
    args: list[str], cli: Any, project: Path
) -> None:
    root = project / "new" if args == ["demo"] else project
    before = sorted(project.rglob("*"))
    result = cli(*args, "--engine", "host", "--root", root)
    assert result.exit_code == 2
    assert result.stderr == f"error: {HOST_ROUTE}\n" and result.stdout == ""
    assert sorted(project.rglob("*")) == before


@pytest.mark.parametrize("args", ENGINE_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_sampling_on_the_command_line_says_where_it_works(
    args: list[str], cli: Any, project: Path
) -> None:
    root = project / "new" if args == ["demo"] else project
    result = cli(*args, "--engine", "sampling", "--root", root)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --engine sampling works only inside `legion-llm mcp` (the client's model)\n"
    )


def test_an_unknown_engine_lists_the_choices(cli: Any, project: Path) -> None:
    result = cli("errors", "add", "--signature", "E: x", "--fix", "f", "--agent", "a",
                 "--engine", "gpt", "--root", project)  # fmt: skip
    assert result.exit_code == 2
    assert (
        result.stderr == f"error: --engine must be one of {', '.join(ENGINE_CHOICES)}, not 'gpt'\n"
    )
    assert not (project / ".planning/memory").exists()


def test_every_mcp_engine_argument_takes_exactly_the_engine_choices(tmp_path: Path) -> None:
    import anyio
    from mcp.client.client import Client

    from legion_llm.mcp.server import build_server

    async def listed() -> list[Any]:
        async with Client(build_server(tmp_path)) as client:
            return list((await client.list_tools()).tools)

    tools = anyio.run(listed)
    with_engine = [t for t in tools if "engine" in t.input_schema.get("properties", {})]
    assert len(with_engine) >= 5
    for tool in with_engine:
        schema = tool.input_schema["properties"]["engine"]
        values = set(
            schema.get("enum") or [v for p in schema.get("anyOf", []) for v in p.get("enum", [])]
        )
        assert values - {"host"} == set(ENGINE_CHOICES), tool.name  # host: the route, not an engine
        assert ("host" in values) == ("host:" in schema["description"]), tool.name
