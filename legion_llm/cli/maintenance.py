"""`legion-llm init`, `legion-llm briefing` and `legion-llm prune`."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.commands.outcomes import prune_result
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common


def briefing(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """Session briefing: recent high-signal outcomes, top agents, record count.

    Score is importance × recency; success rate and avg importance are over each agent's records."""
    from legion_llm.cli.fast import briefing as run  # the same call the fast path makes

    code = run(root, today, json_)
    if code:
        raise typer.Exit(code)


def prune_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would move.")] = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Archive old, low-importance outcomes to ARCHIVE.md (spec section 7.5)."""
    c = common(root, today, json_)
    finish(prune_result(c, dry_run), c)


def init_cmd(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """Start a project's memory: make .planning/memory/ in this folder (or --root).

    In a folder of a project, its root. Idempotent; says what it made. The add commands,
    outside a project, refuse to start one by themselves."""
    from legion_llm.app.commands.init import init_result

    c = common(root, today, json_)  # inside a project, its root (no project in a project)
    finish(init_result(c), c)
