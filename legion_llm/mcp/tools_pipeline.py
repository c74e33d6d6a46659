"""Tools over phases and mission learnings, the steps that may ask Claude: compact (with a dry
run), verify-compaction, phase-context, distill (a dry run by default), learnings add, load and
extract. Path-like arguments are checked against the root before anything is read."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from legion_llm.app.commands import distill, learnings, phases
from legion_llm.app.context import split_option
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, open_session
from legion_llm.mcp.params import Engine, MaxCost, Model, PhaseSpec, Today
from legion_llm.mcp.runner import Runner
from legion_llm.mcp.sampling import client_of
from legion_llm.memory.learnings.read import Learning

DryRun = Annotated[bool, Field(description="Show what would be written; write nothing.")]


def with_notices(result: CommandResult, session: LLMSession) -> CommandResult:
    """The engine's notices (a fallback, the host-tools hint) reach the client as warnings."""
    result.warnings = [*result.warnings, *session.engine.notices.messages]
    return result


class PipelineTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def compact(
        self,
        phase: PhaseSpec,
        dry_run: DryRun = False,
        force: Annotated[bool, Field(description="Override the preconditions or replace.")] = False,
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Compact a completed phase's plan summaries into {NN}-COMPACTED.md, verified to keep
        every requirement id and file path (section 12; `legion-llm compact PHASE --json`). With
        dry_run the text is in data.text and nothing is written. Returns {data: {path, ratio,
        written, dry_run, usage, ...}}."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            found = run.phase(phase)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            result = phases.compact_result(c, found, session, force=force, dry_run=dry_run)
            return with_notices(result, session)

        return run.run(build)

    def compact_suggest(self) -> dict[str, Any]:
        """Completed phases with no COMPACTED.md yet (`legion-llm compact --suggest --json`):
        {data: {phases: [{phase, folder, name, summaries}], message}}."""
        run = self.runner
        return run.run(lambda: phases.suggest_result(run.common(None)))

    def verify_compaction(self, phase: PhaseSpec) -> dict[str, Any]:
        """Check a phase's existing COMPACTED.md against its originals (`legion-llm
        verify-compaction PHASE --json`): ok is false when ids or paths are missing or invented.
        Returns {ok, data: {missing_ids, missing_paths, invented_ids, invented_paths, ratio, ...}}."""
        run = self.runner
        return run.run(lambda: phases.verify_result(run.common(None), run.phase(phase)))

    def phase_context(self, phase: PhaseSpec) -> dict[str, Any]:
        """A phase's COMPACTED.md when it exists, else its plan summaries (`legion-llm
        phase-context PHASE --json`): {data: {source, files, text}}."""
        run = self.runner
        return run.run(lambda: phases.phase_context_result(run.common(None), run.phase(phase)))

    def distill(
        self,
        dry_run: DryRun = True,
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Distil PATTERNS.md entries from OUTCOMES.md (section 8; `legion-llm distill --json`).
        A dry run by default: pass dry_run=false to write. Returns {data: {candidates, groups,
        written: [pattern records], skipped, dry_run, usage}}."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            return with_notices(distill.distill_result(c, session, dry_run), session)

        return run.run(build)

    def learnings_add(
        self,
        title: Annotated[str, Field(min_length=1, description="A specific title.")],
        body: Annotated[str, Field(min_length=1, description="1-3 paragraphs: do or avoid.")],
        category: Literal["pattern", "gotcha", "architecture", "tooling", "prompt"],
        tags: Annotated[tuple[str, ...], Field(description="2-5 lowercase tags.")],
        confidence: Literal["low", "medium", "high"],
        source: Annotated[str, Field(description="Mission id, or manual.")] = "manual",
        today: Today = None,
    ) -> dict[str, Any]:
        """Write one learning file in .mission-control/memory/ (mission-memory; `legion-llm
        learnings add --json`); its file name is made from the title, always inside that folder.
        A title and body already stored are not written again: from another source they
        reinforce the stored learning (action reinforced, with its changes), from the same
        source nothing changes (action existing). Returns {data: {learning, path, action,
        changes}}."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            learning = Learning(title, body, split_option(",".join(tags)), source,
                                learnings.now_text(today, c), confidence, category)  # fmt: skip
            return learnings.add_result(c, learning)

        return run.run(build)

    def learnings_load(
        self,
        goal: Annotated[str, Field(min_length=1, description="The mission goal text.")],
        max_tokens: Annotated[int, Field(ge=1, description="Budget (chars / 4).")] = 2000,
        limit: Annotated[int, Field(ge=0, description="At most this many tag matches.")] = 5,
    ) -> dict[str, Any]:
        """The "Project Learnings" section for a mission goal (`legion-llm learnings load
        --json`): gotchas always, others when a tag is in the goal. Returns {data: {section,
        learnings, ...}}."""
        run = self.runner
        return run.run(lambda: learnings.load_result(run.common(None), goal, max_tokens, limit))

    def learnings_extract(
        self,
        mission: Annotated[
            str,
            Field(
                min_length=1,
                description="A completed mission folder or Legion phase folder, relative to the "
                "project root (or absolute inside it), or a mission id (its folder under "
                ".mission-control/missions/, archive/ included).",
            ),
        ],
        dry_run: DryRun = False,
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Extract learnings from a finished mission or phase, verified and de-duplicated (the
        same topic reinforces the existing file), into .mission-control/memory/ (`legion-llm
        learnings extract --json`). Returns {data: {written, reinforced, skipped, dry_run, ...}}."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            folder = run.mission(mission)
            session = open_session(c, engine, model, max_cost, mcp=client_of(ctx))
            now = learnings.now_text(today, c)
            result = learnings.extract_result(c, folder, session, now, dry_run)
            return with_notices(result, session)

        return run.run(build)
