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


def distill_corpus_result(
    c: Common, engine: Engine, corpus: Path, out: Path | None, *, warnings: Sequence[str] = ()
) -> CommandResult:
    """`eval distill --corpus DIR`: every real project distilled from its summaries, twice;
    per project and in total: recall of declared patterns, rows that are no pattern,
    unsupported rows, near-duplicates (evals/distill_corpus.py)."""
    from legion_llm.evals.distill_corpus import run_distill_corpus
    from legion_llm.llm.prompts import load_prompt

    run = run_distill_corpus(engine, corpus, c.today)
    data = {
        **run.as_dict(),
        "corpus": str(corpus),
        "model": engine.model,
        "prompts": {"distill-patterns": load_prompt("distill-patterns").sha256},
        "usage": engine.meter.as_dict(engine.name),
    }
    path = write_eval_log(c, "distill-corpus", engine.name, out, data)
    data["log"] = str(path)
    columns = ["project", "phases", "declared", "recalled", "written", "not patterns",
               "unsupported", "near-dup", "2nd run"]  # fmt: skip
    rows = [[p.name, str(p.phases), str(p.declared), str(p.recalled), str(p.written),
             str(p.not_patterns), str(p.unsupported), str(p.near_duplicates),
             str(p.second_run_written)] for p in run.projects
            if p.written or p.declared or p.error]  # fmt: skip
    failed = run.failed_gates()
    verdict = ("[green]all gates pass[/green]", ()) if not failed else (
        "[red]FAILED: {}[/red]", ("; ".join(failed),))  # fmt: skip
    human: list[Block] = [
        Table(f"distill corpus ({engine.name})", columns, rows),
        Table("total", ["metric", "value", "gate"], _rows(run.summary(), run.gates)),
        Styled(f"{verdict[0]}; log: {{}}", (*verdict[1], str(path))),
    ]
    return CommandResult("eval distill", data, human, list(warnings), 0 if run.passed else 1)
