"""`legion-llm eval distill` and `legion-llm eval learnings`: run the suite, print the table, gate.

Each command: options -> the suite's runner in legion_llm.evals -> a summary table, a JSON log
(`--out`, default eval-logs/<suite>-<engine>-<time>.json) and exit code 1 when a gate fails.
The functions are registered on the `eval` sub-app (cli/eval.py); `app` holds them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from legion_llm.cli.common import CommandResult, JsonOpt, RootOpt, TodayOpt, common, finish
from legion_llm.cli.eval_log import check_out, write_eval_log
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, open_session

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


def _finish(suite: str, run: Any, session: Any, out: Path | None, c: Any) -> None:
    from legion_llm.cli.render import plain, rich_print, table
    from legion_llm.llm.prompts import load_prompt

    prompt = {"distill": "distill-patterns", "learnings": "extract-learnings"}[suite]
    data = {
        **run.as_dict(),
        "model": session.engine.model,
        "prompts": {prompt: load_prompt(prompt).sha256},
        "usage": session.usage(),
    }
    path = write_eval_log(c, suite, session.engine.name, out, data)
    data["log"] = str(path)

    def human() -> None:
        table(f"{suite} eval ({session.engine.name})", ["metric", "value", "gate"],
              _rows(run.summary(), run.gates))  # fmt: skip
        failed = run.failed_gates()
        verdict = (
            "[green]all gates pass[/green]"
            if not failed
            else "[red]FAILED: " + "; ".join(failed) + "[/red]"
        )
        rich_print(f"{verdict}; log: {plain(str(path))}")

    result = CommandResult(f"eval {suite}", data, human, session.warnings, 0 if run.passed else 1)
    finish(result, c)


@app.command("distill")
def eval_distill(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    out: OutOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Distil every outcome history twice, score it, check the gates (evals/distill.toml)."""
    from legion_llm.evals.distill import run_distill_eval

    c = common(root, today, json_)  # the dataset pins its own date; --today is only checked
    check_out(c, out)
    session = open_session(c, engine, model, max_cost, price=price)
    run = run_distill_eval(session.engine, fixtures)
    _finish("distill", run, session, out, c)


@app.command("learnings")
def eval_learnings(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    out: OutOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Extract every fixture mission and phase in order, twice; score, check the gates
    (evals/learnings.toml)."""
    from legion_llm.evals.learnings import run_learnings_eval

    c = common(root, today, json_)  # the dataset pins its own date; --today is only checked
    check_out(c, out)
    session = open_session(c, engine, model, max_cost, price=price)
    run = run_learnings_eval(session.engine, fixtures)
    _finish("learnings", run, session, out, c)
