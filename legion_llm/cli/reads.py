"""The hottest read-only commands without typer (`outcomes recall`, `briefing`): the results the
CLI (its fast path and typer's) and the MCP tools share."""

from __future__ import annotations

from typing import Any

from legion_llm.cli.render import rich_print, table
from legion_llm.cli.result import CommandResult, Common, resolve_branch
from legion_llm.memory.outcomes.fastrecall import brief_outcomes, recall_outcomes
from legion_llm.memory.outcomes.recall import RecallQuery, prune_note, scored_dict


def render_records(title: str, records: list[dict[str, Any]]) -> None:
    keys = ["id", "date", "plan", "agent", "task_type", "outcome", "importance", "decay_score"]
    keys += ["summary"]
    columns = ["ID", "Date", "Plan", "Agent", "Task Type", "Outcome", "Imp.", "Score", "Summary"]
    table(title, columns, [[r[k] for k in keys] for r in records])


def recall_result(
    c: Common, tags: list[str], agent: str | None, task_type: str | None, limit: int, branch: str
) -> CommandResult:
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
    return CommandResult(
        "outcomes recall", data, lambda: render_records("Outcomes", found), warnings
    )


def briefing_result(c: Common) -> CommandResult:
    data, warnings = brief_outcomes(c.paths.outcomes, c.today)

    def human() -> None:
        rich_print(f"[bold]Memory briefing[/bold]: {data['total_records']} outcome records")
        recent = data["recent_outcomes"]
        if recent:
            table("Recent outcomes", ["ID", "Date", "Agent", "Outcome", "Score", "Summary"],
                  [[r["id"], r["date"], r["agent"], r["outcome"], r["decay_score"], r["summary"]]
                   for r in recent])  # fmt: skip
        if data["top_agents"]:
            columns = ["agent", "total_tasks", "success_rate", "avg_importance"]
            table("Top agents", columns, [[a[k] for k in columns] for a in data["top_agents"]])

    return CommandResult("briefing", data, human, warnings)
