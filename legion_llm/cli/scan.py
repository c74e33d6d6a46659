"""`legion-llm scan [--fix]` (the use case: app/commands/scan.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.commands.scan import scan_result
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common


def scan_cmd(
    fix: Annotated[
        bool, typer.Option("--fix", help="Redact what is found, in place (atomic, locked).")
    ] = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """List secrets in the memory files and compacted summaries; --fix redacts them."""
    c = common(root, today, json_)
    finish(scan_result(c, fix), c)
