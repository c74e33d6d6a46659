"""`legion-llm eval errors` (the use case: app/commands/evals/errors.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.batch import DEFAULT_INTERVAL, DEFAULT_TIMEOUT, BatchOptions
from legion_llm.app.commands.evals.run import eval_result
from legion_llm.cli.batch import BatchOpt, IntervalOpt, TimeoutOpt, WaitOpt
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt
from legion_llm.cli.render import common


def errors_eval_cmd(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    split: Annotated[
        list[str] | None,
        typer.Option("--split", help="original, dev, dev2, ... (repeatable; default: all)."),
    ] = None,
    fixtures: Annotated[
        Path | None, typer.Option("--fixtures", help="Another labelled set (test gates).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the JSON log here.")] = None,
    batch: BatchOpt = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """fix@1, pairwise precision/recall, hard negatives and exact collisions of the error
    matcher on each split; exit 1 on a failed gate. With an engine, one call per query judges
    the candidates above the floor (the offline rule otherwise)."""
    c = common(root, today, json_)  # no date enters the matcher; --today is only checked
    options = BatchOptions(batch, wait, poll_interval, timeout)
    finish(eval_result("errors", c, fixtures, out, options, engine=engine, model=model,
                       max_cost=max_cost, price=price, splits=split or None), c)  # fmt: skip
