"""`legion-llm compact --all [--batch] [--wait]`: every phase `compact --suggest` lists.

Without --batch the phases are compacted directly, one after another. With --batch every phase
is prepared and its requests go into ONE Message Batch (half the price); the command prints the
batch id and exits, or with --wait polls with a progress bar and collects. The work is in
legion_llm.pipeline.batch.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from legion_llm.cli.batch import BatchOptions
from legion_llm.cli.common import CommandResult, Common
from legion_llm.cli.render import usage_lines

if TYPE_CHECKING:
    from legion_llm.cli.llm import LLMSession


def compact_all_result(
    c: Common,
    options: BatchOptions,
    *,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None = None,
    force: bool = False,
    verbose: bool = False,
) -> CommandResult:
    from legion_llm.cli.batch import EngineChoice, submit_then_wait
    from legion_llm.pipeline.batch.compact import CompactAllJob

    job = CompactAllJob.pending(c.root, c.today)
    job.force = force
    if not job.phase_keys:
        text = "No completed phase is waiting for compaction."
        return CommandResult("compact", {"all": True, "phases": [], "message": text}, text)
    if not options.batch:
        from legion_llm.cli.llm import open_session

        return direct_result(c, job, open_session(c, engine, model, max_cost, price=price,
                                                    verbose=verbose))  # fmt: skip
    choice = EngineChoice(model, max_cost, engine, price)
    return submit_then_wait(c, job, choice, replace(options, force=force))


def direct_result(c: Common, job: Any, session: LLMSession) -> CommandResult:
    from legion_llm.pipeline.batch.compact import compact_all_direct

    rows = compact_all_direct(job, session.engine)
    usage = session.usage()
    data = {"all": True, "batch": False, "outcomes": rows, "usage": usage}
    lines = [_row_line(row) for row in rows]
    lines += usage_lines(usage, session.verbose)
    failed = [r for r in rows if r["status"] == "failed"]
    code = max((int(r.get("exit_code", 1)) for r in failed), default=0)
    errors = [f"error: {r['label']}: {r['reason']}" for r in failed]
    return CommandResult("compact", data, "\n".join(lines), [*session.warnings, *errors], code)


def _row_line(row: dict[str, Any]) -> str:
    where = row.get("path") or row.get("reason") or ""
    return f"{row['label']}: {row['status']}; {where}; ${row['cost_usd']:.4f}"
