"""`batch status` and `batch collect`: a submitted batch's progress, and its collection with
the job its record holds, whatever the kind (`compact --all`, an eval)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from legion_llm.app import batch
from legion_llm.app.batch import record_choice
from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult

if TYPE_CHECKING:
    from legion_llm.llm.claude_api.batches import BatchStatus
    from legion_llm.pipeline.batch.record import BatchRecord
    from legion_llm.pipeline.batch.run import BatchJob


def status_result(c: Common, batch_id: str | None) -> CommandResult:
    """A submitted batch's progress (asks the API) and what has been collected."""
    from legion_llm.llm.batch import BatchLedger
    from legion_llm.pipeline.batch.record import latest_record

    record = latest_record(c.root, batch_id)
    engines = record_choice(record).engines_for(c)(BatchLedger("replay"))
    status = engines.api.retrieve(record.id)
    collected = sum(1 for e in record.cases.values() if e.outcome is not None)
    data = {**record.summary(), "batch_id": record.id, **status.as_dict(),
            "cases_collected": collected}  # fmt: skip
    return CommandResult("batch status", data, _status_line(record, status, collected))


def _status_line(record: BatchRecord, status: BatchStatus, collected: int) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in status.counts.items())
    line = (f"Batch {record.id} ({record.kind}, {len(record.cases)} case(s), model "
            f"{record.model}): {status.processing_status}, {status.done}/{status.total} "
            f"request(s) done ({counts})")  # fmt: skip
    if collected:
        line += f"; {collected}/{len(record.cases)} case(s) collected"
    return line


def collect_result(
    c: Common,
    batch_id: str | None,
    *,
    wait: bool = False,
    interval: float = batch.DEFAULT_INTERVAL,
    timeout: float = batch.DEFAULT_TIMEOUT,
    max_cost: float | None = None,
) -> CommandResult:
    """Download a batch's results and settle each case through the same verify, re-ask, repair
    and write as a direct run; report each case's outcome."""
    return batch.collect_result(c, batch_id, job_for, wait=wait, interval=interval,
                                timeout=timeout, max_cost=max_cost)  # fmt: skip


def job_for(c: Common, record: BatchRecord) -> BatchJob:
    """The job a record was submitted for, rebuilt from its options."""
    if record.kind == "compact":
        from legion_llm.app.commands.phases import compact_job

        return compact_job(c, record)
    from legion_llm.app.commands.evals.batch import eval_job

    return eval_job(c, record)
