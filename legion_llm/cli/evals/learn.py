"""`legion-llm eval distill` and `legion-llm eval learnings`: run the suite, print the table, gate.

Each command: options -> the suite's runner in legion_llm.evals -> a summary table, a JSON log
(`--out`, default eval-logs/<suite>-<engine>-<time>.json) and exit code 1 when a gate fails.
The functions are registered on the `eval` sub-app (cli/evals/app.py); `app` holds them too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.cli.batch import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT,
    BatchOpt,
    BatchOptions,
    IntervalOpt,
    TimeoutOpt,
    WaitOpt,
)
from legion_llm.cli.common import (
    CommandResult,
    Common,
    JsonOpt,
    RootOpt,
    TodayOpt,
    common,
    finish,
)
from legion_llm.cli.evals.batch import eval_batch_result
from legion_llm.cli.evals.log import check_out, write_eval_log
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, open_session

if TYPE_CHECKING:
    from legion_llm.llm.engine import Engine

app = typer.Typer(no_args_is_help=True, help="Distillation and learnings evals.")

FixturesOpt = Annotated[
    Path | None, typer.Option("--fixtures", help="Dataset folder (default: the suite's own).")
]
OutOpt = Annotated[Path | None, typer.Option("--out", help="JSON log file.")]


def _rows(summary: dict[str, Any], gates: dict[str, dict[str, float]]) -> list[list[str]]:
    rows = []
    for name, value in summary.items():
        bound = gates.get(name, {})
        gate = (f">= {bound['min']}" if "min" in bound else f"<= {bound['max']}") if bound else ""
        if bound.get("offline_only"):
            gate += " (offline)"
        rows.append([name, str(value), gate])
    return rows


def suite_result(
    suite: str,
    c: Common,
    engine: Engine,
    fixtures: Path | None,
    out: Path | None,
    *,
    log_extra: Callable[[], dict[str, Any]] | None = None,
    write_log: bool = True,
    warnings: Sequence[str] = (),
) -> CommandResult:
    """Run the distill or learnings eval with `engine` and write its log (for the command and a
    batch: `log_extra()` is called once the suite has run, before its usage goes into the log)."""
    from legion_llm.cli.render import plain, rich_print, table
    from legion_llm.evals.distill import run_distill_eval
    from legion_llm.evals.learnings import run_learnings_eval
    from legion_llm.llm.prompts import load_prompt

    runner = {"distill": run_distill_eval, "learnings": run_learnings_eval}[suite]
    run: Any = runner(engine, fixtures)
    extra = log_extra() if log_extra and write_log else {}  # before the usage is read
    prompt = {"distill": "distill-patterns", "learnings": "extract-learnings"}[suite]
    data = {
        **run.as_dict(),
        "model": engine.model,
        "prompts": {prompt: load_prompt(prompt).sha256},
        "usage": engine.meter.as_dict(engine.name),
    }
    if not write_log:
        return CommandResult(f"eval {suite}", data)
    data.update(extra)
    path = write_eval_log(c, suite, engine.name, out, data)
    data["log"] = str(path)

    def human() -> None:
        table(f"{suite} eval ({engine.name})", ["metric", "value", "gate"],
              _rows(run.summary(), run.gates))  # fmt: skip
        failed = run.failed_gates()
        verdict = (
            "[green]all gates pass[/green]"
            if not failed
            else "[red]FAILED: " + "; ".join(failed) + "[/red]"
        )
        rich_print(f"{verdict}; log: {plain(str(path))}")

    return CommandResult(f"eval {suite}", data, human, list(warnings), 0 if run.passed else 1)


def _command(
    suite: str,
    c: Common,
    fixtures: Path | None,
    out: Path | None,
    options: BatchOptions,
    *,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None,
) -> None:
    check_out(c, out)
    if options.batch or options.wait:
        finish(eval_batch_result(c, suite, fixtures, out, options, engine=engine, model=model,
                                 max_cost=max_cost, price=price), c)  # fmt: skip
        return
    session = open_session(c, engine, model, max_cost, price=price)
    finish(suite_result(suite, c, session.engine, fixtures, out, warnings=session.warnings), c)


@app.command("distill")
def eval_distill(
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
    """Distil every outcome history twice, score it, check the gates (evals/distill.toml)."""
    c = common(root, today, json_)  # the dataset pins its own date; --today is only checked
    _command("distill", c, fixtures, out, BatchOptions(batch, wait, poll_interval, timeout),
             engine=engine, model=model, max_cost=max_cost, price=price)  # fmt: skip


@app.command("learnings")
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
    _command("learnings", c, fixtures, out, BatchOptions(batch, wait, poll_interval, timeout),
             engine=engine, model=model, max_cost=max_cost, price=price)  # fmt: skip
