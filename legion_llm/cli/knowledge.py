"""`legion-llm patterns|errors|preferences add|recall`, `legion-llm recall TOPIC`, `legion-llm signals`."""

from __future__ import annotations

import sys
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
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt
from legion_llm.cli.render import echo, plain, rich_print, table, usage_line
from legion_llm.errors import UsageError
from legion_llm.memory.knowledge.read import (
    ERRORS,
    PATTERNS,
    PREFERENCES,
    KnowledgeKind,
    read_knowledge,
)
from legion_llm.memory.knowledge.recall import KnowledgeQuery, recall_knowledge

if TYPE_CHECKING:
    from legion_llm.cli.llm import LLMSession, McpClient
    from legion_llm.memory.knowledge.store import Decide
    from legion_llm.memory.signatures.match import Match

patterns_app = typer.Typer(no_args_is_help=True, help="Reusable patterns (PATTERNS.md).")
errors_app = typer.Typer(no_args_is_help=True, help="Error signatures and their fixes (ERRORS.md).")
preferences_app = typer.Typer(no_args_is_help=True, help="User decision signals (PREFERENCES.md).")

TagsOpt = Annotated[str | None, typer.Option("--tags", help="Comma-separated tags.")]
AgentOpt = Annotated[str | None, typer.Option("--agent")]


def _text(name: str, help_text: str) -> Any:
    return typer.Option(name, help=help_text)


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
    if "usage" in data:
        human += "\n" + usage_line(data["usage"])
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


class LazySession:
    """An LLM session opened only when a close call (the ambiguous band) needs a decision, so a
    plain store never pays for importing the SDK."""

    def __init__(
        self,
        c: Common,
        engine: str | None,
        model: str | None,
        max_cost: float | None,
        mcp: McpClient | None = None,
        price: str | None = None,
    ) -> None:
        self.options = (c, engine, model, max_cost)
        self.mcp = mcp
        self.price = price
        self.session: LLMSession | None = None

    def open(self) -> LLMSession:
        if self.session is None:
            from legion_llm.cli.llm import open_session

            self.session = open_session(*self.options, mcp=self.mcp, price=self.price)
        return self.session

    def decider(self) -> Decide:
        def decide(signature: str, matches: Sequence[Match]) -> tuple[int | None, str]:
            from legion_llm.pipeline.errmatch import engine_decider

            return engine_decider(self.open().engine)(signature, matches)

        return decide


@errors_app.command("add")
def errors_add(
    signature: Annotated[str, _text("--signature", "The error message (enough to match).")],
    fix: Annotated[str, _text("--fix", "What resolved it.")],
    agent: Annotated[str, _text("--agent", "The agent that resolved it.")],
    resolved: Annotated[
        bool, typer.Option("--resolved/--unresolved", help="Did the fix work?")
    ] = True,
    tags: TagsOpt = None,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Store an error fix; a signature with the same root cause as a stored one is not stored
    twice (spec section 9). Only a close call asks the engine."""
    values = {
        "error_signature": signature,
        "fix": fix,
        "agent": agent,
        "resolved": str(resolved).lower(),
        "tags": tags or "",
    }
    c = common(root, today, json_)
    _add(c, ERRORS, values, LazySession(c, engine, model, max_cost, price=price))


def read_stdin() -> str:
    """Standard input as text; bytes that are not UTF-8 become U+FFFD."""
    raw = getattr(sys.stdin, "buffer", None)
    return raw.read().decode("utf-8", "replace") if raw is not None else sys.stdin.read()


@errors_app.command("match")
def errors_match(
    error_text: Annotated[str | None, typer.Argument(help="The error text (or --stdin).")] = None,
    stdin: Annotated[bool, typer.Option("--stdin", help="Read the error from stdin.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 5,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Known fixes for an error, best first; the engine decides only the close calls."""
    text = read_stdin() if stdin else error_text
    if not text or not text.strip():
        raise UsageError("give the error text as an argument or with --stdin")
    c = common(root, today, json_)
    finish(match_result(c, text, limit, LazySession(c, engine, model, max_cost, price=price)), c)


def match_result(c: Common, text: str, limit: int, llm: LazySession) -> CommandResult:
    """`errors match` for the CLI and the MCP server."""
    from legion_llm.cli.host import judge_request
    from legion_llm.memory.redact import project_redactor
    from legion_llm.pipeline.errmatch import close_calls_to_judge, match_error

    loaded = read_knowledge(ERRORS, c.paths.errors)
    judged = match_error(loaded.records, text, llm.open().engine if loaded.records else None, limit)
    data: dict[str, Any] = {"matches": [j.to_dict() for j in judged if j.same]}
    close_calls = close_calls_to_judge(text, judged, project_redactor(c.root))
    if close_calls:  # no model judged them: the calling agent can (host engine)
        data["to_judge"] = judge_request(close_calls)
    warnings = list(loaded.warnings)
    if llm.session is not None:
        data["usage"] = llm.session.usage()
        warnings += llm.session.warnings
    columns = ["id", "score", "decided_by", "same root cause", "resolved", "fix"]
    rows = [
        [j.match.candidate.key, j.match.score, j.decided_by, "yes" if j.same else "no",
         j.match.candidate.resolved, j.match.candidate.fix]
        for j in judged
    ]  # fmt: skip

    def human() -> None:
        table("errors match", columns, rows)
        if llm.session is not None:
            echo(usage_line(llm.session.usage()))

    return CommandResult("errors match", data, human, warnings)


@errors_app.command("recall")
def errors_recall(
    error_text: Annotated[
        str | None, typer.Option("--error-text", help="Rank by shared keywords.")
    ] = None,
    tags: TagsOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 5,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Recall error fixes: Resolved first, then keyword overlap with --error-text."""
    c = common(root, today, json_)
    query = KnowledgeQuery(
        tags=split_option(tags),
        branch=resolve_branch(branch, c.root),
        error_text=error_text,
        limit=limit,
    )
    _recall(c, ERRORS, query, ["error_signature", "fix", "resolved"])


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
    decision_point: Annotated[str, typer.Option("--decision-point")] = "all",
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
