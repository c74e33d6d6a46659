"""`legion-llm llm check|selftest`, and the typer options every LLM command shares (`EngineOpt`,
`ModelOpt`, `MaxCostOpt`, `PriceOpt`, `VerboseOpt`); the session itself is app/session.py."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.commands.llm import check_result, selftest_result
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common

app = typer.Typer(no_args_is_help=True, help="The LLM engine: check the set-up, run a self-test.")

# Exactly the --engine values of llm/config.py's ENGINE_CHOICES (docs/engines.md's table, and a
# test, hold them to it). The host route is not one of them: it is --prepare / --proposal.
ENGINE_HELP = (
    "auto, anthropic, claude-code, sampling (only inside `legion-llm mcp`) or offline; default: "
    "settings, else auto. To answer yourself, the host route: --prepare, then --proposal."
)
EngineOpt = Annotated[str | None, typer.Option("--engine", help=ENGINE_HELP)]
VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose", help="Also print the engine and usage line when the offline engine answered."
    ),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Claude model (default: settings, else built in).")
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option("--max-cost", min=0, help="Never spend more than USD in this run."),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        help="IN/OUT USD per million tokens, for a model the price table lacks (e.g. 3/15).",
    ),
]


@app.command("check")
def check(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show every engine, which one would be used and why, and the model. Calls no model."""
    c = common(root, today, json_)
    finish(check_result(c, engine, model, max_cost, price), c)


@app.command("selftest")
def selftest(
    word: Annotated[str, typer.Option("--word", help="The word to echo.")] = "legion",
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Ask the engine one tiny structured question (prompts/selftest.md) and check the answer."""
    c = common(root, today, json_)
    finish(selftest_result(c, word, engine, model, max_cost, price), c)
