"""`legion-llm outcomes add|recall|agent-scores|archetypes`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.cli.common import (
    BranchOpt,
    CommandResult,
    Common,
    JsonOpt,
    RootOpt,
    TodayOpt,
    check_stored_sizes,
    common,
    finish,
    resolve_branch,
    split_option,
)
from legion_llm.cli.render import table
from legion_llm.config import Settings
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.outcomes.recall import agent_scores, archetype_scores

if TYPE_CHECKING:
    from legion_llm.memory.outcomes.store import OutcomeInput

app = typer.Typer(no_args_is_help=True, help="Store and recall task outcomes (OUTCOMES.md).")

TagsOpt = Annotated[str | None, typer.Option("--tags", help="Comma-separated tags.")]
TaskTypesOpt = Annotated[
    str | None, typer.Option("--task-types", help="Comma-separated task types.")
]


@app.command("add")
def add(
    phase: Annotated[str, typer.Option("--phase", help="Phase number, e.g. 3.")],
    plan: Annotated[str, typer.Option("--plan", help="Plan id, e.g. 03-01 (or review).")],
    agent: Annotated[str, typer.Option("--agent", help="Agent id, or autonomous.")],
    outcome: Annotated[str, typer.Option("--outcome", help="success, partial or failed.")],
    summary: Annotated[str, typer.Option("--summary", help="One line: what happened.")],
    task_type: Annotated[str | None, typer.Option("--task-type")] = None,
    tags: TagsOpt = None,
    review_cycles: Annotated[int, typer.Option("--review-cycles", min=0)] = 1,
    escalated: Annotated[bool, typer.Option("--escalated")] = False,
    trivial: Annotated[bool, typer.Option("--trivial")] = False,
    blockers: Annotated[int, typer.Option("--blockers", min=0)] = 0,
    cross_division: Annotated[bool, typer.Option("--cross-division")] = False,
    importance: Annotated[int | None, typer.Option("--importance")] = None,
    catalog: Annotated[Path | None, typer.Option("--catalog", help="CATALOG.md path.")] = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Store one outcome (spec section 3)."""
    from legion_llm.memory.outcomes.store import OutcomeInput

    c = common(root, today, json_)
    data = OutcomeInput(
        phase=phase, plan=plan, agent=agent, outcome=outcome, summary=summary,
        task_type=task_type, tags=split_option(tags), review_cycles=review_cycles,
        escalated=escalated, trivial=trivial, blockers=blockers,
        cross_division=cross_division, importance=importance,
    )  # fmt: skip
    finish(add_result(c, data, catalog), c)


def add_result(c: Common, data: OutcomeInput, catalog: Path | None = None) -> CommandResult:
    """`outcomes add` for the CLI and the MCP server: store, auto-prune, the --json data."""
    from legion_llm.memory.catalog import catalog_path

    check_stored_sizes(vars(data))
    from legion_llm.memory.outcomes.store import add_outcome

    stored = add_outcome(c.paths, data, today=c.today, catalog_file=catalog_path(c.root, catalog))
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


@app.command("recall")
def recall_cmd(
    tags: TagsOpt = None,
    agent: Annotated[str | None, typer.Option("--agent")] = None,
    task_type: Annotated[str | None, typer.Option("--task-type")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 20,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Recall outcomes scored by importance × recency (spec section 4).

    Imp. is the record's importance (1-5); Score is importance × recency, the order shown."""
    from legion_llm.cli.fast import outcomes_recall  # the same call the fast path makes

    code = outcomes_recall(tags, agent, task_type, limit, branch, root, today, json_)
    if code:
        raise typer.Exit(code)


@app.command("agent-scores")
def agent_scores_cmd(
    task_types: TaskTypesOpt = None,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Memory score per agent for these task types (agents with at least 2 records)."""
    c = common(root, today, json_)
    finish(agent_scores_result(c, split_option(task_types), branch), c)


def agent_scores_result(c: Common, task_types: list[str], branch: str) -> CommandResult:
    outcomes = read_outcomes(c.paths.outcomes)
    records = _on_branch(outcomes.records, resolve_branch(branch, c.root))
    scores = agent_scores(records, task_types, c.today)
    columns = ["agent", "memory_score", "total_tasks", "success_rate", "avg_importance"]
    human = lambda: table("Agent memory scores", columns, [[s[k] for k in columns] for s in scores])  # noqa: E731
    return CommandResult("outcomes agent-scores", {"scores": scores}, human, outcomes.warnings)


@app.command("archetypes")
def archetypes_cmd(
    task_types: TaskTypesOpt = None,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Outcomes grouped by task type: success rate, volume, top agent."""
    c = common(root, today, json_)
    finish(archetypes_result(c, split_option(task_types), branch), c)


def archetypes_result(c: Common, task_types: list[str], branch: str) -> CommandResult:
    outcomes = read_outcomes(c.paths.outcomes)
    records = _on_branch(outcomes.records, resolve_branch(branch, c.root))
    scores = archetype_scores(records, task_types, c.today)
    columns = ["successRate", "totalOutcomes", "avgImportance", "topAgent"]
    rows = [[name, *(s[k] for k in columns), ", ".join(s["agents"])] for name, s in scores.items()]
    human = lambda: table("Archetype scores", ["task type", *columns, "agents"], rows)  # noqa: E731
    data = {"archetypes": scores}
    return CommandResult("outcomes archetypes", data, human, outcomes.warnings)


def _on_branch(records: list[Any], branch: str | None) -> list[Any]:
    return records if branch is None else [r for r in records if r.branch == branch]
