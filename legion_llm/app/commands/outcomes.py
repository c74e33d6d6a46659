"""Outcomes (OUTCOMES.md): store one, recall them, agent and archetype scores, the session
briefing, prune to the archive."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common, check_stored_sizes, resolve_branch
from legion_llm.app.result import Block, CommandResult, Human, Styled, Table
from legion_llm.memory.outcomes.fastrecall import brief_outcomes, recall_outcomes
from legion_llm.memory.outcomes.recall import RecallQuery, prune_note, scored_dict

if TYPE_CHECKING:
    from legion_llm.config import Settings
    from legion_llm.memory.outcomes.store import OutcomeInput


def add_result(c: Common, data: OutcomeInput, catalog: Path | None = None) -> CommandResult:
    """`outcomes add`: store, auto-prune, the --json data."""
    from legion_llm.memory.catalog import named_catalog
    from legion_llm.memory.outcomes.store import add_outcome, validate

    check_stored_sizes(vars(data))
    validate(data)  # every option refused before anything is read or written
    catalog_file = named_catalog(c.root, catalog)
    c.require_project()
    stored = add_outcome(c.paths, data, today=c.today, catalog_file=catalog_file)
    result: dict[str, Any] = {"record": stored.record.to_dict(), "action": "added"}
    settings = c.settings()
    warnings = list(stored.warnings) + list(settings.warnings)
    auto = _auto_prune(c, settings, stored.record_count)
    if auto is not None:
        result["auto_prune"] = auto
    record = stored.record
    human = (
        f"Stored {record.id or 'outcome'} in {c.paths.outcomes.relative_to(c.root)} "
        f"(importance {record.importance}, task type {record.task_type}, branch {record.branch})"
    )
    if auto is not None:
        human += "\n" + auto["report"]
    return CommandResult("outcomes add", result, human, warnings)


def _auto_prune(c: Common, settings: Settings, count: int) -> dict[str, Any] | None:
    """Spec §7.5: after a store, prune when memory.auto_prune is on and the log is over threshold."""
    if not settings.auto_prune or count <= settings.prune_threshold:
        return None
    from legion_llm.errors import LegionError
    from legion_llm.memory.outcomes.prune import prune

    try:
        report = prune(c.paths, settings, c.today)
    except LegionError as exc:  # prune failure never blocks the store
        return {"archived": 0, "report": f"Warning: auto-prune failed: {exc.message}"}
    return {"archived": report.archived if report.applied else 0, "report": report.text()}


def records_table(title: str, records: list[dict[str, Any]]) -> Table:
    keys = ["id", "date", "plan", "agent", "task_type", "outcome", "importance", "decay_score"]
    keys += ["summary"]
    columns = ["ID", "Date", "Plan", "Agent", "Task Type", "Outcome", "Imp.", "Score", "Summary"]
    return Table(title, columns, [[r[k] for k in keys] for r in records])


def recall_result(
    c: Common, tags: list[str], agent: str | None, task_type: str | None, limit: int, branch: str
) -> CommandResult:
    """`outcomes recall`: scored by importance x recency (one of the hottest reads: it imports
    only what it uses)."""
    query = RecallQuery(tags, agent, task_type, resolve_branch(branch, c.root), limit)
    read = recall_outcomes(c.paths.outcomes, query, c.today)
    found = [scored_dict(s) for s in read.found]
    warnings = list(read.warnings)
    settings = c.settings()
    warnings += settings.warnings
    threshold = settings.prune_threshold
    if read.total > threshold:
        warnings.append(prune_note(read.total))
    data = {"records": found, "total": len(found)}
    human: Human = [records_table("Outcomes", found)]
    if not found:
        human = (
            f"No outcome matches (OUTCOMES.md holds {read.total})."
            if read.total
            else "No outcomes recorded yet (OUTCOMES.md holds none)."
        )
    return CommandResult("outcomes recall", data, human, warnings)


def briefing_result(c: Common) -> CommandResult:
    """`briefing`: recent high-signal outcomes, top agents, record count."""
    data, warnings = brief_outcomes(c.paths.outcomes, c.today)
    outside = c.no_project_here()
    if outside is not None:  # exit 0, as for missing memory: a session starts the same
        return CommandResult("briefing", data, outside, [outside] if c.as_json else warnings)
    human: list[Block] = [
        Styled("[bold]Memory briefing[/bold]: {} outcome records", (str(data["total_records"]),))
    ]
    recent = data["recent_outcomes"]
    if recent:
        human.append(Table("Recent outcomes", ["ID", "Date", "Agent", "Outcome", "Score", "Summary"],
                           [[r["id"], r["date"], r["agent"], r["outcome"], r["decay_score"],
                             r["summary"]] for r in recent]))  # fmt: skip
    if data["top_agents"]:
        columns = ["agent", "total_tasks", "success_rate", "avg_importance"]
        human.append(Table("Top agents", columns, [[a[k] for k in columns]
                                                   for a in data["top_agents"]]))  # fmt: skip
    return CommandResult("briefing", data, human, warnings)


def agent_scores_result(c: Common, task_types: list[str], branch: str) -> CommandResult:
    """`outcomes agent-scores`: memory score per agent for these task types."""
    from legion_llm.memory.outcomes.read import read_outcomes
    from legion_llm.memory.outcomes.recall import agent_scores

    outcomes = read_outcomes(c.paths.outcomes)
    records = _on_branch(outcomes.records, resolve_branch(branch, c.root))
    scores = agent_scores(records, task_types, c.today)
    columns = ["agent", "memory_score", "total_tasks", "success_rate", "avg_importance"]
    human = [Table("Agent memory scores", columns, [[s[k] for k in columns] for s in scores])]
    return CommandResult("outcomes agent-scores", {"scores": scores}, human, outcomes.warnings)


def archetypes_result(c: Common, task_types: list[str], branch: str) -> CommandResult:
    """`outcomes archetypes`: outcomes grouped by task type."""
    from legion_llm.memory.outcomes.read import read_outcomes
    from legion_llm.memory.outcomes.recall import archetype_scores

    outcomes = read_outcomes(c.paths.outcomes)
    records = _on_branch(outcomes.records, resolve_branch(branch, c.root))
    scores = archetype_scores(records, task_types, c.today)
    columns = ["successRate", "totalOutcomes", "avgImportance", "topAgent"]
    rows = [[name, *(s[k] for k in columns), ", ".join(s["agents"])] for name, s in scores.items()]
    human = [Table("Archetype scores", ["task type", *columns, "agents"], rows)]
    return CommandResult("outcomes archetypes", {"archetypes": scores}, human, outcomes.warnings)


def _on_branch(records: list[Any], branch: str | None) -> list[Any]:
    return records if branch is None else [r for r in records if r.branch == branch]


def prune_result(c: Common, dry_run: bool) -> CommandResult:
    """`prune`: archive old, low-importance outcomes to ARCHIVE.md (spec section 7.5)."""
    from legion_llm.memory.outcomes.prune import prune

    settings = c.settings()
    report = prune(c.paths, settings, c.today, dry_run=dry_run)
    warnings = list(settings.warnings) + report.warnings
    if report.plan.total <= settings.prune_threshold and report.plan.candidates:
        warnings.append(
            f"Note: OUTCOMES.md has {report.plan.total} records, not over the threshold "
            f"({settings.prune_threshold}); pruning because it was asked for."
        )
    data: dict[str, Any] = {
        "dry_run": dry_run,
        "applied": report.applied,
        "archived": [r.id for r in report.plan.candidates],
        "remaining": report.remaining,
        "preserved_high_importance": report.plan.high_importance,
        "preserved_current_phase": report.plan.current_phase_count,
        "current_phase": report.plan.current_phase,
        "archive_total": report.archive_total,
        "report": report.text(),
    }
    return CommandResult("prune", data, report.text(), warnings)
