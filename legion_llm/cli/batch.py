"""`legion-llm batch status [ID]` and `legion-llm batch collect [ID] [--wait]`, and the typer
options every `--batch` command shares; the work is app/batch.py and app/commands/batches.py."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.batch import DEFAULT_INTERVAL, DEFAULT_TIMEOUT
from legion_llm.app.commands.batches import collect_result, status_result
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.llm import MaxCostOpt
from legion_llm.cli.render import common

app = typer.Typer(no_args_is_help=True, help="Message Batches: progress and collection.")

IdArg = Annotated[
    str | None, typer.Argument(help="Batch id (default: the newest one not collected yet).")
]
BatchOpt = Annotated[
    bool,
    typer.Option("--batch", help="Send every model call in ONE Message Batch (half the price)."),
]
WaitOpt = Annotated[
    bool, typer.Option("--wait", help="Poll until the batch has ended, then collect it.")
]
IntervalOpt = Annotated[
    float, typer.Option("--poll-interval", min=0, help="Seconds between polls with --wait.")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", min=0, help="Give up waiting after this many seconds.")
]


@app.command("status")
def status_cmd(
    batch_id: IdArg = None, root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False
) -> None:
    """Show a submitted batch's progress (asks the API) and what has been collected."""
    c = common(root, today, json_)
    finish(status_result(c, batch_id), c)


@app.command("collect")
def collect_cmd(
    batch_id: IdArg = None,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    max_cost: MaxCostOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Download a batch's results and settle each case through the same verify, re-ask, repair
    and write as a direct run (a re-ask is a direct call); report each case's outcome."""
    c = common(root, today, json_)
    finish(collect_result(c, batch_id, wait=wait, interval=poll_interval, timeout=timeout,
                          max_cost=max_cost), c)  # fmt: skip
