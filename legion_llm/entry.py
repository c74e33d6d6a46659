"""The `legion-llm` program: the command line (cli/) with the MCP server's `legion-llm mcp`
(mcp/) plugged into it. The one module that knows both front ends: neither imports the other,
and each reaches the application layer (app/) on its own."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from legion_llm.cli.fast import COMMON, Plugin


def _serve() -> Callable[..., int]:
    from legion_llm.mcp import serve

    return serve


def _mcp_command() -> Callable[..., None]:
    from legion_llm.mcp.command import mcp_cmd

    return mcp_cmd


MCP = Plugin("mcp", COMMON, _serve, _mcp_command, after="trust")
PLUGINS = (MCP,)


def main(argv: list[str] | None = None) -> None:
    sys.exit(run(sys.argv[1:] if argv is None else argv))


def run(argv: list[str], *, fast: bool = True) -> int:
    """Run one command line and return its exit code (`fast`: as cli/app.py's `run`)."""
    from legion_llm.cli.app import run as cli_run

    return cli_run(argv, fast=fast, plugins=PLUGINS)


def command_names() -> list[str]:
    """Every top-level command, the plugins' included."""
    from legion_llm.cli import COMMANDS

    return [*COMMANDS, *(plugin.name for plugin in PLUGINS)]


def build_app(only: str | None = None) -> Any:
    """The whole typer app, the plugins' commands included (for --help and the tests)."""
    from legion_llm.cli.typer_app import build_app as build

    return build(only, PLUGINS)
