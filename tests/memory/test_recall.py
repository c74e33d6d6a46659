from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE, parse_outcomes
from legion_llm.memory.outcomes.recall import (
    RecallQuery,
    agent_scores,
    archetype_scores,
    briefing,
    recall,
)
from legion_llm.memory.outcomes.scoring import recency_weight
from legion_llm.records import OutcomeRecord

TODAY = date(2026, 6, 30)


def rec(id_: str, when: str, *, agent: str = "a", task_type: str = "backend", outcome: str = "success",
        importance: int = 2, tags: tuple[str, ...] = (), branch: str = "main") -> OutcomeRecord:  # fmt: skip
    return OutcomeRecord(
        id_, when, branch, "1", "01-01", agent, task_type, outcome, importance, ", ".join(tags), "s"
    )


@pytest.mark.parametrize(
    ("when", "weight"),
    [
        ("2026-06-30", 1.0), ("2026-06-23", 1.0), ("2026-06-22", 0.7), ("2026-05-31", 0.7),
        ("2026-05-30", 0.4), ("2026-04-01", 0.4), ("2026-03-31", 0.1), ("2027-01-01", 1.0),
        ("someday", 0.4), ("2026-06-29T10:00:00Z", 1.0),
    ],
)  # fmt: skip
def test_recency_tiers(when: str, weight: float) -> None:
    assert recency_weight(when, TODAY) == weight


def test_decay_drops_low_signal_and_sorts_with_tie_breaks() -> None:
    records = [
        rec("O-001", "2026-01-01", importance=1),  # 0.1: dropped
        rec("O-002", "2026-01-01", importance=2),  # 0.2: kept
        rec("O-003", "2026-06-29", importance=2),  # 2.0
        rec("O-004", "2026-06-28", importance=2),  # 2.0, older than O-003
        rec("O-005", "2026-06-29", importance=2),  # 2.0, same date as O-003, higher id
        rec("O-006", "not a date", importance=5),  # 5 x 0.4 = 2.0, never excluded
    ]
    found = recall(records, RecallQuery(limit=None), TODAY)
    assert [s.record.id for s in found] == ["O-005", "O-003", "O-004", "O-006", "O-002"]
    assert [s.score for s in found] == [2.0, 2.0, 2.0, 2.0, 0.2]


def test_filters_are_and_combined_and_match_multi_valued_cells() -> None:
    records = [
        rec(
            "O-001", "2026-06-29", agent="x, y", task_type="ci-cd, tooling", tags=("Review", "api")
        ),
        rec("O-002", "2026-06-29", agent="y", task_type="tooling", tags=("api",)),
        rec("O-003", "2026-06-29", agent="y", task_type="tooling", tags=("other",), branch="dev"),
    ]

    def ids(**query: object) -> list[str | None]:
        return sorted(s.record.id for s in recall(records, RecallQuery(**query), TODAY))  # type: ignore[arg-type]

    assert ids(tags=["review"]) == ["O-001"]
    assert ids(tags=["api", "other"]) == ["O-001", "O-002", "O-003"]
    assert ids(agent="y", task_type="tooling") == ["O-001", "O-002", "O-003"]
    assert ids(agent="x", tags=["api"]) == ["O-001"]
    assert ids(agent="y", branch="dev") == ["O-003"]
    assert ids(limit=1) == ["O-003"]


def test_agent_scores_follow_the_spec_formula() -> None:
    records = [
        rec("O-1", "2026-06-29", agent="a", outcome="success", importance=2),
        rec("O-2", "2026-06-10", agent="a", outcome="failed", importance=5),
        rec("O-3", "2026-06-29", agent="b", outcome="success", importance=2),  # one-off: excluded
        rec("O-4", "2026-06-29", agent="c", task_type="frontend", importance=2),
        rec("O-5", "2026-06-29", agent="c", task_type="frontend", importance=2),
    ]
    [score] = agent_scores(records, ["backend"], TODAY)
    # success_rate 0.5, avg_importance 3.5, avg_recency (1.0 + 0.7) / 2
    assert score["agent"] == "a"
    assert score["memory_score"] == pytest.approx((0.5 * 3 + 3.5 * 0.5) * 0.85, abs=1e-4)
    assert score["total_tasks"] == 2 and score["failures"] == 1


def test_agent_score_is_clamped_to_five() -> None:
    records = [rec(f"O-{i}", "2026-06-29", importance=5) for i in range(3)]
    assert agent_scores(records, ["backend"], TODAY)[0]["memory_score"] == 5.0


def test_archetypes_group_by_task_type_with_top_agent() -> None:
    records = [
        rec("O-1", "2026-06-29", agent="a"), rec("O-2", "2026-06-29", agent="a"),
        rec("O-3", "2026-06-29", agent="b"), rec("O-4", "2026-06-29", agent="b", outcome="failed"),
        rec("O-5", "2026-06-29", agent="b", task_type="frontend"),
        rec("O-6", "2020-01-01", agent="z", importance=1),  # decay 0.1: excluded
    ]  # fmt: skip
    scores = archetype_scores(records, [], TODAY)
    assert list(scores) == ["backend", "frontend"]
    assert scores["backend"] == {
        "agents": ["a", "b"], "successRate": 0.75, "totalOutcomes": 4, "avgImportance": 2.0,
        "topAgent": "a",
    }  # fmt: skip
    assert scores["frontend"]["topAgent"] is None
    assert list(archetype_scores(records, ["frontend"], TODAY)) == ["frontend"]


def test_briefing_from_a_file() -> None:
    rows = "".join(
        f"| O-{i:03d} | 2026-06-{i:02d} | main | 1 | 01-01 | {agent} | t | success | 2 | x | s{i} |\n"
        for i, agent in enumerate(["a", "a", "a", "b", "b", "c", "d"], start=1)
    )
    data = briefing(parse_outcomes(Path("OUTCOMES.md"), OUTCOMES_TEMPLATE + rows), TODAY)
    assert data["total_records"] == 7
    assert [r["id"] for r in data["recent_outcomes"]] == [
        "O-007",
        "O-006",
        "O-005",
        "O-004",
        "O-003",
    ]
    assert [a["agent"] for a in data["top_agents"]] == ["a", "b", "c"]
    assert data["top_agents"][0] == {
        "agent": "a",
        "total_tasks": 3,
        "success_rate": 1.0,
        "avg_importance": 2.0,
    }
