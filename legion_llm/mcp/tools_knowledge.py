"""Tools over PATTERNS.md, ERRORS.md and PREFERENCES.md: add, recall, and error match. Each returns
the object `legion-llm ... --json` prints for the same call."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from legion_llm.app.commands import errors, knowledge
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LazySession
from legion_llm.mcp.params import Agent, Branch, Engine, Limit, MaxCost, Model, Tags, Today
from legion_llm.mcp.runner import Runner
from legion_llm.mcp.sampling import client_of
from legion_llm.memory.knowledge.read import ERRORS, PATTERNS, PREFERENCES

Text = Annotated[str, Field(min_length=1)]
Signal = Literal["positive", "negative", "corrective"]
DecisionPoint = Literal[
    "review-verdict", "review-override", "agent-selection", "manual-edit", "fix-acceptance"
]


class KnowledgeTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def patterns_add(
        self,
        pattern: Annotated[str, Field(min_length=1, description="What was done that worked.")],
        context: Annotated[str, Field(min_length=1, description="Where and why it worked.")],
        reuse_criteria: Annotated[str, Field(min_length=1, description="When to apply it again.")],
        source: Annotated[str, Field(description="O-NNN or a description.")] = "",
        tags: Tags = (),
        today: Today = None,
    ) -> dict[str, Any]:
        """Store a pattern in PATTERNS.md (section 8; `legion-llm patterns add --json`).
        Returns {data: {record: {id, ...}, action}}."""
        values = {"pattern": pattern, "context": context, "reuse_criteria": reuse_criteria,
                  "source": source, "tags": ", ".join(tags)}  # fmt: skip
        run = self.runner
        return run.run(lambda: knowledge.add_result(run.common(today), PATTERNS, values))

    def patterns_recall(
        self, tags: Tags = (), limit: Limit = 10, branch: Branch = "all", today: Today = None
    ) -> dict[str, Any]:
        """Recall patterns, newest first (section 8; `legion-llm patterns recall --json`).
        Returns {data: {records: [{id, pattern, context, reuse_criteria, source, tags}], total}}."""
        run = self.runner
        return run.run(lambda: knowledge.recall_result(run.common(today), PATTERNS, tags, limit,
                                                       branch=branch))  # fmt: skip

    def errors_add(
        self,
        signature: Annotated[str, Field(min_length=1, description="The error message.")],
        fix: Annotated[str, Field(min_length=1, description="What resolved it.")],
        agent: Annotated[str, Field(min_length=1, description="The agent that resolved it.")],
        resolved: Annotated[bool, Field(description="Did the fix work?")] = True,
        tags: Tags = (),
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Store an error fix in ERRORS.md (section 9; `legion-llm errors add --json`). The same
        root cause is never stored twice: action is added, existing (its fix worked) or updated
        (its fix replaced). Only a close call asks the engine. Returns {data: {record: {id, ...},
        action, ...}}; a duplicate adds decided_by (exact, fuzzy, claude or offline: what judged
        it the same error) and its match score."""
        values = {"error_signature": signature, "fix": fix, "agent": agent,
                  "resolved": str(resolved).lower(), "tags": ", ".join(tags)}  # fmt: skip
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            llm = LazySession(c, engine, model, max_cost, client_of(ctx))
            return knowledge.add_result(c, ERRORS, values, llm)

        return run.run(build)

    def errors_recall(
        self,
        error_text: Annotated[str | None, Field(description="Rank by shared keywords.")] = None,
        tags: Tags = (),
        limit: Limit = 5,
        branch: Branch = "all",
        today: Today = None,
    ) -> dict[str, Any]:
        """Recall error fixes, Resolved first, then keyword overlap (section 9; `legion-llm errors
        recall --json`). Returns {data: {records: [{id, error_signature, fix, resolved}], total}}."""
        run = self.runner
        return run.run(lambda: knowledge.recall_result(run.common(today), ERRORS, tags, limit,
                                                       branch=branch, error_text=error_text))  # fmt: skip

    def errors_match(
        self,
        error_text: Annotated[str, Field(min_length=1, description="The new error's text.")],
        limit: Limit = 5,
        engine: Engine = None,
        model: Model = None,
        max_cost: MaxCost = None,
        today: Today = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Known fixes for a new error (`legion-llm errors match --json`). data.answer is `fix`
        (apply matches[0].fix: confident), `confirm` (the first `shown` matches, up to three:
        check which applies before using its fix) or `none` (no stored fix applies). Returns
        {data: {answer, decided_by, shown, matches: [{id, fix, resolved, score, confidence,
        shown, evidence: {shared, conflicting, missing_in_query, missing_in_stored}}]}}; with a
        model engine a `confirm` is judged in one call, else data.to_judge lets you judge it."""
        run = self.runner

        def build() -> CommandResult:
            c = run.common(today)
            llm = LazySession(c, engine, model, max_cost, client_of(ctx))
            return errors.match_result(c, error_text, limit, llm)

        return run.run(build)

    def preferences_add(
        self,
        decision_point: DecisionPoint,
        context: Annotated[str, Field(min_length=1, description="Phase, plan, cycle, situation.")],
        proposed: Annotated[str, Field(min_length=1, description="What was proposed.")],
        user_choice: Annotated[str, Field(min_length=1, description="What the user did.")],
        signal: Signal,
        agent: Annotated[str, Field(min_length=1, description="Proposing agent, or system.")],
        tags: Tags = (),
        today: Today = None,
    ) -> dict[str, Any]:
        """Store a user decision signal in PREFERENCES.md (section 13; `legion-llm preferences
        add --json`). Returns {data: {record: {id, ...}, action}}."""
        values = {"decision_point": decision_point, "context": context, "proposed": proposed,
                  "user_choice": user_choice, "signal": signal, "agent": agent,
                  "tags": ", ".join(tags)}  # fmt: skip
        run = self.runner
        return run.run(lambda: knowledge.add_result(run.common(today), PREFERENCES, values))

    def preferences_recall(
        self,
        signal: Signal | Literal["all"] = "all",
        decision_point: DecisionPoint | Literal["all"] = "all",
        tags: Tags = (),
        agent: Agent = None,
        limit: Limit = 10,
        branch: Branch = "all",
        today: Today = None,
    ) -> dict[str, Any]:
        """Recall preference signals, newest first (section 13; `legion-llm preferences recall
        --json`). Returns {data: {records: [{id, decision_point, signal, agent, ...}], total}}."""
        run = self.runner
        return run.run(lambda: knowledge.recall_result(
            run.common(today), PREFERENCES, tags, limit, branch=branch, agent=agent,
            signal=signal, decision_point=decision_point))  # fmt: skip
