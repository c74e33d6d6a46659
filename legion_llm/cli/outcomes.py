"""`legion-llm outcomes add|recall|agent-scores|archetypes`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.commands.outcomes import add_result, agent_scores_result, archetypes_result
from legion_llm.app.context import split_option
from legion_llm.cli.common import BranchOpt, JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common

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
