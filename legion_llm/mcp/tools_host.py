"""The host engine's tools: the calling agent writes the semantic part, legion-llm verifies it.

`*_prepare` returns the request {ticket, instructions, schema, inputs, budget_tokens, submit}
(`legion-llm ... --prepare --json`); `*_submit(ticket, proposal)` verifies the proposal exactly
as it would verify a model's, and writes it, or hands back {problems, ticket} with ok false and
writes nothing. A ticket prepared from inputs that have changed since is refused.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field

from legion_llm.app.commands import distill, learnings, phases
from legion_llm.app.host import MakeStep, prepare_result, submit_with, ticket_args
from legion_llm.app.result import CommandResult
from legion_llm.mcp.params import PhaseSpec, Today
from legion_llm.mcp.runner import Runner

TicketArg = Annotated[str, Field(min_length=1, description="The ticket from the *_prepare tool.")]
ProposalArg = Annotated[
    dict[str, Any] | list[dict[str, Any]] | str,
    Field(description="Your answer: one JSON object matching the request's schema (a list, one "
          "per input, when the request's inputs is a list); a JSON string is accepted too."),
]  # fmt: skip
Final = Annotated[
    bool,
    Field(description="The last round: keep what verifies and repair the rest instead of "
          "handing problems back."),
]  # fmt: skip
Mission = Annotated[
    str,
    Field(min_length=1, description="A completed mission folder or Legion phase folder, "
          "relative to the project root (or absolute inside it), or a mission id (its folder "
          "under .mission-control/missions/, archive/ included)."),
]  # fmt: skip


def _proposal(value: dict[str, Any] | list[dict[str, Any]] | str) -> Any:
    from legion_llm.errors import InputError
    from legion_llm.memory.untrusted import UntrustedInputError, load_json

    if not isinstance(value, str):
        return value
    try:
        return load_json(value)  # bounded: the proposal comes from an agent
    except json.JSONDecodeError as exc:
        raise InputError(f"the proposal is not JSON ({exc.msg})") from None
    except UntrustedInputError as exc:
        raise InputError(f"the proposal {exc}") from None


class HostTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def _submit(self, step: str, ticket: str, proposal: Any, final: bool, dry_run: bool,
                maker: Any) -> dict[str, Any]:  # fmt: skip
        run = self.runner

        def build() -> CommandResult:
            c = run.common(None)
            args, _ = ticket_args(c, ticket, step)
            make: MakeStep = maker(args)
            return submit_with(c, make, ticket, _proposal(proposal), final=final, write=not dry_run)

        return run.run(build)

    def compact_prepare(
        self,
        phase: PhaseSpec,
        force: Annotated[bool, Field(description="Override the preconditions.")] = False,
        today: Today = None,
    ) -> dict[str, Any]:
        """Prepare a phase compaction for YOU to write (no API key or model needed): returns
        {data: {ticket, instructions, schema, inputs, budget_tokens, submit}}. Follow
        `instructions` on `inputs`, answer with JSON matching `schema`, then call compact_submit.
        Writes nothing."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            return prepare_result(phases.compact_maker(run.phase(phase), force)(c, None))

        return run.run(build)

    def compact_submit(
        self, ticket: TicketArg, proposal: ProposalArg, final: Final = False,
        dry_run: Annotated[bool, Field(description="Verify only; write nothing.")] = False,
        force: Annotated[bool, Field(description="Replace an existing COMPACTED.md.")] = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Submit your digest for a compact_prepare ticket. It is verified like any model's
        (every requirement id and path kept, nothing invented) and written to
        {NN}-COMPACTED.md with engine "host"; or ok is false with data.problems, nothing written:
        fix them and submit again with the same ticket. Returns {data: {path, ratio, written,
        engine, requirement_ids, paths, dry_run, usage, ...}} (or {ok: false, data: {problems,
        ticket}})."""

        def maker(args: dict[str, Any]) -> MakeStep:
            return phases.compact_maker(self.runner.phase(str(args.get("phase", ""))), force)

        return self._submit("compact", ticket, proposal, final, dry_run, maker)

    def distill_prepare(self, today: Today = None) -> dict[str, Any]:
        """Prepare pattern distillation for YOU to write: the candidate outcome groups from
        OUTCOMES.md as {data: {ticket, instructions, schema, inputs, ...}}; then call
        distill_submit. Writes nothing."""
        run = self.runner
        return run.run(lambda: prepare_result(distill.distill_maker(None)(run.common(today), None)))

    def distill_submit(
        self, ticket: TicketArg, proposal: ProposalArg, final: Final = False,
        dry_run: Annotated[bool, Field(description="Verify only; write nothing.")] = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Submit your patterns for a distill_prepare ticket: verified (sources exist and are
        candidates, tags, no near-duplicates) and stored in PATTERNS.md with engine "host"; or ok
        is false with data.problems and nothing written. Returns {data: {written: [pattern
        records], skipped, dry_run, usage, ...}}."""
        return self._submit("distill", ticket, proposal, final, dry_run,
                            lambda args: distill.distill_maker(None))  # fmt: skip

    def learnings_extract_prepare(self, mission: Mission, today: Today = None) -> dict[str, Any]:
        """Prepare learnings extraction from a finished mission or phase for YOU to write:
        {data: {ticket, instructions, schema, inputs, ...}}; then call learnings_extract_submit.
        Writes nothing."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            folder = run.mission(mission)
            now = learnings.now_text(today, c)
            return prepare_result(learnings.extract_maker(folder, now)(c, None))

        return run.run(build)

    def learnings_extract_submit(
        self, ticket: TicketArg, proposal: ProposalArg, final: Final = False,
        dry_run: Annotated[bool, Field(description="Verify only; write nothing.")] = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Submit your learnings for a learnings_extract_prepare ticket: verified and
        de-duplicated, written in .mission-control/memory/ with engine "host"; or ok is false
        with data.problems and nothing written. Returns {data: {mission, written, reinforced,
        skipped, dry_run, usage, ...}}."""

        def maker(args: dict[str, Any]) -> MakeStep:
            folder = self.runner.inside(str(args.get("mission", "")), "mission")
            return learnings.extract_maker(folder, str(args.get("now", "")))

        return self._submit("learnings extract", ticket, proposal, final, dry_run, maker)
