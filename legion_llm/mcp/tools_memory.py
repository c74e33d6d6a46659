"""Tools over OUTCOMES.md and the whole memory folder: outcomes, scores, briefing, signals, recall
TOPIC, prune. Each returns the object `legion-llm ... --json` prints for the same call."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from legion_llm.app.commands import knowledge, outcomes, scan
from legion_llm.mcp.params import (
    Agent,
    Branch,
    Limit,
    Outcome,
    PhaseNumber,
    Tags,
    TaskTypes,
    Today,
    flat_fields,
    phase_text,
)
from legion_llm.mcp.runner import Runner
from legion_llm.memory.outcomes.store import OutcomeInput

OUTCOME_FIELDS = {
    "phase": "Phase number, e.g. 4 or 6.1 (a number or a string).",
    "plan": "Plan id, e.g. 04-03, or review.",
    "agent": "Agent id, or autonomous.",
    "outcome": "success, partial or failed.",
    "summary": "One line: what happened.",
    "task_type": "Default: the agent's first CATALOG.md task type, else general.",
    "tags": "Tags of the record.",
    "importance": "1-5; overrides the computed importance.",
    "branch": "Default: the current git branch.",
}


class MemoryTools:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    @flat_fields(
        OutcomeInput, OUTCOME_FIELDS, {"phase": PhaseNumber, "outcome": Outcome}, today=Today
    )
    def outcomes_add(self, **values: Any) -> dict[str, Any]:
        """Store one task outcome in OUTCOMES.md (memory-manager section 3), like `legion-llm
        outcomes add --json`: phase, plan (e.g. 04-03 or review), agent (or autonomous), outcome
        (success|partial|failed), summary (one line); optional task_type (else the agent's first
        CATALOG.md task type, else general), tags, review_cycles, escalated, trivial, blockers,
        cross_division, importance (1-5 overrides the computed score), branch (default: the git
        branch). Returns {ok, command, data: {record: {id, importance, task_type, ...}, action},
        warnings}."""
        today = values.pop("today", None)
        record = OutcomeInput(**{**values, "phase": phase_text(values["phase"])})
        run = self.runner
        return run.run(lambda: outcomes.add_result(run.common(today), record))

    def outcomes_recall(
        self,
        tags: Tags = (),
        agent: Agent = None,
        task_type: Annotated[str | None, Field(description="Only this task type.")] = None,
        limit: Limit = 20,
        branch: Branch = "all",
        today: Today = None,
    ) -> dict[str, Any]:
        """Recall outcomes scored by importance x recency (section 4), like `legion-llm outcomes
        recall --json`. Returns {data: {records: [{id, date, agent, outcome, decay_score, summary,
        ...}], total}}; no OUTCOMES.md is an empty result, never an error."""
        run = self.runner
        return run.run(
            lambda: outcomes.recall_result(
                run.common(today), list(tags), agent, task_type, limit, branch
            )
        )

    def outcomes_agent_scores(
        self, task_types: TaskTypes = (), branch: Branch = "all", today: Today = None
    ) -> dict[str, Any]:
        """Memory score per agent for these task types (agents with 2+ records), like `legion-llm
        outcomes agent-scores --json`. Returns {data: {scores: [{agent, memory_score, ...}]}}."""
        run = self.runner
        return run.run(
            lambda: outcomes.agent_scores_result(run.common(today), list(task_types), branch)
        )

    def outcomes_archetypes(
        self, task_types: TaskTypes = (), branch: Branch = "all", today: Today = None
    ) -> dict[str, Any]:
        """Outcomes grouped by task type: success rate, volume, top agent (`legion-llm outcomes
        archetypes --json`). Returns {data: {archetypes: {<task type>: {successRate, totalOutcomes,
        avgImportance, topAgent, agents}}}}."""
        run = self.runner
        return run.run(
            lambda: outcomes.archetypes_result(run.common(today), list(task_types), branch)
        )

    def briefing(self, today: Today = None) -> dict[str, Any]:
        """Session briefing (`legion-llm briefing --json`): {data: {recent_outcomes, top_agents,
        total_records}}."""
        run = self.runner
        return run.run(lambda: outcomes.briefing_result(run.common(today)))

    def signals(
        self,
        task_types: TaskTypes = (),
        agents: Annotated[tuple[str, ...], Field(description="Candidate agent ids.")] = (),
        today: Today = None,
    ) -> dict[str, Any]:
        """Everything /legion:plan needs from memory in one call (`legion-llm signals --json`):
        {data: {agent_scores, archetype_scores, preference_boosts, patterns, claude_code}}."""
        run = self.runner
        return run.run(
            lambda: knowledge.signals_result(run.common(today), list(task_types), list(agents))
        )

    def recall_topic(
        self,
        topic: Annotated[str, Field(min_length=1, description="What to look for.")],
        limit: Limit = 20,
        today: Today = None,
    ) -> dict[str, Any]:
        """Search every memory file for a topic (`legion-llm recall TOPIC --json`): tag match 3,
        summary substring 2, body substring 1. Returns {data: {topic, records, total}}."""
        run = self.runner
        return run.run(lambda: knowledge.recall_topic_result(run.common(today), topic, limit))

    def prune(
        self,
        dry_run: Annotated[bool, Field(description="Only show what would move.")] = False,
        today: Today = None,
    ) -> dict[str, Any]:
        """Archive old, low-importance outcomes to ARCHIVE.md (section 7.5; `legion-llm prune
        --json`). Returns {data: {archived: [ids], remaining, applied, report, ...}}."""
        run = self.runner
        return run.run(lambda: outcomes.prune_result(run.common(today), dry_run))

    def scan(
        self,
        fix: Annotated[
            bool, Field(description="Redact what is found, in place (atomic, locked).")
        ] = False,
    ) -> dict[str, Any]:
        """Secrets already in the memory files and compacted summaries (`legion-llm scan
        --json`): {data: {findings: [{path, line, kind}], total, files_scanned, fixed_files,
        clean}}; values are never shown. ok is false while something found is not fixed."""
        run = self.runner
        return run.run(lambda: scan.scan_result(run.common(None), fix))
