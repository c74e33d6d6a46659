"""The typer declarations of the options every command takes (--root, --today, --json, --branch),
and `finish`; the values are built by cli/render.py (no typer, for the fast path)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult
from legion_llm.cli.render import deliver

RootOpt = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Project folder (default: nearest folder upward holding .planning/, else this one).",
    ),
]
TodayOpt = Annotated[
    str | None, typer.Option("--today", help="Use this date (YYYY-MM-DD) as today.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")]
BranchOpt = Annotated[str, typer.Option("--branch", help="all, current, or a branch name.")]


def finish(result: CommandResult, options: Common) -> None:
    code = deliver(result, options)
    if code:
        raise typer.Exit(code)
