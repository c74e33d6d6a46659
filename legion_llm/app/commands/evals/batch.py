"""`eval compaction|errors|distill|learnings --batch [--wait]`: an eval run as ONE batch.

The suite runs twice, unchanged: once to plan (every request recorded, answered offline for now,
no log written), once after the batch has ended to score it (batch answers at the batch price,
direct calls for what the batch did not hold). The eval log records the batch id, how many
answers came from the batch and how many were direct, and the cost as billed at the batch price.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.batch import BatchOptions, EngineChoice, submit_then_wait
from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult

if TYPE_CHECKING:
    from legion_llm.llm.engine import Engine
    from legion_llm.pipeline.batch.record import BatchRecord
    from legion_llm.pipeline.batch.run import Checkpoint, JobCase

CASE = "eval"


def suite_result(
    suite: str, c: Common, engine: Engine, fixtures: Path | None, out: Path | None, **kwargs: Any
) -> CommandResult:
    """The suite's own run-and-log function (the same one the direct command uses)."""
    if suite == "compaction":
        from legion_llm.app.commands.evals.compaction import compaction_result

        return compaction_result(c, engine, fixtures, out, **kwargs)
    if suite == "errors":
        from legion_llm.app.commands.evals.errors import errors_result

        return errors_result(c, engine, fixtures, out, **kwargs)
    from legion_llm.app.commands.evals import learn

    return learn.suite_result(suite, c, engine, fixtures, out, **kwargs)


@dataclass
class EvalJob:
    """One eval run as a batch job: a single case, the whole suite."""

    c: Common
    suite: str
    fixtures: Path | None
    out: Path | None
    batch_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)  # the suite's own (errors: splits)
    last: CommandResult | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return f"eval-{self.suite}"

    def cases(self) -> list[JobCase]:
        from legion_llm.pipeline.batch.run import JobCase

        return [JobCase(CASE, f"eval {self.suite}", f"eval-{self.suite}")]

    def fingerprint(self, case: JobCase) -> str | None:
        return None  # the requests, planned again at collect, are compared instead

    def options(self) -> dict[str, Any]:
        return {"suite": self.suite, "today": self.c.today.isoformat(),
                "fixtures": str(self.fixtures) if self.fixtures else None,
                "out": str(self.out) if self.out else None, "arguments": self.arguments}  # fmt: skip

    def run(self, case: JobCase, engine: Engine, checkpoint: Checkpoint | None) -> dict[str, Any]:
        if checkpoint is None:
            suite_result(self.suite, self.c, engine, self.fixtures, None, write_log=False,
                         **self.arguments)  # fmt: skip
            return {}

        def batch_info() -> dict[str, Any]:
            info = {"batch": self._batch_info(engine)}
            checkpoint()  # the journal is saved before the log is written
            return info

        result = suite_result(self.suite, self.c, engine, self.fixtures, self.out,
                              log_extra=batch_info, **self.arguments)  # fmt: skip
        self.last = result
        passed = result.exit_code == 0
        return {"status": "gates pass" if passed else "gates failed", "passed": passed,
                "path": result.data.get("log")}  # fmt: skip

    def _batch_info(self, engine: Engine) -> dict[str, Any]:
        from legion_llm.llm.claude_api.batches import BatchEngine

        batch = getattr(engine, "primary", engine)
        if not isinstance(batch, BatchEngine):
            return {"id": self.batch_id}
        batch.bill_unused(list(batch.ledger.index.values()))  # before the log records the cost
        return {"id": self.batch_id, "price_factor": batch.info.batch_factor,
                **batch.ledger.current().as_dict()}  # fmt: skip


def eval_batch_result(
    c: Common,
    suite: str,
    fixtures: Path | None,
    out: Path | None,
    options: BatchOptions,
    *,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None = None,
    **arguments: Any,
) -> CommandResult:
    """Submit the suite as one batch (with --wait: and collect it); `arguments` are the suite's
    own options (eval errors: `splits`), kept in the record for the collect."""
    from legion_llm.errors import UsageError

    if options.wait and not options.batch:
        raise UsageError("--wait goes with --batch")
    job = EvalJob(c, suite, fixtures, out, arguments=arguments)
    return submit_then_wait(c, job, EngineChoice(model, max_cost, engine, price), options,
                            eval_job)  # fmt: skip


def eval_job(c: Common, record: BatchRecord) -> EvalJob:
    """The job of an eval batch, from its record (its date and paths as submitted). The record
    is a file in the project, which a repository can carry: its log goes where it says only
    under the root; a log named outside it (the user's --out at submit) goes to eval-logs/."""
    options = record.options
    when = replace(c, today=date.fromisoformat(options["today"]))
    fixtures, out = options.get("fixtures"), _inside(c, options.get("out"))
    return EvalJob(when, str(options["suite"]), Path(fixtures) if fixtures else None,
                   out, record.id, dict(options.get("arguments") or {}))  # fmt: skip


def _inside(c: Common, out: object) -> Path | None:
    if not isinstance(out, str) or not out:
        return None
    path = Path(out).expanduser()
    target = (path if path.is_absolute() else c.root / path).resolve()
    return path if target.is_relative_to(c.root.resolve()) else None
