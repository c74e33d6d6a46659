"""The typer declarations of the options every command takes (--root, --today, --json, --branch),
and `finish`; the values, the result and the option parsers are in cli/result.py (no typer)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.cli.result import (
    MAX_STORED_CHARS,
    CommandResult,
    Common,
    check_stored_sizes,
    common,
    deliver,
    parse_today,
    resolve_branch,
    split_option,
)

__all__ = [
    "MAX_STORED_CHARS",
    "BranchOpt",
    "CommandResult",
    "Common",
    "JsonOpt",
    "RootOpt",
    "TodayOpt",
    "check_stored_sizes",
    "common",
    "finish",
    "parse_today",
    "resolve_branch",
    "split_option",
]

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
