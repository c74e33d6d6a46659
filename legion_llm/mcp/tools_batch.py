"""The tool over Anthropic's Message Batches: submit every pending phase as one batch, see its
progress, collect it (each phase verified, re-asked and repaired exactly as a direct compact).
A call never waits for a batch to end: ask for its status or collect it again later. The API
needs a key; without one the tool says so first and names the route that needs none."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from legion_llm.app.batch import EngineChoice
from legion_llm.app.commands.batches import collect_result, status_result
from legion_llm.app.commands.phases import compact_all_submit
from legion_llm.app.result import CommandResult
from legion_llm.errors import InputError
from legion_llm.mcp.params import MaxCost, Model, Today
from legion_llm.mcp.runner import Runner

BatchId = Annotated[
    str | None,
    Field(description="The batch id (msgbatch_...); default: the newest one not collected."),
]
NO_KEY = (
    "phase_compact_batch needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the server's "
    "environment (the Message Batches API); without one, compact each phase of phase_read "
    "view=pending with phase_compact (engine=host: you write each digest, no key needed)"
)


def needs_a_key() -> None:
    from legion_llm.llm.config import find_credential

    if find_credential() is None:
        raise InputError(NO_KEY)


class BatchTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def phase_compact_batch(
        self,
        action: Annotated[
            Literal["submit", "status", "collect"], Field(description="See the description.")
        ] = "status",
        batch_id: BatchId = None,
        model: Model = None,
        max_cost: MaxCost = None,
        force: Annotated[bool, Field(description="submit: override the preconditions.")] = False,
        apply: Annotated[
            bool, Field(description="collect: write; without it, the status.")
        ] = False,
        today: Today = None,
    ) -> dict[str, Any]:
        """Compact every pending phase as ONE Message Batch at half the price; needs
        ANTHROPIC_API_KEY (without it, use phase_compact with engine=host). action: submit
        (sends phase_read view=pending's phases; max_cost is checked against the whole batch
        first; writes nothing now), status (the batch's progress), collect (with apply=true, an
        ended batch: each phase verified, re-asked and repaired like phase_compact, and written
        when it passes; again writes nothing twice; still running: ok false, call later;
        without apply, the status).
        Returns {data: {batch_id, ...}}."""
        run = self.runner
        extra = {"submit": ("apply",), "status": ("model", "max_cost", "force", "apply", "today"),
                 "collect": ("model", "force", "today")}[action]  # fmt: skip
        values = {"model": model, "max_cost": max_cost, "force": force or None,
                  "apply": apply or None, "today": today}  # fmt: skip
        if action == "submit" and batch_id is not None:
            extra = ("batch_id", "apply")
            values["batch_id"] = batch_id

        def build() -> CommandResult:
            foreign = [name for name in extra if values.get(name) is not None]
            if foreign:
                raise InputError(f"action={action} does not take {', '.join(foreign)}")
            needs_a_key()
            c = run.common(today)
            if action == "submit":
                return compact_all_submit(c, EngineChoice(model, max_cost), force=force)
            if action == "collect" and apply:
                return collect_result(c, batch_id, max_cost=max_cost)
            result = status_result(c, batch_id)
            if action == "collect":
                result.warnings = [*result.warnings, "nothing collected: pass apply=true to "
                                   "collect the batch and write what passes"]  # fmt: skip
            return result

        return run.run(build)
