"""`legion-llm hook ...` for typer (--help, and any command line cli/fast.py leaves to typer):
the same functions as the fast path, in cli/hook.py, which imports no typer."""

from __future__ import annotations

import typer

from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt
from legion_llm.cli.hook import session_start_cmd, stop_cmd

app = typer.Typer(
    no_args_is_help=True,
    help="The Claude Code plugin's hooks: each reads the hook JSON on stdin and exits 0. "
    "--root: the project instead of the JSON's cwd; --json: accepted, the answer is JSON.",
)


@app.command("session-start")
def session_start(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """SessionStart: the memory briefing and the mission learnings as added context."""
    raise typer.Exit(session_start_cmd(root, today, json_))


@app.command("stop")
def stop(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """Stop: one line naming complete phases not compacted yet; silent when none."""
    raise typer.Exit(stop_cmd(root, today, json_))
