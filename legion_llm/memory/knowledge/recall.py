"""Recall Patterns / Errors / Preferences (spec §8, §9, §13) and the `/legion:learn --recall`
search across every memory file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from legion_llm.memory.knowledge.read import ERRORS, KnowledgeRecord
from legion_llm.memory.outcomes.scoring import newest_first, parse_date, recency_weight
from legion_llm.records import id_number, lowered

_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "is",
        "was",
        "be",
        "by",
        "with",
        "from",
        "and",
        "or",
        "not",
        "no",
        "cannot",
        "can't",
        "could",
        "error",
        "failed",
        "failure",
    ]
)


@dataclass
class KnowledgeQuery:
    tags: list[str] = field(default_factory=list)
    agent: str | None = None
    branch: str | None = None  # a concrete branch; None = all
    signal: str | None = None  # preferences
    decision_point: str | None = None  # preferences
    error_text: str | None = None  # errors
    limit: int = 10


def matches(record: KnowledgeRecord, query: KnowledgeQuery) -> bool:
    values = record.values
    checks = [
        not query.tags or bool(lowered(query.tags) & lowered(record.tags)),
        not query.agent or query.agent.lower() == values.get("agent", "").strip().lower(),
        not query.branch or record.branch == query.branch,
        not query.signal or query.signal.lower() == values.get("signal", "").strip().lower(),
        not query.decision_point
        or query.decision_point.lower() == values.get("decision_point", "").strip().lower(),
    ]
    return all(checks)


def keywords(text: str) -> set[str]:
    return {
        t
        for t in (w.lower() for w in _TOKEN_RE.findall(text))
        if len(t) > 1 and t not in _STOPWORDS
    }


def _newest_first(record: KnowledgeRecord) -> tuple[int, int]:
    return newest_first(record.date, id_number(record.id))


def recall_knowledge(
    records: list[KnowledgeRecord], query: KnowledgeQuery, today: date
) -> list[dict[str, Any]]:
    """Filtered records by recency (errors: Resolved first, then keyword overlap), as dicts."""
    found: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    wanted = keywords(query.error_text) if query.error_text else set()
    for record in records:
        if not matches(record, query):
            continue
        weight = recency_weight(record.date, today)
        item = {**record.to_dict(), "recency_weight": weight}
        overlap = len(wanted & keywords(record.title)) if query.error_text else 0
        if query.error_text and not overlap:
            continue
        if record.kind is ERRORS:
            item["match_score"] = overlap
            key: tuple[Any, ...] = (not record.resolved, -overlap, -weight, *_newest_first(record))
        else:
            key = (-weight, *_newest_first(record))
        found.append((key, item))
    found.sort(key=lambda pair: pair[0])
    return [item for _, item in found[: query.limit]]


@dataclass(frozen=True)
class TopicHit:
    source: str
    id: str
    title: str
    tags: list[str]
    body: str
    date: str


def topic_score(hit: TopicHit, topic: str) -> int:
    """/legion:learn --recall: tag match 3, summary substring 2, body substring 1."""
    needle = topic.strip().lower()
    words = set(needle.split())
    tags = lowered(hit.tags)
    score = 3 if needle in tags or words & tags else 0
    score += 2 if needle in hit.title.lower() else 0
    score += 1 if needle in hit.body.lower() else 0
    return score


def recall_topic(hits: list[TopicHit], topic: str, limit: int) -> list[dict[str, Any]]:
    scored = [(topic_score(h, topic), h) for h in hits]
    kept = [(s, h) for s, h in scored if s > 0]
    kept.sort(
        key=lambda pair: (-pair[0], -(d.toordinal() if (d := parse_date(pair[1].date)) else 0))
    )
    return [
        {
            "source": h.source,
            "id": h.id,
            "title": h.title,
            "tags": h.tags,
            "date": h.date,
            "score": s,
        }
        for s, h in kept[:limit]
    ]
