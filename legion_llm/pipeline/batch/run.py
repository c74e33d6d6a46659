"""Submit and collect one Message Batch for any job: the unchanged pipeline, run twice.

    submit   a case that a batch not yet collected holds (or an intent whose create may have
             made one) refuses the submit in one line naming that batch, unless forced. Every
             case (a phase, an eval run) runs through the pipeline with the planning engine:
             each request is recorded (llm/batch.py) and answered offline for now, and nothing
             is written. The planned requests' cost at the batch price is checked against
             --max-cost (refused with one line, nothing submitted). An intent (the requests'
             hash, the cases) is saved, ONE batch is created, and the record is saved under
             the root in the intent's place; any failure after the create names the batch id
             and hands over the record's text, so paid work is never lost.
    collect  once the batch has ended its results are downloaded (once, into the record); each
             case not yet collected is checked (its originals' hash and its requests, planned
             again offline, must match what was submitted, else it is stale and nothing is
             written), then runs through the same pipeline with the batch engine: batch answers
             where they exist, direct calls for the rest, the pipeline's own verify, re-ask,
             repair and write. After each case the record is saved, so a killed collect resumes
             where it stopped and a second collect writes nothing twice.

A job says which cases it has and how one runs (`BatchJob`); this module knows no pipeline.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from legion_llm.errors import InputError, LegionError, WriteFailedError
from legion_llm.llm.batch import BatchLedger, PlannedRequest
from legion_llm.llm.budget import Usage
from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError, LLMUnavailableError
from legion_llm.memory.files import locked
from legion_llm.pipeline.batch.record import (
    BatchRecord,
    CaseEntry,
    Intent,
    batches_dir,
    list_intents,
    list_records,
    load_record,
    request_digest,
)

if TYPE_CHECKING:
    from legion_llm.llm.claude_api.batches import BatchEngines, BatchStatus
    from legion_llm.llm.pricing import ModelInfo

EnginesFor = Callable[[BatchLedger], "BatchEngines"]
MAX_REQUESTS = 100_000  # the Message Batches API's limits for one batch
MAX_BYTES = 256 * 1024 * 1024
Checkpoint = Callable[[], None]


@dataclass(frozen=True)
class JobCase:
    key: str
    label: str
    id_prefix: str


class BatchJob(Protocol):
    @property
    def kind(self) -> str: ...

    def cases(self) -> Sequence[JobCase]: ...

    def fingerprint(self, case: JobCase) -> str | None: ...

    def run(self, case: JobCase, engine: Engine, checkpoint: Checkpoint | None) -> dict[str, Any]:
        """Plan (checkpoint None): run without writing. Collect: run, call `checkpoint` before
        writing anything, return the case's outcome ({"status": ..., ...})."""
        ...

    def options(self) -> dict[str, Any]: ...


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# ---------------------------------------------------------------- submit


def plan_job(job: BatchJob, engines: BatchEngines) -> dict[str, CaseEntry]:
    """Run every case through the planning engine; the ledger then holds every request."""
    ledger = engines.batch.ledger
    entries: dict[str, CaseEntry] = {}
    for case in job.cases():
        ledger.begin(case.key, case.id_prefix)
        entry = CaseEntry(case.key, case.label, fingerprint=job.fingerprint(case))
        try:
            job.run(case, engines.pipeline, None)
        except LegionError as exc:
            entry.problem = exc.message
            ledger.drop(case.key)
        entry.custom_ids = [p.custom_id for p in ledger.planned_for(case.key)]
        entries[case.key] = entry
    return entries


def planned_cost(planned: Sequence[PlannedRequest], info: ModelInfo) -> float:
    """What the planned requests could cost at the batch price: each one's input at the dearer
    of base and cache-write price, and the output ClaudeEngine expects of it (as the cap of a
    direct call reserves)."""
    from legion_llm.llm.pricing import call_cost_bound

    total = sum(call_cost_bound(info, input_tokens=p.input_tokens, output_tokens=p.expected_output)
                for p in planned)  # fmt: skip
    return float(total * info.batch_factor)


def submit_job(
    job: BatchJob,
    engines: BatchEngines,
    root: Path,
    *,
    max_cost: float | None,
    engine_options: dict[str, Any] | None = None,
    force: bool = False,
) -> BatchRecord:
    """Refuse cases a pending batch holds (unless `force`), plan, check the cap, save the
    intent, create ONE batch, save its record (with `engine_options`, what the collect needs to
    build the same engine). Returns the record."""
    if not force:
        refuse_pending(root, job)
    entries = plan_job(job, engines)
    ledger, model = engines.batch.ledger, engines.batch.model
    if not ledger.planned:
        problems = "; ".join(f"{e.label}: {e.problem}" for e in entries.values() if e.problem)
        raise InputError("nothing to submit: no case needs a model call" + (f" ({problems})" if problems else ""),
                         data={"cases": {k: e.problem for k, e in entries.items()}})  # fmt: skip
    _check_size(ledger.requests())
    cost = planned_cost(ledger.planned, engines.batch.info)
    if max_cost is not None and cost > max_cost:
        raise BudgetExceededError(
            f"not submitted: the batch of {len(ledger.planned)} requests could cost up to "
            f"${cost:.4f} at the batch price, over --max-cost ${max_cost:.4f}",
            data={"requests": len(ledger.planned), "estimated_cost_usd": round(cost, 6),
                  "max_cost_usd": max_cost},
        )  # fmt: skip
    requests = ledger.requests()
    intent = Intent(request_digest(requests), job.kind, now_iso(), model,
                    {k: e.label for k, e in entries.items() if not e.problem}, len(requests),
                    cost)  # fmt: skip
    with locked(batches_dir(root), root=root):
        intent.save(root)  # a failure here: nothing was sent
    status = _create(engines, requests, intent, root)
    options = {**job.options(), "engine_options": dict(engine_options or {})}
    record = BatchRecord(status.id, job.kind, intent.created_at, model, options, cost, entries,
                         dict(ledger.index), request_sha256=intent.request_sha256)  # fmt: skip
    _save_created(record, intent, root)
    return record


def _create(
    engines: BatchEngines, requests: list[dict[str, Any]], intent: Intent, root: Path
) -> BatchStatus:
    """The create call. An error the API answered with made no batch: the intent goes. One
    without an answer (a dropped connection, a timeout) may have: the intent stays, saying so."""
    try:
        return engines.api.create(requests)
    except LLMUnavailableError as exc:
        with contextlib.suppress(OSError, LegionError), locked(batches_dir(root), root=root):
            if exc.status is not None:
                intent.remove(root)
            else:
                intent.problem = f"the create call got no answer ({exc.message})"
                intent.save(root)
        raise


def _save_created(record: BatchRecord, intent: Intent, root: Path) -> None:
    """The record in the intent's place; when it cannot be saved, the batch id and the record's
    text in the error (and the id in the intent, if that can still be written)."""
    try:
        with locked(batches_dir(root), root=root):
            record.save(root)
            intent.remove(root)
    except (OSError, LegionError) as exc:
        reason = exc.message if isinstance(exc, LegionError) else (exc.strerror or str(exc))
        intent.batch_id = record.id
        with contextlib.suppress(OSError, LegionError):
            intent.save(root)
        raise WriteFailedError(
            f"batch {record.id} was created ({record.requests} request(s), up to "
            f"${record.estimated_cost_usd:.4f}) but its record could not be saved ({reason}); "
            f"save the text below as {record.path(root)} and run `legion-llm batch collect "
            f"{record.id}` - do not submit again",
            record_text=record.text(),
            data={"batch_id": record.id},
        ) from None


def refuse_pending(root: Path, job: BatchJob) -> None:
    """One line naming the batch that already holds one of the job's cases, not collected yet."""
    wanted = {case.key: case.label for case in job.cases()}
    for record in list_records(root):
        held = [wanted[k] for k, e in record.cases.items()
                if k in wanted and e.outcome is None and not e.problem]  # fmt: skip
        if record.kind == job.kind and held:
            raise _pending(f"batch {record.id} (submitted {record.created_at})", held, job,
                           f"collect it first (`legion-llm batch collect {record.id}`)")  # fmt: skip
    for intent in list_intents(root):
        held = [wanted[k] for k in intent.cases if k in wanted]
        if intent.kind != job.kind or not held:
            continue
        if intent.batch_id and any(r.id == intent.batch_id for r in list_records(root)):
            continue  # its record was saved after all
        how = (f"its record was not saved: see the output of that submit, then `legion-llm "
               f"batch collect {intent.batch_id}`") if intent.batch_id else (
               f"{intent.problem or 'the submit stopped before it was recorded'}; look for it "
               "in the Console before submitting again")  # fmt: skip
        raise _pending(f"{intent.named()} (submitted {intent.created_at})", held, job, how)


def _pending(what: str, held: list[str], job: BatchJob, how: str) -> InputError:
    force = ", or pass --force to submit again" if job.kind == "compact" else ""
    return InputError(
        f"not submitted: {what} already holds {', '.join(held)} and is not collected; {how}{force}",
        data={"pending": what},
    )


def _check_size(requests: list[dict[str, Any]]) -> None:
    """One batch holds at most 100,000 requests or 256 MB: refuse a larger one before sending."""
    size = len(json.dumps({"requests": requests}, ensure_ascii=False).encode("utf-8"))
    if len(requests) > MAX_REQUESTS or size > MAX_BYTES:
        raise InputError(
            f"not submitted: the batch would hold {len(requests):,} requests ({size / 2**20:.1f} MB); "
            f"one Message Batch takes at most {MAX_REQUESTS:,} requests or "
            f"{MAX_BYTES // 2**20} MB (compact fewer phases at a time)"
        )


# ---------------------------------------------------------------- collect


@dataclass
class CollectReport:
    record: BatchRecord
    status: BatchStatus
    collected_now: list[str] = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return self.status.ended

    def outcomes(self) -> list[dict[str, Any]]:
        rows = []
        for key, entry in self.record.cases.items():
            if entry.outcome is not None:
                again = key not in self.collected_now
                rows.append({"case": key, "label": entry.label, **entry.outcome,
                             "collected_before": again})  # fmt: skip
        return rows

    def total_usage(self) -> dict[str, Any]:
        total: dict[str, Any] = {}
        for row in self.outcomes():
            for name, value in (row.get("usage") or {}).items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    total[name] = total.get(name, 0) + value
        if "estimated_cost_usd" in total:
            total["estimated_cost_usd"] = round(total["estimated_cost_usd"], 6)
        return {**total, "model": self.record.model, "batch_id": self.record.id}


def collect_job(
    job: BatchJob,
    record: BatchRecord,
    engines_for: EnginesFor,
    root: Path,
) -> CollectReport:
    """Download (once) and settle every case not collected yet; see the module docstring. The
    record is read again under the lock: a collect that waited for another sees its work."""
    replay = BatchLedger("replay")
    engines = engines_for(replay)
    with locked(batches_dir(root), root=root):
        record = load_record(root, record.id)
        status = engines.api.retrieve(record.id)
        report = CollectReport(record, status)
        if not status.ended:
            return report
        if record.results is None:
            results = engines.api.results(record.id)
            if not results and status.total:
                raise LLMUnavailableError(
                    f"the results of batch {record.id} hold no result line ({status.total} "
                    "expected); nothing collected: is a proxy or gateway in the way?"
                )
            record.results = {k: v.as_dict() for k, v in results.items()}
            record.save(root)
        replay.results, replay.index = record.stored_results(), dict(record.index)
        replay.journal = record.journal
        for case in job.cases():
            entry = record.cases.get(case.key)
            if entry is None or entry.outcome is not None:
                continue
            entry.outcome = _collect_case(job, case, entry, engines, engines_for, record, root)
            report.collected_now.append(case.key)
            record.save(root)
        if all(e.outcome is not None for e in record.cases.values()):
            record.collected_at = record.collected_at or now_iso()
            record.save(root)
    return report


def _collect_case(
    job: BatchJob,
    case: JobCase,
    entry: CaseEntry,
    engines: BatchEngines,
    engines_for: EnginesFor,
    record: BatchRecord,
    root: Path,
) -> dict[str, Any]:
    """One case's outcome with its usage: what it was billed, its unused batch answers included."""
    if entry.problem:
        return {"status": "not submitted", "reason": entry.problem}
    ledger, meter = engines.batch.ledger, engines.batch.meter
    ledger.begin(case.key, case.id_prefix)
    before = meter.total.copy()
    stale = _stale(job, case, entry, engines_for, record)
    if stale:
        outcome: dict[str, Any] = {"status": "stale", "reason": stale}
    else:
        try:
            outcome = job.run(case, engines.pipeline, lambda: record.save(root))
        except LegionError as exc:
            outcome = {"status": "failed", "reason": exc.message}
    engines.batch.bill_unused(entry.custom_ids)
    usage = meter.total.minus(before)
    return {**outcome, "usage": _usage_dict(usage), "batch": ledger.current().as_dict()}


def _stale(
    job: BatchJob, case: JobCase, entry: CaseEntry, engines_for: EnginesFor, record: BatchRecord
) -> str | None:
    """Why this case must not be settled from the batch now, or None."""
    if entry.fingerprint is not None and job.fingerprint(case) != entry.fingerprint:
        return "its originals changed since the batch was submitted; not written"
    planning = BatchLedger("plan")
    planning.begin(case.key, case.id_prefix)
    try:
        job.run(case, engines_for(planning).pipeline, None)
    except LegionError as exc:
        return f"it can no longer be prepared ({exc.message}); not written"
    submitted = sorted(k for k, v in record.index.items() if v in set(entry.custom_ids))
    if sorted(p.slot.key for p in planning.planned) != submitted:
        return ("its requests differ from those submitted (the originals, a prompt or a setting "
                "changed); not written")  # fmt: skip
    return None


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        **{f.name: getattr(after, f.name) - getattr(before, f.name) for f in fields(after)}
    )


def _usage_dict(usage: Usage) -> dict[str, Any]:
    data = {f.name: getattr(usage, f.name) for f in fields(usage)}
    data["estimated_cost_usd"] = round(usage.estimated_cost_usd, 6)
    return data
