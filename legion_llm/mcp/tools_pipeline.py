"""Tools over phases and the steps that may ask a model: read a phase (its context, its
compaction's check, the phases still to compact), compact one, distil patterns, extract mission
learnings. Each LLM step writes only with apply=true and takes engine=host for the calling agent
to write the semantic part (legion_llm/mcp/tools_host.py). Path-like arguments are checked
against the root before anything is read."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from legion_llm.app.commands import distill, learnings, phases
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, open_session
from legion_llm.mcp.params import (
    Apply,
    Final,
    MaxCost,
    Model,
    PhaseSpec,
    Proposal,
    RouteEngine,
    Ticket,
    Today,
)
from legion_llm.mcp.runner import Runner
from legion_llm.mcp.sampling import client_of
from legion_llm.mcp.tools_host import prepare, submit, submitting

Force = Annotated[bool, Field(description="Override the preconditions; replace an existing one.")]
Phases = Annotated[
    list[str] | None,
    Field(description="Distil these phases' plan summaries alone (3, 03-fx-rates)."),
]
Mission = Annotated[
    str | None,
    Field(min_length=1, description="A finished mission or phase folder inside the project, or "
          "a mission id."),
]  # fmt: skip


def with_notices(result: CommandResult, session: LLMSession) -> CommandResult:
    """The engine's notices (a fallback, the host-route hint) reach the client as warnings."""
    result.warnings = [*result.warnings, *session.engine.notices.messages]
    return result


def required(name: str, value: Any) -> Any:
    if value is None:
        raise ToolError(f"argument {name!r} is required (unless you pass ticket and proposal)")
    return value


class PipelineTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def phase_read(
        self,
        view: Annotated[
            Literal["context", "verify", "pending"], Field(description="See the description.")
        ] = "context",
        phase: PhaseSpec | None = None,
    ) -> dict[str, Any]:
        """Read a phase; writes nothing. view: context (the phase's COMPACTED.md when it exists,
        else its plan summaries), verify (its COMPACTED.md checked against the originals; ok is
        false when ids or paths are missing or invented), pending (completed phases with no
        COMPACTED.md yet; no phase). Returns view=context: {data: {source, files, text}};
        view=verify: {ok, data: {missing_ids, missing_paths, invented_ids, invented_paths}};
        view=pending: {data: {phases: [{phase, folder}]}}."""
        run = self.runner
        if view == "pending":
            if phase is not None:
                raise ToolError("view=pending reads every phase; leave out phase")
            return run.run(lambda: phases.suggest_result(run.common(None)))
        if phase is None:
            raise ToolError(f"view={view} needs phase")
        if view == "verify":
            return run.run(lambda: phases.verify_result(run.common(None), run.phase(phase)))
        return run.run(lambda: phases.phase_context_result(run.common(None), run.phase(phase)))

    def phase_compact(
        self,
        phase: PhaseSpec | None = None,
        apply: Apply = False,
        force: Force = False,
        engine: RouteEngine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        ticket: Ticket = None,
        proposal: Proposal = None,
        final: Final = False,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Compact a completed phase's plan summaries into its {NN}-COMPACTED.md, verified to
        keep every requirement id and file path. A preview (data.text) unless apply=true;
        replacing an existing one also needs force=true. engine=host answers a request for you
        to write instead (no key needed); call again with its ticket, your proposal and
        apply=true: it is verified like a model's, or ok is false with data.problems. Returns
        {data: {path, ratio, written, usage}}; engine=host: {data: {ticket, instructions,
        schema, inputs}}."""
        run = self.runner
        if submitting(ticket, proposal, {"phase": phase, "engine": engine, "model": model,
                                         "max_cost": max_cost, "today": today}):  # fmt: skip
            assert ticket is not None

            def maker(args: dict[str, Any]) -> Any:
                return phases.compact_maker(run.phase(str(args.get("phase", ""))), force)

            return submit(run, "compact", ticket, proposal, final, apply, maker)
        spec = required("phase", phase)
        if engine == "host":
            return prepare(run, today, lambda c: phases.compact_maker(run.phase(spec), force))

        def build() -> CommandResult:
            c = run.common(today)
            found = run.phase(spec)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            result = phases.compact_result(c, found, session, force=force, dry_run=not apply)
            return with_notices(result, session)

        return run.run(build)

    def memory_distill_patterns(
        self,
        phases: Phases = None,
        apply: Apply = False,
        engine: RouteEngine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        ticket: Ticket = None,
        proposal: Proposal = None,
        final: Final = False,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Distil PATTERNS.md entries from OUTCOMES.md and the plan summaries it names. A preview
        unless apply=true. engine=host answers a request for you to write instead; call again
        with its ticket, your proposal and apply=true. Returns {data: {written, skipped,
        usage}}; engine=host: {data: {ticket, instructions, schema, inputs}}."""
        run = self.runner
        if submitting(ticket, proposal, {"engine": engine, "model": model, "max_cost": max_cost,
                                         "today": today, "phases": phases}):  # fmt: skip
            assert ticket is not None
            return submit(run, "distill", ticket, proposal, final, apply,
                          lambda args: distill.distill_maker(None))  # fmt: skip
        if engine == "host":
            return prepare(run, today, lambda c: distill.distill_maker(None, phases))

        def build() -> CommandResult:
            c = run.common(today)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            result = distill.distill_result(c, session, not apply, None, phases)
            return with_notices(result, session)

        return run.run(build)

    def memory_extract_learnings(
        self,
        mission: Mission = None,
        apply: Apply = False,
        engine: RouteEngine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        ticket: Ticket = None,
        proposal: Proposal = None,
        final: Final = False,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Extract learnings from a finished mission or phase into .mission-control/memory/,
        verified and de-duplicated (the same topic reinforces the stored file). A preview unless
        apply=true. engine=host answers a request for you to write instead; call again with its
        ticket, your proposal and apply=true. Returns {data: {written, reinforced, skipped,
        usage}}; engine=host: {data: {ticket, instructions, schema, inputs}}."""
        run = self.runner
        if submitting(ticket, proposal, {"mission": mission, "engine": engine, "model": model,
                                         "max_cost": max_cost, "today": today}):  # fmt: skip
            assert ticket is not None

            def maker(args: dict[str, Any]) -> Any:
                folder = run.inside(str(args.get("mission", "")), "mission")
                return learnings.extract_maker(folder, str(args.get("now", "")))

            return submit(run, "learnings extract", ticket, proposal, final, apply, maker)
        name = required("mission", mission)
        if engine == "host":
            return prepare(run, today, lambda c: learnings.extract_maker(
                run.mission(name), learnings.now_text(today, c)))  # fmt: skip

        def build() -> CommandResult:
            c = run.common(today)
            folder = run.mission(name)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            now = learnings.now_text(today, c)
            result = learnings.extract_result(c, folder, session, now, not apply)
            return with_notices(result, session)

        return run.run(build)
