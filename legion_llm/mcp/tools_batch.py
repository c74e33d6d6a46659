"""Tools over Anthropic's Message Batches: submit every pending phase as one batch, see its
progress, collect it (each phase verified, re-asked and repaired exactly as a direct compact).
A tool call never waits for a batch to end: call batch_status or batch_collect again later."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from legion_llm.app.batch import EngineChoice
from legion_llm.app.commands.batches import collect_result, status_result
from legion_llm.app.commands.phases import compact_all_submit
from legion_llm.mcp.params import MaxCost, Model, Today
from legion_llm.mcp.runner import Runner

BatchId = Annotated[
    str | None,
    Field(description="The batch id (msgbatch_...); default: the newest one not collected yet."),
]


class BatchTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def compact_all(
        self,
        model: Model = None,
        max_cost: MaxCost = None,
        force: Annotated[bool, Field(description="Override the preconditions.")] = False,
        today: Today = None,
    ) -> dict[str, Any]:
        """Submit every completed phase without a COMPACTED.md (compact_suggest's list) as ONE
        Message Batch, at half the standard price; needs ANTHROPIC_API_KEY. max_cost is checked
        against the whole batch before anything is sent. Nothing is written now: collect it later
        with batch_collect (`legion-llm compact --all --batch --json`). Returns {data: {batch_id,
        requests, cases: {phase: {custom_ids, problem}}, estimated_cost_usd, ...}}."""
        run = self.runner
        return run.run(lambda: compact_all_submit(run.common(today), EngineChoice(model, max_cost),
                                                  force=force))  # fmt: skip

    def batch_status(self, batch_id: BatchId = None) -> dict[str, Any]:
        """A submitted batch's progress from the API and how many of its cases were collected
        (`legion-llm batch status --json`): {data: {processing_status, request_counts, ...}}."""
        run = self.runner
        return run.run(lambda: status_result(run.common(None), batch_id))

    def batch_collect(self, batch_id: BatchId = None, max_cost: MaxCost = None) -> dict[str, Any]:
        """Collect an ended batch (`legion-llm batch collect --json`): each phase (or eval run)
        goes through the same verify, re-ask (a direct call) and repair as a direct run and is
        written when it passes; a phase whose originals changed since submission is not. Per
        case: {status: written|repaired|fell back|failed|stale|skipped, path or reason, usage,
        batch}. Collecting again writes nothing twice. A batch still in progress returns
        ok=false with data.collected=false: call again later."""
        run = self.runner
        return run.run(lambda: collect_result(run.common(None), batch_id, max_cost=max_cost))
