"""`legion-llm eval distill` and `legion-llm eval learnings` (the use cases:
app/commands/evals/learn.py), registered on the `eval` sub-app by cli/evals/app.py."""

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

FixturesOpt = Annotated[
    Path | None, typer.Option("--fixtures", help="Dataset folder (default: the suite's own).")
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="JSON log file.")]
DistillCorpusOpt = Annotated[
    Path | None,
    typer.Option("--corpus", help="A folder of real projects (each with .planning/): distil "
                 "every phase's summaries; recall of declared patterns, no status, no "
                 "unsupported row, no near-duplicate."),
]  # fmt: skip


def eval_distill(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    corpus: DistillCorpusOpt = None,
    out: OutOpt = None,
    batch: BatchOpt = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Distil every outcome history twice, score it, check the gates (evals/distill.toml);
    with --corpus, every real project's summaries."""
    c = common(root, today, json_)  # the dataset pins its own date; --today is only checked
    options = BatchOptions(batch, wait, poll_interval, timeout)
    finish(eval_result("distill", c, fixtures, out, options, engine=engine, model=model,
                       max_cost=max_cost, price=price, corpus=corpus), c)  # fmt: skip


def eval_learnings(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    out: OutOpt = None,
    batch: BatchOpt = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Extract every fixture mission and phase in order, twice; score, check the gates
    (evals/learnings.toml)."""
    c = common(root, today, json_)  # the dataset pins its own date; --today is only checked
    options = BatchOptions(batch, wait, poll_interval, timeout)
    finish(eval_result("learnings", c, fixtures, out, options, engine=engine, model=model,
                       max_cost=max_cost, price=price), c)  # fmt: skip
