"""Patterns from plan summaries (issue 33): what worked, as the summaries write it.

Each rule on a hand-written project (the readers, the offline writer, the checks any proposal
passes), then the invariants over every real summary of ../shared/realworld* (skipped when
absent): a status or a file list is never a pattern, a declared entry is taken whole, and what
a pattern names its cited sources state.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.engine import OfflineEngine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.entities import new_entities
from legion_llm.memory.knowledge.read import PATTERNS, read_knowledge
from legion_llm.memory.phases.patterns import (
    DECISION,
    DEVIATION,
    ESTABLISHED,
    MARKED,
    established,
    is_file_list,
    is_status,
    source_of,
)
from legion_llm.pipeline.distill import (
    PROMPT,
    PatternProposals,
    ProposedPattern,
    distill_offline,
    run_distill,
)
from legion_llm.project import MemoryPaths
from tests.conftest import CORPORA, NO_CORPUS, corpus_files

TODAY = date(2026, 12, 1)
HEADER = (
    "# Memory — Outcome Log\n\n## Records\n\n"
    "| ID | Date | Branch | Phase | Plan | Agent | Task Type | Outcome | Importance | Tags | Summary |\n"
    "|----|------|--------|-------|------|-------|-----------|---------|------------|------|---------|\n"
)


def summary(plan: str, *, status: str = "Complete", frontmatter: str = "", body: str = "") -> str:
    front = f"---\nplan: {plan}\n{frontmatter}---\n\n" if frontmatter else ""
    return (f"{front}# Plan {plan} Summary: Ledger postings\n\n**Status**: {status}\n\n"
            f"## Completed Tasks\n- [x] Task 1: Postings table (done)\n\n{body}")  # fmt: skip


ESTABLISHED_FM = (
    "patterns-established:\n"
    '  - "Idempotency keys on every posting endpoint, stored with a unique index"\n'
    "  - Money as integer cents in `amount_cents`, never floats\n"
)
DECISIONS = (
    "## Key Decisions\n"
    "- Postings are append-only so that balances can be replayed from the ledger history\n"
    "- Followed plan as specified\n"
)


def project(tmp_path: Path, summaries: dict[str, str], outcomes: str | None = None) -> MemoryPaths:
    """A project with phase 1 (`01-ledger`) holding `summaries` ({plan id: text})."""
    folder = tmp_path / ".planning/phases/01-ledger"
    folder.mkdir(parents=True)
    for plan, text in summaries.items():
        (folder / f"{plan}-SUMMARY.md").write_text(text, encoding="utf-8")
    if outcomes is not None:
        memory = tmp_path / ".planning/memory"
        memory.mkdir(parents=True)
        (memory / "OUTCOMES.md").write_text(HEADER + outcomes, encoding="utf-8")
    return MemoryPaths(tmp_path)


def row(oid: str, plan: str, summary_text: str, *, task: str = "implementation",
        importance: int = 4, tags: str = "ledger, engineering") -> str:  # fmt: skip
    return (f"| {oid} | 2026-11-01 | main | 1 | {plan} | engineering-senior-developer | {task} | "
            f"success | {importance} | {tags} | {summary_text} |\n")  # fmt: skip


def offline() -> OfflineEngine:
    registry = OfflineRegistry()
    registry.register(PROMPT, distill_offline)
    return OfflineEngine(registry=registry)


def rows(paths: MemoryPaths) -> list[dict[str, Any]]:
    return [r.to_dict() for r in read_knowledge(PATTERNS, paths.patterns).records]


# ---------------------------------------------------------------- the readers


@pytest.mark.parametrize(
    "frontmatter",
    [
        'patterns-established:\n  - "A first approach"\n  - A second approach\n',
        "patterns_established:\n- 'A first approach'\n- A second approach\n",
        'patterns-established: ["A first approach", A second approach]\n',
        "patterns-established:\n  - A first\n    approach\n  - A second approach\n",
    ],
)
def test_a_declared_list_is_read_whole_in_every_spelling(frontmatter: str) -> None:
    text = summary("01-01", frontmatter=frontmatter)
    assert established(text) == ["A first approach", "A second approach"]


def test_an_empty_declared_list_declares_nothing() -> None:
    assert established(summary("01-01", frontmatter="patterns-established: []\n")) == []


def test_the_candidates_of_a_summary_by_kind() -> None:
    body = (DECISIONS + "\n## Deviations\n- 1. [Rule 1 - Bug] Balance drifted; Fix: recompute "
            "balances inside the posting transaction so readers never see a half write\n"
            "\n## Handoff Context\n- **Conventions established**: every ledger table carries a "
            "created_at column filled by the database\n")  # fmt: skip
    source = source_of("01-01", "1", "01-01-SUMMARY.md", summary("01-01", frontmatter=ESTABLISHED_FM, body=body))  # fmt: skip
    kinds = [(e.kind, e.text[:30]) for e in source.entries]
    assert kinds == [
        (ESTABLISHED, "Idempotency keys on every post"),
        (ESTABLISHED, "Money as integer cents in `amo"),
        (MARKED, "every ledger table carries a c"),
        (DECISION, "Postings are append-only so th"),
        (DEVIATION, "recompute balances inside the "),
    ]  # "Followed plan as specified" is no decision worth reusing


def test_a_failed_plan_offers_nothing_and_a_partial_one_only_what_it_declares() -> None:
    text = summary("01-01", status="Failed", frontmatter=ESTABLISHED_FM, body=DECISIONS)
    assert source_of("01-01", "1", "f", text).entries == ()
    partial = summary("01-01", status="Partial", frontmatter=ESTABLISHED_FM, body=DECISIONS)
    assert {e.kind for e in source_of("01-01", "1", "f", partial).entries} == {ESTABLISHED}


@pytest.mark.parametrize(
    "text",
    [
        "Complete",
        "shipped",
        "Block agreement schema, validation and money rules: Complete",
        "Phase 1 review PASSED in 1 cycle(s), 0 finding(s)",
        "7/7 checks passed",
        "Dispatch board page: Complete with Warnings",
        "Free/busy cache job and the sync status API: BLOCKED",
        "Booking flow: Failed — Verification failed: bash scripts/e2e.sh e2e/dispatch.spec.ts",
        "Invoice numbering and the tax rounding rules landed",
        "The export worker is done",
        "Nightly sync job deployed.",
    ],
)
def test_a_status_is_never_a_pattern(text: str) -> None:
    assert is_status(text)


@pytest.mark.parametrize(
    "text",
    [
        "Postings are append-only so that balances can be replayed",
        "Skeleton CLI Typer: app = typer.Typer(help='x') + @app.callback() def main() -> None: pass",
        "Non-blocking quality gates: only test failures block the build",
        "Review passed on the first cycle because the QA agent wrote the fixtures first",
        "Keep each migration reversible so that a failed release can be rolled back",
        "Feature flags let the checkout page be released",
    ],
)
def test_what_worked_is_no_status(text: str) -> None:
    assert not is_status(text)


def test_a_file_list_is_never_a_pattern() -> None:
    assert is_file_list("`backend/app/billing.py`, `backend/app/models.py` and docs/BILLING.md")
    assert not is_file_list("Keep money rules in `backend/app/billing.py`, apart from the routes")


# ---------------------------------------------------------------- the pipeline, offline


def test_an_outcome_that_says_only_how_its_plan_ended_distils_its_summary(tmp_path: Path) -> None:
    outcomes = row("O-001", "01-01", "Ledger postings: Complete") + row(
        "O-002", "01-00", "Phase 1 review PASSED in 1 cycle(s), 0 finding(s)",
        task="quality-review", tags="review, testing",
    )  # fmt: skip
    text = summary("01-01", frontmatter=ESTABLISHED_FM, body=DECISIONS)
    paths = project(tmp_path, {"01-01": text}, outcomes)
    preview = run_distill(paths, offline(), today=TODAY, dry_run=True)
    assert not paths.patterns.exists() and len(preview.written) == 3
    result = run_distill(paths, offline(), today=TODAY)
    written = rows(paths)
    assert [w["pattern"] for w in written] == [
        "Idempotency keys on every posting endpoint, stored with a unique index",
        "Money as integer cents in `amount_cents`, never floats",
        "Postings are append-only so that balances can be replayed from the ledger history",
    ]
    assert all(w["source"] == "O-001, O-002, 01-01" for w in written)
    assert all(not is_status(w["pattern"]) for w in written)
    assert "Ledger postings: Complete" not in [w["pattern"] for w in written]
    context = written[0]["context"]
    assert context.startswith("Plan 01-01 (Ledger postings), Complete")
    assert "review passed on the first cycle (O-002)" in context
    assert written[0]["reuse_criteria"].startswith("Reuse on work like Ledger postings")
    assert result.plans == ["01-01"]
    again = run_distill(paths, offline(), today=TODAY)  # cited plans and outcomes: no candidate
    assert again.written == [] and again.groups == [] and len(rows(paths)) == 3


def test_a_status_outcome_without_a_summary_is_refused_with_the_reason(tmp_path: Path) -> None:
    paths = project(tmp_path, {}, row("O-001", "01-01", "Ledger postings: Complete"))
    result = run_distill(paths, offline(), today=TODAY)
    assert result.written == [] and not paths.patterns.exists()
    assert result.skipped == [{"pattern": "Ledger postings: Complete",
                               "reason": "the pattern is a status (how a plan ended), not what "
                               "worked"}]  # fmt: skip


def test_a_phase_is_distilled_from_its_summaries_alone(tmp_path: Path) -> None:
    paths = project(tmp_path, {"01-01": summary("01-01", frontmatter=ESTABLISHED_FM)})
    result = run_distill(paths, offline(), today=TODAY, phases=["1"])
    assert result.candidates == [] and result.plans == ["01-01"]
    assert [w["source"] for w in rows(paths)] == ["01-01", "01-01"]
    assert run_distill(paths, offline(), today=TODAY, phases=["1"]).written == []


def test_summaries_establishing_one_approach_become_one_pattern_citing_them_all(
    tmp_path: Path,
) -> None:
    one = "patterns-established:\n  - Idempotency keys on every posting endpoint, stored with a unique index\n"
    two = "patterns-established:\n  - Idempotency keys on every refund endpoint, stored with a unique index\n"
    paths = project(tmp_path, {"01-01": summary("01-01", frontmatter=one),
                               "01-02": summary("01-02", frontmatter=two)})  # fmt: skip
    run_distill(paths, offline(), today=TODAY, phases=["1"])
    (written,) = rows(paths)
    assert written["source"] == "01-01, 01-02"
    assert "refund endpoint" in written["context"]  # the other plan's words, quoted


# ---------------------------------------------------------------- a model's proposal


def model_pattern(**changes: Any) -> ProposedPattern:
    values: dict[str, Any] = {
        "pattern": "Idempotency keys on every posting endpoint, stored with a unique index",
        "context": "Plan 01-01 on ledger postings: every posting endpoint stores its key",
        "reuse_criteria": "Reuse on any posting endpoint that stores money",
        "source": ["01-01"],
        "tags": ["ledger", "idempotency"],
    }
    values.update(changes)
    return ProposedPattern(**values)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"pattern": "Ledger postings: Complete"},
         "the pattern is a status (how a plan ended), not what worked"),
        ({"pattern": "`src/ledger.py`, `src/postings.py` and `src/models.py`"},
         "the pattern is a file list, not what worked"),
        ({"source": ["01-07"]}, "cites plan 01-07, which is not a candidate plan summary"),
        ({"pattern": "Idempotency keys in Redis with a TTL of 24 hours"},
         "pattern names Redis, TTL, 24, which the sources it cites do not state"),
    ],
)  # fmt: skip
def test_a_models_unsupported_pattern_is_refused_with_the_reason(
    tmp_path: Path, changes: dict[str, Any], reason: str
) -> None:
    paths = project(tmp_path, {"01-01": summary("01-01", frontmatter=ESTABLISHED_FM)})
    engine = FakeEngine().enqueue(PatternProposals(patterns=[model_pattern(**changes)]))
    result = run_distill(paths, engine, today=TODAY, phases=["1"])
    assert result.written == [] and not paths.patterns.exists()
    assert [s["reason"] for s in result.skipped] == [reason]


def test_a_models_invented_clause_is_cut_and_the_rest_written(tmp_path: Path) -> None:
    paths = project(tmp_path, {"01-01": summary("01-01", frontmatter=ESTABLISHED_FM)})
    context = "Plan 01-01 on ledger postings: every posting endpoint stores its key; cached in Redis for 24 hours"
    engine = FakeEngine().enqueue(PatternProposals(patterns=[model_pattern(context=context)]))
    result = run_distill(paths, engine, today=TODAY, phases=["1"])
    (written,) = rows(paths)
    assert (
        written["context"] == "Plan 01-01 on ledger postings: every posting endpoint stores its key"
    )
    assert any("Redis" in w and "24" in w for w in result.warnings)


# ---------------------------------------------------------------- the real corpus


@pytest.mark.skipif(not CORPORA, reason=NO_CORPUS)
@pytest.mark.corpus
def test_no_real_outcome_summary_that_is_a_status_reads_as_what_worked() -> None:
    """Every success row of the real OUTCOMES.md files whose summary ends in a status word
    (`...: Complete`, `review PASSED in N cycle(s)`) is a status, and no declared
    patterns-established entry of any real summary is one."""
    outcome_rows = [line for p in corpus_files("OUTCOMES.md") for line in p.read_text().split("\n")
                    if line.startswith("| O-")]  # fmt: skip
    statuses = [cells[-2].strip() for line in outcome_rows
                if (cells := line.split("|")) and ": Complete" in line]  # fmt: skip
    assert statuses and all(is_status(s) for s in statuses)
    entries = [e for p in corpus_files("*SUMMARY.md") for e in established(p.read_text())]
    assert len(entries) >= 290
    assert [e for e in entries if is_status(e)] == []


@pytest.mark.skipif(not CORPORA, reason=NO_CORPUS)
@pytest.mark.corpus
def test_the_offline_engine_on_the_real_corpus(tmp_path: Path) -> None:
    """Every gate of `eval distill --corpus` holds offline: every declared entry written whole
    or quoted, no row a status or file list, none naming what its sources do not state, no
    near-duplicate, nothing written twice; and the second reader (evals/distill_oracle.py),
    written apart from the pipeline's rules, agrees on every row."""
    from legion_llm.evals.distill_corpus import run_distill_corpus

    totals = [run_distill_corpus(offline(), corpus, TODAY) for corpus in CORPORA]
    for run in totals:
        assert run.passed, run.failed_gates()
        summary = run.summary()
        assert summary["written"] > 0 and summary["recall"] == 1.0
        assert summary["oracle_flags"] == 0, [p.problems for p in run.projects if p.oracle_flags]
    written = sum(run.summary()["written"] for run in totals)
    assert written >= 500


def test_what_a_written_pattern_names_its_sources_state(tmp_path: Path) -> None:
    """The offline writer's own text (context, reuse criteria) names only what the cited
    summary states, whatever the summary says."""
    text = summary("01-01", frontmatter=ESTABLISHED_FM, body=DECISIONS)
    paths = project(tmp_path, {"01-01": text})
    run_distill(paths, offline(), today=TODAY, phases=["1"])
    for written in rows(paths):
        for field in ("pattern", "context", "reuse_criteria"):
            assert new_entities(written[field], text, ["01-01"]) == [], (field, written[field])


@pytest.mark.parametrize(
    ("verification", "said"),
    [
        ("## Verification\n- [x] Postings replay\n- [x] Balances match\n- [x] Keys unique\n",
         "every check passed"),
        ("## Verification\n12/12 tests pass after the change.\n", "12/12 checks passed"),
    ],
)  # fmt: skip
def test_a_plans_check_is_said_in_the_numbers_its_summary_states(
    tmp_path: Path, verification: str, said: str
) -> None:
    """A count the reader made by ticking boxes is no number of the summary's: the context says
    how the check went without it; a count the summary writes is kept as written."""
    text = summary("01-01", frontmatter=ESTABLISHED_FM, body=verification)
    paths = project(tmp_path, {"01-01": text})
    run_distill(paths, offline(), today=TODAY, phases=["1"])
    contexts = [r["context"] for r in rows(paths)]
    assert contexts and all(said in c for c in contexts), contexts
    assert all(new_entities(c, text, ["01-01"]) == [] for c in contexts)
