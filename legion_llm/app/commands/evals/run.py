"""`eval compaction|errors|distill|learnings`: one suite run directly with an engine, or as one
Message Batch (`--batch`, `--wait`: batch.py); the log's --out is checked before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legion_llm.app.batch import BatchOptions
from legion_llm.app.commands.evals.batch import eval_batch_result, suite_result
from legion_llm.app.commands.evals.log import check_out
from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult
from legion_llm.app.session import open_session
from legion_llm.errors import InputError


def eval_result(
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
    corpus: Path | None = None,
    splits: list[str] | None = None,
) -> CommandResult:
    """Run `suite` on its dataset (`fixtures`, else the suite's own) and check its gates; for
    compaction, `corpus` checks real projects instead (direct runs only); for errors, `splits`
    names the splits to run."""
    if suite == "compaction" and fixtures is None:
        from legion_llm.evals.compaction import load_definition

        fixtures, _ = load_definition()
    check_out(c, out)
    if corpus is not None and suite == "distill" and (options.batch or options.wait):
        raise InputError("eval distill --corpus runs directly: leave out --batch and --wait")
    extra: dict[str, Any] = {"splits": splits} if suite == "errors" else {}
    if options.batch or options.wait:
        return eval_batch_result(c, suite, fixtures, out, options, engine=engine, model=model,
                                 max_cost=max_cost, price=price, **extra)  # fmt: skip
    session = open_session(c, engine, model, max_cost, price=price)
    if corpus is not None and suite == "distill":
        from legion_llm.app.commands.evals.learn import distill_corpus_result

        return distill_corpus_result(c, session.engine, corpus, out, warnings=session.warnings)
    if corpus is not None:
        from legion_llm.app.commands.evals.compaction import corpus_result

        return corpus_result(c, session.engine, corpus, out, warnings=session.warnings)
    return suite_result(suite, c, session.engine, fixtures, out, warnings=session.warnings,
                        **extra)  # fmt: skip
