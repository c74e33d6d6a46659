"""`legion-llm patterns|preferences add|recall`, `legion-llm recall TOPIC`, `legion-llm signals`, and
the add/recall results every knowledge base shares (cli/errors.py adds `errors` on top)."""

from __future__ import annotations

from collections.abc import Sequence
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
from legion_llm.cli.render import plain, rich_print, table, usage_lines
from legion_llm.errors import InputError
from legion_llm.memory.knowledge.read import (
    DECISION_POINTS,
    PATTERNS,
    PREFERENCES,
    SIGNALS,
    KnowledgeKind,
    read_knowledge,
)
from legion_llm.memory.knowledge.recall import KnowledgeQuery, recall_knowledge

if TYPE_CHECKING:
    from legion_llm.cli.llm import LazySession

patterns_app = typer.Typer(no_args_is_help=True, help="Reusable patterns (PATTERNS.md).")
preferences_app = typer.Typer(no_args_is_help=True, help="User decision signals (PREFERENCES.md).")

TagsOpt = Annotated[str | None, typer.Option("--tags", help="Comma-separated tags.")]
AgentOpt = Annotated[str | None, typer.Option("--agent")]


def _text(name: str, help_text: str) -> Any:
    return typer.Option(name, help=help_text)


def one_of(option: str, value: str, allowed: Sequence[str]) -> None:
    """A filter with a fixed set of values refuses any other (an unknown one would match nothing)."""
    if value not in allowed:
        raise InputError(f"--{option} must be one of {', '.join(allowed)}, not {value!r}")


OPTION_NAMES = {"error_signature": "signature"}  # a stored column -> its option, where they differ


def _add(
    c: Common, kind: KnowledgeKind, values: dict[str, str], llm: LazySession | None = None
) -> None:
    finish(add_result(c, kind, values, llm), c)


def add_result(
    c: Common, kind: KnowledgeKind, values: dict[str, str], llm: LazySession | None = None
) -> CommandResult:
    """`patterns|errors|preferences add` for the CLI and the MCP server."""
    from legion_llm.memory.knowledge.store import add_knowledge, offline_decider

    check_stored_sizes({OPTION_NAMES.get(k, k): v for k, v in values.items()})
    decide = llm.decider() if llm is not None else offline_decider
    stored = add_knowledge(c.paths, kind, values, today=c.today, decide=decide)
    data: dict[str, Any] = {"record": stored.record.to_dict(), "action": stored.action}
    if stored.decided_by:
        data["decided_by"] = stored.decided_by
        data["score"] = round(stored.score or 0.0, 4)
    if llm is not None and llm.session is not None:
        data["usage"] = llm.session.usage()
        stored.warnings.extend(llm.session.warnings)
    verbs = {"added": "Stored", "existing": "Already known as", "updated": "Updated the fix of"}
    human = f"{verbs[stored.action]} {stored.record.id} in .planning/memory/{kind.file_name}"
    if stored.close is not None:  # the confirm band: a new entry, the close one named
        data["close"] = {"id": stored.close, "confidence": stored.close_confidence}
        human += f" (close to {stored.close}, not merged: check whether it is the same error)"
    if llm is not None and "usage" in data:
        human = "\n".join([human, *usage_lines(data["usage"], llm.verbose)])
    return CommandResult(f"{kind.name} add", data, human, stored.warnings)


def _recall(c: Common, kind: KnowledgeKind, query: KnowledgeQuery, columns: list[str]) -> None:
    finish(recall_result(c, kind, query, columns), c)


def recall_result(
    c: Common, kind: KnowledgeKind, query: KnowledgeQuery, columns: Sequence[str] = ()
) -> CommandResult:
    """`patterns|errors|preferences recall` for the CLI and the MCP server."""
    loaded = read_knowledge(kind, c.paths.memory_dir / kind.file_name)
    records = recall_knowledge(loaded.records, query, c.today)
    data = {"records": records, "total": len(records)}

    def human() -> None:
        table(
            kind.file_name,
            ["id", *columns, "tags"],
            [[r["id"], *(r[k] for k in columns), ", ".join(r["tags"])] for r in records],
        )

    return CommandResult(f"{kind.name} recall", data, human, loaded.warnings)


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
    query = KnowledgeQuery(
        tags=split_option(tags), branch=resolve_branch(branch, c.root), limit=limit
    )
    _recall(c, PATTERNS, query, ["date", "pattern", "reuse_criteria", "source"])


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
    query = KnowledgeQuery(
        tags=split_option(tags), agent=agent, branch=resolve_branch(branch, c.root),
        signal=None if signal == "all" else signal,
        decision_point=None if decision_point == "all" else decision_point, limit=limit,
    )  # fmt: skip
    _recall(c, PREFERENCES, query, ["date", "decision_point", "signal", "agent", "user_choice"])


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


def recall_topic_result(c: Common, topic: str, limit: int) -> CommandResult:
    from legion_llm.memory.knowledge.signals import search_topic

    if not topic.strip():
        raise InputError("the TOPIC to recall must not be empty (an empty one matches everything)")

    hits, warnings = search_topic(c.paths, topic, limit)
    data = {"topic": topic, "records": hits, "total": len(hits)}
    columns = ["score", "source", "id", "title", "tags"]

    def human() -> None:
        rows = [[h["score"], h["source"], h["id"], h["title"], ", ".join(h["tags"])] for h in hits]
        table(f"recall {topic!r}", columns, rows)

    return CommandResult("recall", data, human, warnings)


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


def signals_result(c: Common, task_types: list[str], agents: list[str]) -> CommandResult:
    from legion_llm.memory.knowledge.signals import planning_signals

    data, warnings = planning_signals(c.paths, task_types, agents, c.today)

    def human() -> None:
        scores = data["agent_scores"]
        table(
            "Agent memory scores",
            ["agent", "memory_score", "total_tasks"],
            [[s["agent"], s["memory_score"], s["total_tasks"]] for s in scores],
        )
        boosts = data["preference_boosts"]
        table(
            "Preference boosts",
            ["agent", "positive", "corrective", "negative", "boost"],
            [
                [a, b["positive"], b["corrective"], b["negative"], b["preference_boost"]]
                for a, b in boosts.items()
            ],
        )
        table(
            "Patterns",
            ["id", "pattern", "reuse_criteria"],
            [[p["id"], p["pattern"], p["reuse_criteria"]] for p in data["patterns"]],
        )
        if data["claude_code"]["note"]:
            rich_print(f"Claude Code memory suggests:\n{plain(data['claude_code']['note'])}")

    return CommandResult("signals", data, human, warnings)
