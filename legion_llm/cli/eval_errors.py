"""`legion-llm eval errors`: the error matcher over the labelled set, gates, JSON log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from legion_llm.cli.common import CommandResult, JsonOpt, RootOpt, TodayOpt, common, finish
from legion_llm.cli.eval_log import check_out, write_eval_log
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, open_session
from legion_llm.cli.render import table

METRICS = [
    ("pairwise precision", "precision", "pairwise_precision"),
    ("pairwise recall", "recall", "pairwise_recall"),
    ("grouping accuracy", "grouping_accuracy", None),
    ("grouping completeness", "grouping_completeness", None),
    ("fix@1", "fix_at_1", "fix_at_1"),
    ("fix@5", "fix_at_5", None),
    ("ambiguous band, fix queries", "ambiguous_share", None),
    ("ambiguous band, all pairs", "pair_ambiguous_share", None),
]


def errors_eval_cmd(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: Annotated[Path | None, typer.Option("--fixtures", help="Labelled error set.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the JSON log here.")] = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Pairwise precision/recall, grouping accuracy, fix@1/fix@5 of the error matcher; exit 1 on
    a failed gate. The ambiguous band goes to the engine (Claude, or the offline rule)."""
    from legion_llm.evals.errors import run_errors_eval
    from legion_llm.memory.gitinfo import head_commit
    from legion_llm.pipeline.errmatch import PROMPT, adjudicate

    c = common(root, today, json_)  # no date enters the matcher; --today is only checked
    check_out(c, out)
    session = open_session(c, engine, model, max_cost, price=price)
    result = run_errors_eval(
        fixtures, lambda text, match: adjudicate(session.engine, text, match)[0]
    )
    data: dict[str, Any] = {
        **result.as_dict(),
        "engine": session.engine.name,
        "model": session.engine.model,
        "prompt": PROMPT,
        "prompt_sha256": _prompt_hash(PROMPT),
        "git_commit": head_commit(c.root),
        "usage": session.usage(),
    }
    data["log"] = str(write_eval_log(c, "errors", session.engine.name, out, data))
    gates = result.gate_results()

    def human() -> None:
        rows = [
            [label, f"{getattr(result, field):.3f}", _gate(result.gates, gates, gate)]
            for label, field, gate in METRICS
        ]
        table(
            f"eval errors: {result.messages} messages, {result.groups} groups",
            ["metric", "value", "gate"],
            rows,
        )

    code = 0 if result.passed else 1
    finish(CommandResult("eval errors", data, human, session.warnings + result.failures, code), c)


def _gate(limits: dict[str, float], passed: dict[str, bool], name: str | None) -> str:
    if name is None or name not in limits:
        return ""
    return f">= {limits[name]} {'ok' if passed[name] else 'FAILED'}"


def _prompt_hash(name: str) -> str:
    from legion_llm.llm.prompts import load_prompt

    return load_prompt(name).sha256
