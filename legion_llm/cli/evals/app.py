"""`legion-llm eval ...`: one sub-app, one command per eval suite; the suites' use cases are in
app/commands/evals/ (each: the suite's runner in legion_llm.evals, a progress bar on stderr, a
summary table, a JSON log (`--out`), and exit code 1 when a gate fails)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.batch import DEFAULT_INTERVAL, DEFAULT_TIMEOUT, BatchOptions
from legion_llm.app.commands.evals.run import eval_result
from legion_llm.cli.batch import BatchOpt, IntervalOpt, TimeoutOpt, WaitOpt
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.evals import errors as eval_errors
from legion_llm.cli.evals import learn as learn_eval
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt
from legion_llm.cli.render import common

app = typer.Typer(no_args_is_help=True, help="Run an eval suite and check its gates.")

FixturesOpt = Annotated[
    Path | None, typer.Option("--fixtures", help="Dataset folder (default: the suite's own).")
]
CorpusOpt = Annotated[
    Path | None,
    typer.Option(
        "--corpus",
        help="A folder of real projects (each with .planning/, no ground truth): check that "
        "every phase gets a verified file, never longer than its originals.",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", help="JSON log (default: eval-logs/<suite>-<engine>-<time>.json in the root)."
    ),
]


@app.command("compaction")
def compaction(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    corpus: CorpusOpt = None,
    out: OutOpt = None,
    batch: BatchOpt = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Compact every fixture phase, score it, check the gates (evals/compaction.toml)."""
    c = common(root, today, json_)
    options = BatchOptions(batch, wait, poll_interval, timeout)
    finish(eval_result("compaction", c, fixtures, out, options, engine=engine, model=model,
                       max_cost=max_cost, price=price, corpus=corpus), c)  # fmt: skip


app.command("distill")(learn_eval.eval_distill)
app.command("learnings")(learn_eval.eval_learnings)
app.command("errors")(eval_errors.errors_eval_cmd)
