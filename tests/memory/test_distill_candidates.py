"""Distillation candidates (spec section 8 "When to store patterns") and their groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legion_llm.memory.catalog import load_catalog
from legion_llm.memory.knowledge.read import PATTERNS, parse_knowledge, read_knowledge
from legion_llm.memory.outcomes.distill_candidates import (
    CROSS_DIVISION,
    HIGH_IMPORTANCE,
    REVIEW_FIRST_CYCLE,
    cited_ids,
    cross_division,
    first_cycle_pass,
    is_review,
    select_candidates,
)
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.records import OutcomeRecord

REPO = Path(__file__).resolve().parents[2]
DISTILL = REPO / "fixtures" / "distill"
CATALOG = load_catalog(DISTILL / "CATALOG.md")
QA = "testing-qa-verification-specialist"


def row(
    n: int,
    *,
    phase: str = "1",
    plan: str = "01-01",
    agent: str = "engineering-backend-architect",
    task_type: str = "backend",
    outcome: str = "success",
    importance: int = 2,
    tags: str = "ledger",
    summary: str = "did a thing",
) -> OutcomeRecord:
    return OutcomeRecord(f"O-{n:03d}", "2026-01-01", "main", phase, plan, agent, task_type,
                         outcome, importance, tags, summary)  # fmt: skip


def review(n: int, phase: str = "1", cycles: int = 1, tags: str = "ledger") -> OutcomeRecord:
    tag = "1-cycle" if cycles == 1 else f"{cycles}-cycles"
    return row(n, phase=phase, plan="review", agent=QA, task_type="quality-review",
               tags=f"{tags}, review-passed, {tag}",
               summary=f"Phase {phase} review passed in {cycles} cycle(s). 0 blockers fixed.")  # fmt: skip


def test_review_detection_and_first_cycle() -> None:
    assert first_cycle_pass(review(3)) and not first_cycle_pass(review(3, cycles=2))
    by_summary = row(4, plan="01-00", agent=QA, task_type="quality-review", tags="review-passed",
                     summary="Phase 1 review passed in 1 cycle(s).")  # fmt: skip
    assert is_review(by_summary) and first_cycle_pass(by_summary)
    assert not first_cycle_pass(row(5, summary="passed in 1 cycle"))  # not a review row
    escalated = row(6, plan="review", task_type="quality-review", outcome="failed",
                    tags="review-escalated, 3-cycles")  # fmt: skip
    assert is_review(escalated) and not first_cycle_pass(escalated)


def test_cross_division_from_the_catalog_or_a_tag() -> None:
    assert cross_division(
        row(1, agent="testing-performance-benchmarker", task_type="database"), CATALOG
    )
    assert not cross_division(row(1, agent="testing-performance-benchmarker",
                                  task_type="performance-benchmarking"), CATALOG)  # fmt: skip
    assert not cross_division(row(1, agent="someone-unknown", task_type="backend"), CATALOG)
    assert not cross_division(row(1, task_type="implementation"), CATALOG)  # task type unknown
    assert cross_division(row(1, agent="someone-unknown", tags="x, cross-division"), CATALOG)
    both = row(1, agent="engineering-backend-architect, design-ux-architect", task_type="backend")
    assert cross_division(both, CATALOG)


def test_reasons_and_exclusions() -> None:
    records = [
        row(1), row(2, plan="01-02", tags="ledger, api"), review(3),
        row(4, phase="2", plan="02-01", importance=4, tags="exports, streaming"),
        row(5, phase="2", plan="02-02", outcome="partial", importance=4),
        row(6, phase="2", plan="02-03", outcome="failed", importance=5),
        row(7, phase="2", plan="02-04", agent="autonomous", importance=1, tags="config"),
        row(8, phase="2", plan="02-05", tags="exports, csv"), review(9, phase="2", cycles=2),
        row(10, phase="3", plan="03-01", agent="design-ux-architect", task_type="frontend"),
        row(11, phase="3", plan="03-02", importance=4),
    ]  # fmt: skip
    selection = select_candidates(records, CATALOG, cited={"O-011"})
    reasons = {c.id: c.reasons for c in selection.candidates}
    assert reasons == {
        "O-001": (REVIEW_FIRST_CYCLE,), "O-002": (REVIEW_FIRST_CYCLE,),
        "O-003": (REVIEW_FIRST_CYCLE,), "O-004": (HIGH_IMPORTANCE,),
        "O-010": (CROSS_DIVISION,),
    }  # fmt: skip
    assert selection.excluded == {
        "O-005": "outcome partial",
        "O-006": "outcome failed",
        "O-007": "trivial (importance 1)",
        "O-008": "no learning value (an ordinary success)",
        "O-009": "a review that needed more than one cycle",
        "O-011": "already distilled (cited by an existing pattern)",
    }


def test_rows_without_an_id_are_never_candidates() -> None:
    nameless = row(1, importance=5)
    nameless.id = None
    assert select_candidates([nameless], CATALOG).candidates == []


def test_a_first_cycle_review_alone_is_not_a_candidate() -> None:
    selection = select_candidates([review(1), row(2, importance=1)], CATALOG)
    assert selection.candidates == [] and "O-001" in selection.excluded


def test_groups_split_on_task_type_and_ignore_the_phase_slug() -> None:
    records = [
        row(1, agent="design-ux-architect", task_type="frontend", tags="checkout, a11y"),
        row(2, plan="01-02", agent="engineering-frontend-developer", task_type="frontend",
            tags="checkout, stripe"),
        row(3, plan="01-03", agent="contractor", task_type="frontend", tags="checkout, charts"),
        row(4, plan="01-04", task_type="backend", tags="checkout, payouts"),
        row(5, plan="01-05", task_type="backend", tags="checkout, transfers"),
        review(6, tags="checkout"),
    ]  # fmt: skip
    groups = select_candidates(records, CATALOG).groups
    # frontend: three agents sharing only the phase slug -> three groups; backend: one agent in
    # one phase -> one group; the review backs every group of its phase
    assert [g.ids for g in groups] == [
        ["O-001", "O-006"], ["O-002", "O-006"], ["O-003", "O-006"], ["O-004", "O-005", "O-006"],
    ]  # fmt: skip
    assert groups[3].agents == ["engineering-backend-architect"]
    assert groups[3].tags == ["checkout", "payouts", "transfers"]  # the most shared first


def test_a_shared_topic_tag_groups_across_phases() -> None:
    records = [
        row(1, task_type="frontend", tags="icu-messages, web"), review(2, tags="web"),
        row(3, phase="5", plan="05-01", task_type="frontend", tags="icu-messages, emails"),
        review(4, phase="5", tags="emails"),
    ]  # fmt: skip
    assert [g.ids for g in select_candidates(records, CATALOG).groups] == [
        ["O-001", "O-002", "O-003", "O-004"]
    ]


def test_cited_ids_from_table_rows_and_learn_entries() -> None:
    table = parse_knowledge(PATTERNS, Path("PATTERNS.md"), PATTERNS.template +
                            "| P-001 | 2026-01-01 | main | p | c | r | O-002, O-010 | t |\n")  # fmt: skip
    assert cited_ids(table.records) == {"O-002", "O-010"}
    entries = read_knowledge(
        PATTERNS, DISTILL / "11-learn-entries-cite" / ".planning" / "memory" / "PATTERNS.md"
    )
    assert cited_ids(entries.records) == {"O-003"}


@pytest.mark.parametrize("history", sorted(p.name for p in DISTILL.glob("[0-9][0-9]-*")))
def test_no_ruled_out_outcome_is_ever_a_candidate(history: str) -> None:
    """Against the hand-written ground truth of every history, not against our own output."""
    folder = DISTILL / history
    expected = json.loads((folder / "expected.json").read_text())
    memory = folder / ".planning" / "memory"
    outcomes = read_outcomes(memory / "OUTCOMES.md")
    assert outcomes.warnings == []
    cited = cited_ids(read_knowledge(PATTERNS, memory / "PATTERNS.md").records)
    selection = select_candidates(outcomes.records, CATALOG, cited)
    assert not selection.ids & set(expected["should_not"])
    for item in expected["should"]:
        assert set(item["sources"]) & selection.ids, item  # every expected pattern has candidates


def test_a_review_row_is_only_evidence_for_its_phase() -> None:
    mixed = row(2, plan="review", agent=f"{QA}, engineering-senior-developer",
                task_type="quality-review", importance=4, tags="ledger, review-passed, 1-cycle",
                summary="Phase 1 review passed in 1 cycle(s).")  # fmt: skip
    selection = select_candidates([row(1), mixed], CATALOG)
    assert {c.id: c.reasons for c in selection.candidates} == {
        "O-001": (REVIEW_FIRST_CYCLE,), "O-002": (REVIEW_FIRST_CYCLE,),
    }  # fmt: skip
