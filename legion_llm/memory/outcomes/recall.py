"""Recall Outcomes, Recall Agent Scores, Recall Archetype Scores, Recall Session Briefing (spec §4)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from legion_llm.memory.gcpause import gc_paused
from legion_llm.memory.outcomes.read import OutcomesFile
from legion_llm.memory.outcomes.scoring import MIN_DECAY_SCORE, newest_first, recency_weight
from legion_llm.records import OutcomeRecord, Scored, id_number, lowered

T = TypeVar("T")


@dataclass
class RecallQuery:
    tags: list[str] = field(default_factory=list)
    agent: str | None = None
    task_type: str | None = None
    branch: str | None = None  # a concrete branch name; None means all branches
    limit: int | None = 20


def prune_note(count: int) -> str:
    return (
        f"OUTCOMES.md has {count} records. Run `legion-llm prune` (or `/legion:learn --prune`) "
        "to archive old entries, or enable `memory.auto_prune` in settings.json."
    )


def matches(record: OutcomeRecord, query: RecallQuery) -> bool:
    """Filters AND-combined; tags match any; multi-valued Agent / Task Type cells match any item."""
    if query.tags and not lowered(query.tags) & lowered(record.tags):
        return False
    if query.agent and query.agent.lower() not in lowered(record.agents):
        return False
    if query.task_type and query.task_type.lower() not in lowered(record.task_types):
        return False
    return not (query.branch and record.branch != query.branch)


def score(record: OutcomeRecord, today: date) -> Scored:
    weight = recency_weight(record.date, today)
    return Scored(record, weight, round(record.importance * weight, 4))


def recall(records: list[OutcomeRecord], query: RecallQuery, today: date) -> list[Scored]:
    """Filter, score by importance × recency, drop decay < 0.2, sort (ties: newer, higher ID), limit."""
    with gc_paused():
        return _recall(records, query, today)


def _recall(records: list[OutcomeRecord], query: RecallQuery, today: date) -> list[Scored]:
    filtered = query.tags or query.agent or query.task_type or query.branch
    weights: dict[str, float] = {}
    kept: list[tuple[float, OutcomeRecord]] = []
    for record in records:
        if filtered and not matches(record, query):
            continue
        weight = weights.get(record.date)
        if weight is None:
            weight = weights[record.date] = recency_weight(record.date, today)
        decay = round(record.importance * weight, 4)
        if decay >= MIN_DECAY_SCORE:
            kept.append((decay, record))
    kept.sort(key=lambda item: item[0], reverse=True)
    top = first_ranked(cut_at_limit(kept, query.limit), query.limit, _date_and_id)
    return [Scored(r, weights[r.date], decay) for decay, r in top]


def cut_at_limit(kept: list[tuple[float, T]], limit: int | None) -> list[tuple[float, T]]:
    """Of `kept` (best score first), the items that can be among the first `limit` once ties
    are broken: every one scoring at least the `limit`-th score."""
    limit = len(kept) if limit is None else limit
    if not kept or len(kept) <= limit:
        return kept
    boundary = kept[limit - 1][0]
    return [item for item in kept if item[0] >= boundary]


def first_ranked(
    cut: list[tuple[float, T]], limit: int | None, dated: Callable[[T], tuple[str, str | None]]
) -> list[tuple[float, T]]:
    """The first `limit` of `cut` after breaking ties among equal scores by newer date, then
    higher ID (`dated`: an item's Date and ID cells)."""

    def rank(item: tuple[float, T]) -> tuple[float, int, int]:
        when, record_id = dated(item[1])
        return (-item[0], *newest_first(when, id_number(record_id)))

    ordered = sorted(cut, key=rank)
    return ordered[: len(cut) if limit is None else limit]


def _date_and_id(record: OutcomeRecord) -> tuple[str, str | None]:
    return record.date, record.id


def scored_dict(item: Scored) -> dict[str, Any]:
    return {
        **item.record.to_dict(),
        "recency_weight": item.recency_weight,
        "decay_score": item.score,
    }


def _by_agent(items: list[Scored]) -> dict[str, list[Scored]]:
    groups: dict[str, list[Scored]] = defaultdict(list)
    for item in items:
        for agent in item.record.agents or ["(none)"]:
            groups[agent].append(item)
    return groups


def _rate(items: list[Scored]) -> float:
    return sum(1 for i in items if i.record.outcome == "success") / len(items)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def agent_scores(
    records: list[OutcomeRecord], task_types: list[str], today: date
) -> list[dict[str, Any]]:
    """memory_score = (success_rate×3 + avg_importance×0.5) × avg_recency, clamped to [0, 5].

    Records match when a tag or their Task Type equals one of `task_types` (the spec recalls with
    query_tags = task_types; real logs carry the task type in its own column, so both count).
    Only agents with at least 2 records; sorted by score, best first.
    """
    wanted = lowered(task_types)
    relevant = [
        score(r, today)
        for r in records
        if not wanted or wanted & (lowered(r.tags) | lowered(r.task_types))
    ]
    relevant = [s for s in relevant if s.score >= MIN_DECAY_SCORE]
    result = []
    for agent, items in _by_agent(relevant).items():
        if len(items) < 2:
            continue
        success_rate = _rate(items)
        avg_importance = _mean([i.record.importance for i in items])
        avg_recency = _mean([i.recency_weight for i in items])
        memory_score = (success_rate * 3.0 + avg_importance * 0.5) * avg_recency
        result.append(
            {
                "agent": agent,
                "memory_score": round(min(5.0, max(0.0, memory_score)), 4),
                "total_tasks": len(items),
                "successes": sum(1 for i in items if i.record.outcome == "success"),
                "failures": sum(1 for i in items if i.record.outcome == "failed"),
                "success_rate": round(success_rate, 4),
                "avg_importance": round(avg_importance, 4),
                "avg_recency_weight": round(avg_recency, 4),
            }
        )
    return sorted(result, key=lambda r: (-r["memory_score"], r["agent"]))


def archetype_scores(
    records: list[OutcomeRecord], task_types: list[str], today: date
) -> dict[str, dict[str, Any]]:
    """Per Task Type: agents, successRate, totalOutcomes, avgImportance, topAgent (spec names)."""
    wanted = lowered(task_types)
    groups: dict[str, list[Scored]] = defaultdict(list)
    for record in records:
        item = score(record, today)
        if item.score < MIN_DECAY_SCORE:
            continue
        for task_type in record.task_types or ["general"]:
            if not wanted or task_type.lower() in wanted:
                groups[task_type].append(item)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return {task_type: _archetype(items) for task_type, items in ordered}


def _archetype(items: list[Scored]) -> dict[str, Any]:
    per_agent = _by_agent(items)
    eligible = [(a, its) for a, its in per_agent.items() if len(its) >= 2]
    top = min(eligible, key=lambda a: (-_rate(a[1]), -len(a[1]), a[0]))[0] if eligible else None
    return {
        "agents": sorted(per_agent),
        "successRate": round(_rate(items), 4),
        "totalOutcomes": len(items),
        "avgImportance": round(_mean([i.record.importance for i in items]), 4),
        "topAgent": top,
    }


def briefing(outcomes: OutcomesFile, today: date) -> dict[str, Any]:
    """5 recent high-signal outcomes, the top 3 agents by task count, and the record total."""
    records = outcomes.records
    recent = recall(records, RecallQuery(limit=5), today)
    per_agent: dict[str, list[OutcomeRecord]] = defaultdict(list)
    for record in records:
        for agent in record.agents:
            per_agent[agent].append(record)
    top = sorted(per_agent.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]
    return {
        "recent_outcomes": [scored_dict(s) for s in recent],
        "top_agents": [
            {
                "agent": agent,
                "total_tasks": len(items),
                "success_rate": round(sum(r.outcome == "success" for r in items) / len(items), 4),
                "avg_importance": round(_mean([r.importance for r in items]), 4),
            }
            for agent, items in top
        ],
        "total_records": len(records),
    }
