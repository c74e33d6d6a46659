"""`legion-llm mcp` as a typer command (for --help and the typer route); the fast path calls
`legion_llm.mcp.serve` without typer. The program's entry (legion_llm/entry.py) adds this
command to the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.mcp import serve


def mcp_cmd(
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            help="Project folder (default: nearest folder upward holding .planning/, else this one).",
        ),
    ] = None,
    today: Annotated[
        str | None, typer.Option("--today", help="Use this date (YYYY-MM-DD) as today.")
    ] = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")
    ] = False,
) -> None:
    """Serve the memory tools over MCP on stdio (for Claude Code and other MCP clients).

    The project root is fixed here, when the server starts: no tool argument can read or write
    outside it. Every tool returns the same JSON object as the matching `legion-llm ... --json`.
    --today is the date of every call that passes no `today` of its own. With --json, an error
    before the server starts (a bad --root or --today) is one JSON object on stdout; once it
    serves, stdout speaks JSON-RPC.
    """
    serve(root, today, json_)
