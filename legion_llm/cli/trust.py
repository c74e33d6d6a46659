"""`legion-llm trust [--revoke]` (the use case, and why it is the CLI's alone:
app/commands/trust.py)."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.commands.trust import trust_result
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common


def trust_cmd(
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Stop trusting this project's settings.json.")
    ] = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Trust this project's settings.json to choose the claude CLI, the API host or weaker
    redaction (recorded outside the repository; a changed file needs trusting again)."""
    c = common(root, today, json_)
    finish(trust_result(c, revoke), c)
