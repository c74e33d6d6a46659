"""`legion-llm patterns|preferences add|recall`, `legion-llm recall TOPIC`, `legion-llm signals`
(the use cases: app/commands/knowledge.py; cli/errors.py adds `errors` on top)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.app.commands.knowledge import (
    add_result,
    one_of,
    recall_result,
    recall_topic_result,
    signals_result,
)
from legion_llm.app.context import Common, split_option
from legion_llm.cli.common import BranchOpt, JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.render import common
from legion_llm.memory.knowledge.read import (
    DECISION_POINTS,
    PATTERNS,
    PREFERENCES,
    SIGNALS,
    KnowledgeKind,
)

if TYPE_CHECKING:
    from legion_llm.app.session import LazySession

patterns_app = typer.Typer(no_args_is_help=True, help="Reusable patterns (PATTERNS.md).")
preferences_app = typer.Typer(no_args_is_help=True, help="User decision signals (PREFERENCES.md).")

TagsOpt = Annotated[str | None, typer.Option("--tags", help="Comma-separated tags.")]
AgentOpt = Annotated[str | None, typer.Option("--agent")]


def _text(name: str, help_text: str) -> Any:
    return typer.Option(name, help=help_text)


def _add(
    c: Common, kind: KnowledgeKind, values: dict[str, str], llm: LazySession | None = None
) -> None:
    finish(add_result(c, kind, values, llm), c)


@patterns_app.command("add")
def patterns_add(
    pattern: Annotated[str, _text("--pattern", "What was done that worked.")],
    context: Annotated[str, _text("--context", "Where and why it worked.")],
    reuse_criteria: Annotated[str, _text("--reuse-criteria", "When to apply it again.")],
    source: Annotated[str, _text("--source", "O-NNN or a description.")] = "",
    tags: TagsOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Store a pattern (spec section 8)."""
    values = {
        "pattern": pattern,
        "context": context,
        "reuse_criteria": reuse_criteria,
        "source": source,
        "tags": tags or "",
    }
    _add(common(root, today, json_), PATTERNS, values)


@patterns_app.command("recall")
def patterns_recall(
    tags: TagsOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 10,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Recall patterns by recency (spec section 8)."""
    c = common(root, today, json_)
    finish(recall_result(c, PATTERNS, split_option(tags), limit, branch=branch), c)


@preferences_app.command("add")
def preferences_add(
    decision_point: Annotated[
        str,
        _text(
            "--decision-point",
            "review-verdict, review-override, agent-selection, manual-edit or fix-acceptance.",
        ),
    ],
    context: Annotated[str, _text("--context", "Phase, plan, cycle and situation.")],
    proposed: Annotated[str, _text("--proposed", "What was proposed.")],
    user_choice: Annotated[str, _text("--user-choice", "What the user did.")],
    signal: Annotated[str, _text("--signal", "positive, negative or corrective.")],
    agent: Annotated[str, _text("--agent", "The proposing agent, or system.")],
    tags: TagsOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Store a user preference signal (spec section 13)."""
    values = {
        "decision_point": decision_point, "context": context, "proposed": proposed,
        "user_choice": user_choice, "signal": signal, "agent": agent, "tags": tags or "",
    }  # fmt: skip
    _add(common(root, today, json_), PREFERENCES, values)


@preferences_app.command("recall")
def preferences_recall(
    signal: Annotated[
        str, typer.Option("--signal", help="positive, negative, corrective or all.")
    ] = "all",
    decision_point: Annotated[
        str,
        typer.Option(
            "--decision-point",
            help="review-verdict, review-override, agent-selection, manual-edit, fix-acceptance "
            "or all.",
        ),
    ] = "all",
    tags: TagsOpt = None,
    agent: AgentOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 10,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Recall preference signals by recency (spec section 13)."""
    c = common(root, today, json_)
    one_of("signal", signal, (*SIGNALS, "all"))
    one_of("decision-point", decision_point, (*DECISION_POINTS, "all"))
    found = recall_result(c, PREFERENCES, split_option(tags), limit, branch=branch, agent=agent,
                          signal=signal, decision_point=decision_point)  # fmt: skip
    finish(found, c)


def recall_topic_cmd(
    topic: Annotated[str, typer.Argument(help="What to look for.")],
    limit: Annotated[int, typer.Option("--limit", min=1)] = 20,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Search every memory file: tag match 3, summary substring 2, body substring 1."""
    c = common(root, today, json_)
    finish(recall_topic_result(c, topic, limit), c)


def signals_cmd(
    task_types: Annotated[
        str | None, typer.Option("--task-types", help="Comma-separated task types.")
    ] = None,
    agents: Annotated[
        str | None, typer.Option("--agents", help="Comma-separated candidate agents.")
    ] = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Everything /legion:plan needs from memory, in one call."""
    c = common(root, today, json_)
    finish(signals_result(c, split_option(task_types), split_option(agents)), c)
