"""`eval distill` and `eval learnings`: run the suite, log it, check the gates."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.commands.evals.log import write_eval_log
from legion_llm.app.context import Common
from legion_llm.app.result import Block, CommandResult, Styled, Table

if TYPE_CHECKING:
    from legion_llm.llm.engine import Engine


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

    failed = run.failed_gates()
    verdict = ("[green]all gates pass[/green]", ()) if not failed else (
        "[red]FAILED: {}[/red]", ("; ".join(failed),))  # fmt: skip
    human: list[Block] = [
        Table(f"{suite} eval ({engine.name})", ["metric", "value", "gate"],
              _rows(run.summary(), run.gates)),
        Styled(f"{verdict[0]}; log: {{}}", (*verdict[1], str(path))),
    ]  # fmt: skip
    return CommandResult(f"eval {suite}", data, human, list(warnings), 0 if run.passed else 1)
