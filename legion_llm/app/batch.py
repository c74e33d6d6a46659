"""The batch machinery both front ends' `--batch` commands share: the batch engines from the
command's options, submit, wait (a progress bar while it does), collect each case through the
same verify, re-ask, repair and write as a direct run, and the per-case report.

The work is in legion_llm.pipeline.batch (submit, collect, the record under the root) and
legion_llm.llm.claude_api.batches (the Message Batches API). A batch still in progress is not
an error: collect says so and exits 75 (EX_TEMPFAIL: try again later). Which job a record holds
is its submitter's to rebuild (`Rebuild`): app/commands/batches.py knows every kind.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common
from legion_llm.app.result import Block, CommandResult
from legion_llm.app.session import resolve_config
from legion_llm.errors import EXIT_PENDING, UsageError

if TYPE_CHECKING:
    from legion_llm.llm.batch import BatchLedger
    from legion_llm.llm.claude_api.batches import BatchAPI, BatchEngines, BatchStatus
    from legion_llm.pipeline.batch.record import BatchRecord
    from legion_llm.pipeline.batch.run import BatchJob, CollectReport

DEFAULT_INTERVAL = 30.0
DEFAULT_TIMEOUT = 24 * 3600.0  # a batch expires 24 hours after it was created
Rebuild = Callable[[Common, "BatchRecord"], "BatchJob"]  # the job a record was submitted for


@dataclass(frozen=True)
class BatchOptions:
    """--batch, --wait, --poll-interval, --timeout of a command that can use a batch."""

    batch: bool = False
    wait: bool = False
    interval: float = DEFAULT_INTERVAL
    timeout: float = DEFAULT_TIMEOUT
    force: bool = False  # submit although a batch not yet collected holds some of the cases


def batch_engines_for(
    c: Common,
    model: str | None,
    max_cost: float | None,
    engine: str | None = None,
    price: str | None = None,
) -> Callable[[BatchLedger], BatchEngines]:
    """A factory of batch engines (one per ledger) from the command's options."""
    from legion_llm.llm.claude_api.batches import batch_engines
    from legion_llm.llm.engine import Notices
    from legion_llm.memory.redact import project_redactor

    if engine not in (None, "auto", "anthropic"):
        raise UsageError(
            f"--batch sends through Anthropic's Message Batches API; --engine {engine} cannot"
        )
    config, warnings = resolve_config(c, "anthropic", model, max_cost, price)
    notices, redactor = Notices(c.notify), project_redactor(c.root)
    for warning in warnings:  # a bad settings.json value: said once, the default used
        notices.add(warning)

    def make(ledger: BatchLedger) -> BatchEngines:
        return batch_engines(config, ledger, notices=notices, redactor=redactor,
                             explicit=engine == "anthropic")  # fmt: skip

    return make


# ---------------------------------------------------------------- submit (shared by --batch)


@dataclass(frozen=True)
class EngineChoice:
    """The engine options of a `--batch` command, kept in the record for its collect."""

    model: str | None = None
    max_cost: float | None = None
    engine: str | None = None
    price: str | None = None

    def engines_for(self, c: Common) -> Callable[[BatchLedger], BatchEngines]:
        return batch_engines_for(c, self.model, self.max_cost, self.engine, self.price)


def submit_result(
    c: Common, job: BatchJob, choice: EngineChoice, *, force: bool = False
) -> CommandResult:
    from legion_llm.llm.batch import BatchLedger
    from legion_llm.pipeline.batch.run import submit_job

    engines = choice.engines_for(c)(BatchLedger("plan"))
    kept = {"engine": choice.engine, "price": choice.price}
    record = submit_job(job, engines, c.root, max_cost=choice.max_cost, engine_options=kept,
                        force=force)  # fmt: skip
    skipped = {k: e.problem for k, e in record.cases.items() if e.problem}
    data = {**record.summary(), "batch_id": record.id, "record": _rel(c, record),
            "cases": {k: {"label": e.label, "custom_ids": e.custom_ids, "problem": e.problem}
                      for k, e in record.cases.items()}}  # fmt: skip
    lines = [
        f"Submitted batch {record.id}: {record.requests} request(s) for "
        f"{len(record.cases) - len(skipped)} {_noun(record)}, expected to cost at most "
        f"${record.estimated_cost_usd:.4f} at the batch price (half the standard price)",
        *(f"not submitted: {record.cases[k].label}: {why}" for k, why in skipped.items()),
        f"Progress: legion-llm batch status {record.id}; results: "
        f"legion-llm batch collect {record.id} (or --wait)",
    ]
    return CommandResult("batch submit", data, "\n".join(lines))


def submit_then_wait(
    c: Common, job: BatchJob, choice: EngineChoice, options: BatchOptions, rebuild: Rebuild
) -> CommandResult:
    """Submit; with --wait, poll until the batch ends and collect it in the same command (the job
    rebuilt from its record, as a later collect would)."""
    submitted = submit_result(c, job, choice, force=options.force)
    if not options.wait:
        return submitted
    collected = collect_result(c, submitted.data["batch_id"], rebuild, wait=True,
                               interval=options.interval, timeout=options.timeout,
                               max_cost=choice.max_cost)  # fmt: skip
    collected.data = {"submitted": submitted.data, **collected.data}
    return collected


def _noun(record: BatchRecord) -> str:
    return "phase(s)" if record.kind == "compact" else "eval run(s)"


def _rel(c: Common, record: BatchRecord) -> str:
    return str(record.path(c.root).relative_to(c.root))


def collect_result(
    c: Common,
    batch_id: str | None,
    rebuild: Rebuild,
    *,
    wait: bool = False,
    interval: float = DEFAULT_INTERVAL,
    timeout: float = DEFAULT_TIMEOUT,
    max_cost: float | None = None,
) -> CommandResult:
    from legion_llm.llm.batch import BatchLedger
    from legion_llm.pipeline.batch.record import latest_record
    from legion_llm.pipeline.batch.run import collect_job

    record = latest_record(c.root, batch_id)
    make = record_choice(record, max_cost).engines_for(c)
    if wait:
        status = wait_until_ended(c, make(BatchLedger("replay")).api, record.id,
                                  interval=interval, timeout=timeout)  # fmt: skip
        if not status.ended:
            return _pending(record, status, waited=timeout)
    job = rebuild(c, record)
    report = collect_job(job, record, make, c.root)
    if not report.ended:
        return _pending(record, report.status)
    suite: CommandResult | None = getattr(job, "last", None)  # an eval's own table, this run
    return render_collect(c, report, suite.human if suite is not None else None)


def record_choice(record: BatchRecord, max_cost: float | None = None) -> EngineChoice:
    """The engine a record was submitted with (its model and prices); `max_cost` caps the
    direct calls of this collect."""
    kept = record.options.get("engine_options") or {}
    return EngineChoice(record.model, max_cost, kept.get("engine"), kept.get("price"))


def _pending(
    record: BatchRecord, status: BatchStatus, waited: float | None = None
) -> CommandResult:
    why = f"after waiting {waited:g} s " if waited is not None else ""
    text = (f"Batch {record.id} is still {status.processing_status} {why}({status.done}/"
            f"{status.total} request(s) done); nothing collected yet: run `legion-llm batch "
            f"collect {record.id}` later, or add --wait")  # fmt: skip
    data = {**record.summary(), "batch_id": record.id, **status.as_dict(), "collected": False}
    return CommandResult("batch collect", data, text, [], EXIT_PENDING)


def wait_until_ended(
    c: Common,
    api: BatchAPI,
    batch_id: str,
    *,
    interval: float,
    timeout: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> BatchStatus:
    """Poll until the batch has ended or `timeout` has passed, with a progress bar (c.progress)."""
    start = clock()
    with c.progress(f"batch {batch_id}", None, clock=True) as bar:
        while True:
            status = api.retrieve(batch_id)
            bar(total=status.total, completed=status.done,
                description=f"batch {batch_id}: {status.processing_status}")  # fmt: skip
            if status.ended or clock() - start + interval > timeout:
                return status
            sleep(interval)


def render_collect(
    c: Common, report: CollectReport, first: str | Sequence[Block] | None = None
) -> CommandResult:
    """The per-case report; `first` (an eval's table) is shown before it."""
    rows = report.outcomes()
    total = report.total_usage()
    record = report.record
    data = {**record.summary(), "batch_id": record.id, **report.status.as_dict(),
            "collected": True, "outcomes": rows, "usage": total}  # fmt: skip
    extra = record.options.get("result")
    if isinstance(extra, dict):
        data["result"] = extra
    bad = [r for r in rows if not r["collected_before"] and r["status"] in BAD_STATUSES]
    lines = [f"Batch {record.id}: {report.status.processing_status}; "
             f"{', '.join(f'{k} {v}' for k, v in report.status.counts.items() if v)}"]  # fmt: skip
    lines += [_outcome_line(row) for row in rows]
    lines.append(_total_line(total))
    text = "\n".join(lines)
    human: list[Block] = [first] if isinstance(first, str) else list(first or [])
    human.append(text)
    return CommandResult("batch collect", data, human if first else text, [], 1 if bad else 0)


BAD_STATUSES = ("failed", "stale", "skipped", "gates failed")  # exit 1, as the direct command


def _outcome_line(row: dict[str, Any]) -> str:
    where = row.get("path") or row.get("reason") or ""
    batch = row.get("batch") or {}
    cost = (row.get("usage") or {}).get("estimated_cost_usd")
    parts = [f"{row['label']}: {row['status']}", where]
    if cost is not None:
        parts.append(f"${cost:.4f} ({batch.get('from_batch', 0)} from the batch, "
                     f"{batch.get('direct', 0)} direct)")  # fmt: skip
    parts += list(batch.get("notes") or [])
    if row.get("note"):
        parts.append(str(row["note"]))
    if row["collected_before"]:
        parts.append("collected before; nothing written now")
    return "; ".join(p for p in parts if p)


def _total_line(total: dict[str, Any]) -> str:
    return (f"Total: {total.get('calls', 0)} Claude call(s), {total.get('input_tokens', 0)} in / "
            f"{total.get('output_tokens', 0)} out tokens, about "
            f"${total.get('estimated_cost_usd', 0.0):.4f} (batch answers at the batch price)")  # fmt: skip
