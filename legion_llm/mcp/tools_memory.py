"""Tools over the memory files: store a record of any kind, recall any kind, summarise, prune,
scan. Each returns the object the matching `legion-llm ... --json` prints; the kind's own use case
runs (legion_llm/app/commands/memory.py picks it and checks the arguments the kind takes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from legion_llm.app.commands import memory, outcomes, scan
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LazySession
from legion_llm.mcp.params import (
    Apply,
    Branch,
    Detail,
    Engine,
    MaxCost,
    Model,
    Outcome,
    Tags,
    TaskTypes,
    Today,
    phase_text,
)
from legion_llm.mcp.runner import Runner
from legion_llm.mcp.sampling import client_of

Text = Annotated[str | None, Field(min_length=1)]
Signal = Literal["positive", "negative", "corrective"]
DecisionPoint = Literal[
    "review-verdict", "review-override", "agent-selection", "manual-edit", "fix-acceptance"
]
LLM_ARGUMENTS = ("engine", "model", "max_cost")


def given(values: dict[str, Any], *skip: str) -> dict[str, Any]:
    """The arguments passed (a None is one left out), without `skip`."""
    return {k: v for k, v in values.items() if v is not None and k not in skip}


class MemoryTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def memory_recall(
        self,
        kind: Annotated[
            Literal["outcomes", "patterns", "errors", "preferences", "topic", "learnings", "match"],
            Field(description="What to recall; see the tool's description."),
        ],
        query: Annotated[
            str | None, Field(min_length=1, description="topic, error text or mission goal.")
        ] = None,
        tags: Tags = None,
        agent: Annotated[str | None, Field(description="Only this agent's records.")] = None,
        task_type: Annotated[str | None, Field(description="Only this task type.")] = None,
        signal: Signal | Literal["all"] | None = None,
        decision_point: DecisionPoint | Literal["all"] | None = None,
        branch: Branch = None,
        limit: Annotated[int | None, Field(ge=0, le=1000, description="At most this many.")] = None,
        max_tokens: Annotated[
            int | None, Field(ge=1, le=200_000, description="learnings: budget (chars / 4).")
        ] = None,
        detail: Detail = "concise",
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Recall memory; writes nothing. kind: outcomes (importance x recency; tags, agent,
        task_type, branch), patterns (tags, branch), errors (stored fixes; query ranks them by
        shared keywords), preferences (signal, decision_point, agent, tags), topic (query
        searched in every memory file), learnings (the mission learnings section for the goal
        in query; max_tokens), match (the known fix for the new error in query: answer fix,
        confirm or none; engine may judge a close call). No memory is an empty result. Returns
        {data: {records, total}}; kind=learnings: {data: {section, learnings}}; kind=match:
        {data: {answer, matches}}."""
        passed = given(dict(locals()), "self", "kind", "detail", "today", "ctx")
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            llm = None
            if kind == "match":
                llm = LazySession(c, engine, model, max_cost, client_of(ctx))
            return memory.recall_result(c, kind, passed, llm, detailed=detail == "detailed")

        return run.run(build)

    def memory_store(
        self,
        kind: Annotated[
            Literal["outcome", "pattern", "error", "preference", "learning"],
            Field(description="What to store; see the tool's description for its arguments."),
        ],
        phase: Annotated[
            str | int | float | None, Field(description="Phase number, e.g. 4 or 6.1.")
        ] = None,
        plan: Annotated[str | None, Field(description="Plan id, e.g. 04-03, or review.")] = None,
        agent: Annotated[str | None, Field(description="Agent id (or autonomous, system).")] = None,
        outcome: Outcome | None = None,
        summary: Annotated[str | None, Field(description="One line: what happened.")] = None,
        task_type: Annotated[
            str | None, Field(description="Default: the agent's CATALOG.md task type.")
        ] = None,
        review_cycles: Annotated[int | None, Field(ge=0, le=100)] = None,
        escalated: bool | None = None,
        trivial: bool | None = None,
        blockers: Annotated[int | None, Field(ge=0, le=100)] = None,
        cross_division: bool | None = None,
        importance: Annotated[
            int | None, Field(ge=1, le=5, description="Overrides the computed importance.")
        ] = None,
        branch: Annotated[str | None, Field(description="Default: the current git branch.")] = None,
        pattern: Annotated[str | None, Field(description="What was done that worked.")] = None,
        context: Annotated[str | None, Field(description="Where and why.")] = None,
        reuse_criteria: Annotated[str | None, Field(description="When to apply it again.")] = None,
        source: Annotated[str | None, Field(description="O-NNN, a mission id, manual.")] = None,
        signature: Annotated[str | None, Field(description="The error message.")] = None,
        fix: Annotated[str | None, Field(description="What resolved it.")] = None,
        resolved: Annotated[
            bool | None, Field(description="Did the fix work? Default true.")
        ] = None,
        decision_point: DecisionPoint | None = None,
        proposed: Annotated[str | None, Field(description="What was proposed.")] = None,
        user_choice: Annotated[str | None, Field(description="What the user did.")] = None,
        signal: Signal | None = None,
        title: Annotated[str | None, Field(description="A specific title.")] = None,
        body: Annotated[str | None, Field(description="1-3 paragraphs: do or avoid.")] = None,
        category: Literal["pattern", "gotcha", "architecture", "tooling", "prompt"] | None = None,
        confidence: Literal["low", "medium", "high"] | None = None,
        tags: Tags = None,
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Store one record; the same record is never stored twice. kind=outcome (OUTCOMES.md):
        phase, plan, agent, outcome, summary; optional task_type, tags, review_cycles,
        escalated, trivial, blockers, cross_division, importance, branch. kind=pattern: pattern,
        context, reuse_criteria; source, tags. kind=error: signature, fix, agent; resolved,
        tags; the same error stored again keeps both fixes (action updated); engine judges a
        close call. kind=preference: decision_point, context, proposed, user_choice, signal,
        agent; tags. kind=learning (.mission-control/memory/): title, body, category, tags
        (2-5), confidence; source; the same learning from another source is reinforced. Returns
        {data: {record, action}}; kind=learning: {data: {learning, path, action}}."""
        values = given(dict(locals()), "self", "kind", "today", "ctx", *LLM_ARGUMENTS)
        if "phase" in values:
            values["phase"] = phase_text(values["phase"])
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            llm = None
            if kind == "error":
                llm = LazySession(c, engine, model, max_cost, client_of(ctx))
            elif given({"engine": engine, "model": model, "max_cost": max_cost}):
                values.update(given({"engine": engine, "model": model, "max_cost": max_cost}))
            return memory.store_result(c, kind, values, llm, today)

        return run.run(build)

    def memory_summary(
        self,
        view: Annotated[
            Literal["briefing", "signals", "agent_scores", "archetypes"],
            Field(description="See the tool's description."),
        ] = "briefing",
        task_types: TaskTypes = None,
        agents: Annotated[tuple[str, ...] | None, Field(description="Candidate agents.")] = None,
        branch: Branch = None,
        detail: Detail = "concise",
        today: Today = None,
    ) -> dict[str, Any]:
        """Summarise the memory; writes nothing. view: briefing (session start), signals (for
        planning: task_types, candidate agents), agent_scores (per agent with 2+ records;
        task_types, branch), archetypes (per task type: success rate, volume, top agent;
        task_types, branch). Returns view=briefing: {data: {recent_outcomes, top_agents,
        total_records}}; view=signals: {data: {agent_scores, archetype_scores,
        preference_boosts, patterns}}; view=agent_scores: {data: {scores: [{agent,
        memory_score}]}}; view=archetypes: {data: {archetypes: {<task type>: {successRate,
        topAgent}}}}."""
        passed = given(dict(locals()), "self", "view", "detail", "today")
        run = self.runner
        return run.run(lambda: memory.summary_result(run.common(today), view, passed,
                                                     detailed=detail == "detailed"))  # fmt: skip

    def memory_prune(self, apply: Apply = False, today: Today = None) -> dict[str, Any]:
        """Move old, low-importance outcomes from OUTCOMES.md to ARCHIVE.md. A preview unless
        apply=true. Returns {data: {archived, remaining, applied, report}}."""
        run = self.runner
        return run.run(lambda: outcomes.prune_result(run.common(today), not apply))

    def memory_scan(self, apply: Apply = False) -> dict[str, Any]:
        """Find secrets already in the memory files and compacted summaries; apply=true redacts
        them in place, else a report that writes nothing. Values are never shown. ok is false
        while a finding is not redacted. Returns {data: {findings: [{path, line, kind}], total,
        fixed_files, clean}}."""
        run = self.runner
        return run.run(lambda: scan.scan_result(run.common(None), apply))
