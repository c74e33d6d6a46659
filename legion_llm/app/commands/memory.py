"""One store, one recall and one summary over every kind of memory (the MCP tools memory_store,
memory_recall and memory_summary): the arguments a kind takes are checked first, in one line,
then the kind's own use case runs; a list answer is concise unless `detail` is detailed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common, split_option
from legion_llm.app.result import CommandResult
from legion_llm.errors import InputError

if TYPE_CHECKING:
    from legion_llm.app.session import LazySession

# kind -> (the arguments it needs, the arguments it may take)
STORE_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "outcome": (("phase", "plan", "agent", "outcome", "summary"),
                ("task_type", "tags", "review_cycles", "escalated", "trivial", "blockers",
                 "cross_division", "importance", "branch")),
    "pattern": (("pattern", "context", "reuse_criteria"), ("source", "tags")),
    "error": (("signature", "fix", "agent"), ("resolved", "tags", "engine", "model", "max_cost")),
    "preference": (("decision_point", "context", "proposed", "user_choice", "signal", "agent"),
                   ("tags",)),
    "learning": (("title", "body", "category", "tags", "confidence"), ("source",)),
}  # fmt: skip
RECALL_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "outcomes": ((), ("tags", "agent", "task_type", "branch", "limit")),
    "patterns": ((), ("tags", "branch", "limit")),
    "errors": ((), ("query", "tags", "branch", "limit")),
    "preferences": ((), ("signal", "decision_point", "tags", "agent", "branch", "limit")),
    "topic": (("query",), ("limit",)),
    "learnings": (("query",), ("max_tokens", "limit")),
    "match": (("query",), ("limit", "engine", "model", "max_cost")),
}
RECALL_LIMITS = {"outcomes": 20, "patterns": 10, "errors": 5, "preferences": 10, "topic": 20,
                 "learnings": 5, "match": 5}  # fmt: skip
SUMMARY_VIEWS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "briefing": ((), ()),
    "signals": ((), ("task_types", "agents")),
    "agent_scores": ((), ("task_types", "branch")),
    "archetypes": ((), ("task_types", "branch")),
}
# Left out of a concise answer: what ranks or files a record, not what it says (a pattern's
# context and a preference's proposal are what they say, and stay).
VERBOSE_FIELDS = frozenset(
    {"branch", "format", "recency_weight", "decay_score", "match_score", "evidence",
     "avg_recency_weight", "extracted_at"}
)  # fmt: skip


def check_kind(
    argument: str,
    value: str,
    table: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]],
    given: Mapping[str, Any],
) -> None:
    """Refuse, in one line, an argument `value` does not take, or one it needs and lacks."""
    needs, may = table[value]
    allowed = (*needs, *may)
    foreign = [name for name in given if name not in allowed]
    if foreign:
        takes = ", ".join(allowed) if allowed else "no other argument"
        raise InputError(
            f"{argument}={value} does not take {', '.join(foreign)} (it takes: {takes})"
        )
    lacking = [name for name in needs if name not in given]
    if lacking:
        raise InputError(f"{argument}={value} needs {', '.join(lacking)}")


def store_result(
    c: Common, kind: str, given: dict[str, Any], llm: LazySession | None, today: str | None
) -> CommandResult:
    """Store one record of `kind` from the arguments `given` (only those passed)."""
    from legion_llm.app.commands import knowledge, learnings, outcomes
    from legion_llm.memory.knowledge.read import ERRORS, PATTERNS, PREFERENCES

    check_kind("kind", kind, STORE_KINDS, given)
    tags = ", ".join(given.get("tags", ()))
    if kind == "outcome":
        from legion_llm.memory.outcomes.store import OutcomeInput

        fields = {**given, "tags": list(given.get("tags", ()))}
        return outcomes.add_result(c, OutcomeInput(**fields))
    if kind == "pattern":
        values = {"pattern": given["pattern"], "context": given["context"],
                  "reuse_criteria": given["reuse_criteria"], "source": given.get("source", ""),
                  "tags": tags}  # fmt: skip
        return knowledge.add_result(c, PATTERNS, values)
    if kind == "error":
        values = {"error_signature": given["signature"], "fix": given["fix"],
                  "agent": given["agent"], "resolved": str(given.get("resolved", True)).lower(),
                  "tags": tags}  # fmt: skip
        return knowledge.add_result(c, ERRORS, values, llm)
    if kind == "preference":
        names = ("decision_point", "context", "proposed", "user_choice", "signal", "agent")
        return knowledge.add_result(c, PREFERENCES, {**{n: given[n] for n in names}, "tags": tags})
    from legion_llm.memory.learnings.read import Learning

    learning = Learning(given["title"], given["body"], split_option(",".join(given["tags"])),
                        given.get("source", "manual"), learnings.now_text(today, c),
                        given["confidence"], given["category"])  # fmt: skip
    return learnings.add_result(c, learning)


def recall_result(
    c: Common, kind: str, given: dict[str, Any], llm: LazySession | None, *, detailed: bool
) -> CommandResult:
    """Recall memory of `kind` with the arguments `given` (only those passed)."""
    from legion_llm.app.commands import errors, knowledge, learnings, outcomes
    from legion_llm.memory.knowledge.read import ERRORS, PATTERNS, PREFERENCES

    check_kind("kind", kind, RECALL_KINDS, given)
    limit = int(given.get("limit", RECALL_LIMITS[kind]))
    if limit < 1 and kind != "learnings":
        raise InputError(f"limit must be 1 or more for kind={kind}, not {limit}")
    tags = list(given.get("tags", ()))
    branch = given.get("branch", "all")
    if kind == "outcomes":
        result = outcomes.recall_result(c, tags, given.get("agent"), given.get("task_type"),
                                        limit, branch)  # fmt: skip
    elif kind == "patterns":
        result = knowledge.recall_result(c, PATTERNS, tags, limit, branch=branch)
    elif kind == "errors":
        result = knowledge.recall_result(c, ERRORS, tags, limit, branch=branch,
                                         error_text=given.get("query"))  # fmt: skip
    elif kind == "preferences":
        result = knowledge.recall_result(
            c, PREFERENCES, tags, limit, branch=branch, agent=given.get("agent"),
            signal=given.get("signal", "all"), decision_point=given.get("decision_point", "all"))  # fmt: skip
    elif kind == "topic":
        result = knowledge.recall_topic_result(c, given["query"], limit)
    elif kind == "learnings":
        result = learnings.load_result(c, given["query"], int(given.get("max_tokens", 2000)), limit)
    else:
        assert llm is not None
        result = errors.match_result(c, given["query"], limit, llm)
    return with_detail(result, detailed)


def summary_result(c: Common, view: str, given: dict[str, Any], *, detailed: bool) -> CommandResult:
    """A summary of the memory: the session briefing, the planning signals, the agents' scores
    or the task-type archetypes."""
    from legion_llm.app.commands import knowledge, outcomes

    check_kind("view", view, SUMMARY_VIEWS, given)
    task_types = list(given.get("task_types", ()))
    branch = given.get("branch", "all")
    if view == "briefing":
        result = outcomes.briefing_result(c)
    elif view == "signals":
        result = knowledge.signals_result(c, task_types, list(given.get("agents", ())))
    elif view == "agent_scores":
        result = outcomes.agent_scores_result(c, task_types, branch)
    else:
        result = outcomes.archetypes_result(c, task_types, branch)
    return with_detail(result, detailed)


def with_detail(result: CommandResult, detailed: bool) -> CommandResult:
    """`result` as asked: every field (detailed: the object the CLI's --json prints), or each
    listed record without the fields that rank or file it (concise)."""
    if not detailed and isinstance(result.data, dict):
        result.data = concise(result.data)
    return result


def concise(value: Any, in_list: bool = False) -> Any:
    """`value` with VERBOSE_FIELDS left out of every object inside a list."""
    if isinstance(value, list):
        return [concise(item, True) for item in value]
    if isinstance(value, dict):
        return {k: concise(v) for k, v in value.items() if not (in_list and k in VERBOSE_FIELDS)}
    return value
