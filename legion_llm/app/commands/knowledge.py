"""The knowledge bases (PATTERNS.md, ERRORS.md, PREFERENCES.md): add and recall, the same for
each; `recall TOPIC` over every memory file; the planning signals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common, check_stored_sizes, resolve_branch
from legion_llm.app.result import Block, CommandResult, Human, Styled, Table
from legion_llm.app.session import usage_lines
from legion_llm.errors import InputError
from legion_llm.memory.knowledge.read import OPTION_NAMES, KnowledgeKind, read_knowledge
from legion_llm.memory.knowledge.recall import KnowledgeQuery, recall_knowledge

if TYPE_CHECKING:
    from legion_llm.app.session import LazySession


def one_of(option: str, value: str, allowed: Sequence[str]) -> None:
    """A filter with a fixed set of values refuses any other (an unknown one would match nothing)."""
    if value not in allowed:
        raise InputError(f"--{option} must be one of {', '.join(allowed)}, not {value!r}")


def add_result(
    c: Common, kind: KnowledgeKind, values: dict[str, str], llm: LazySession | None = None
) -> CommandResult:
    """`patterns|errors|preferences add`: a record the same as a stored one is not stored twice
    (`llm` settles a close call for ERRORS.md)."""
    from legion_llm.memory.knowledge.store import add_knowledge, offline_decider

    check_stored_sizes({OPTION_NAMES.get(k, k): v for k, v in values.items()})
    c.require_project()
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


# the table of a recall, besides id and tags: each kind's own columns
RECALL_COLUMNS = {
    "patterns": ("date", "pattern", "reuse_criteria", "source"),
    "errors": ("error_signature", "fix", "resolved"),
    "preferences": ("date", "decision_point", "signal", "agent", "user_choice"),
}


def recall_result(
    c: Common,
    kind: KnowledgeKind,
    tags: Sequence[str],
    limit: int,
    *,
    branch: str = "all",
    agent: str | None = None,
    signal: str = "all",
    decision_point: str = "all",
    error_text: str | None = None,
) -> CommandResult:
    """`patterns|errors|preferences recall`: the records that match, newest or closest first.
    `branch` is all, current or a branch name; `signal` and `decision_point` (preferences) take
    all for any; `error_text` (errors) ranks by shared keywords."""
    query = KnowledgeQuery(
        list(tags), agent=agent, branch=resolve_branch(branch, c.root),
        signal=None if signal == "all" else signal,
        decision_point=None if decision_point == "all" else decision_point,
        error_text=error_text, limit=limit,
    )  # fmt: skip
    loaded = read_knowledge(kind, c.paths.memory_dir / kind.file_name)
    records = recall_knowledge(loaded.records, query, c.today)
    data = {"records": records, "total": len(records)}
    columns = RECALL_COLUMNS[kind.name]
    rows = [[r["id"], *(r[k] for k in columns), ", ".join(r["tags"])] for r in records]
    human: Human = [Table(kind.file_name, ["id", *columns, "tags"], rows)]
    if not records:
        held = len(loaded.records)
        human = f"No entry matches ({kind.file_name} holds {held or 'none'})."
    return CommandResult(f"{kind.name} recall", data, human, loaded.warnings)


def recall_topic_result(c: Common, topic: str, limit: int) -> CommandResult:
    """`recall TOPIC`: every memory file, tag match 3, summary substring 2, body substring 1."""
    from legion_llm.memory.knowledge.signals import search_topic

    if not topic.strip():
        raise InputError("the TOPIC to recall must not be empty (an empty one matches everything)")

    hits, warnings = search_topic(c.paths, topic, limit)
    data = {"topic": topic, "records": hits, "total": len(hits)}
    columns = ["score", "source", "id", "title", "tags"]
    rows = [[h["score"], h["source"], h["id"], h["title"], ", ".join(h["tags"])] for h in hits]
    human: Human = [Table(f"recall {topic!r}", columns, rows)]
    if not hits:
        human = f"Nothing in the memory files matches {topic!r}."
    return CommandResult("recall", data, human, warnings)


def signals_result(c: Common, task_types: list[str], agents: list[str]) -> CommandResult:
    """`signals`: everything /legion:plan needs from memory, in one call."""
    from legion_llm.memory.knowledge.signals import planning_signals

    data, warnings = planning_signals(c.paths, task_types, agents, c.today)
    scores, boosts = data["agent_scores"], data["preference_boosts"]
    human: list[Block] = [
        Table("Agent memory scores", ["agent", "memory_score", "total_tasks"],
              [[s["agent"], s["memory_score"], s["total_tasks"]] for s in scores]),
        Table("Preference boosts", ["agent", "positive", "corrective", "negative", "boost"],
              [[a, b["positive"], b["corrective"], b["negative"], b["preference_boost"]]
               for a, b in boosts.items()]),
        Table("Patterns", ["id", "pattern", "reuse_criteria"],
              [[p["id"], p["pattern"], p["reuse_criteria"]] for p in data["patterns"]]),
    ]  # fmt: skip
    if data["claude_code"]["note"]:
        human.append(Styled("Claude Code memory suggests:\n{}", (data["claude_code"]["note"],)))
    return CommandResult("signals", data, human, warnings)
