"""The compaction pipeline with the offline engine and a queue fake (no HTTP)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from legion_llm.errors import InputError
from legion_llm.llm.engine import FallbackEngine, Notices, OfflineEngine
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.phases.extract import sections, split_frontmatter
from legion_llm.pipeline.compact import settle as settle_module
from legion_llm.pipeline.compact.render import DecisionItem, FileItem, RequirementItem
from legion_llm.pipeline.compact.run import CALL_CAP_TOKENS, compact_phase
from legion_llm.pipeline.compact.split import FIRST_ASK
from tests.pipeline.compaction_cases import (
    TODAY,
    fingerprint,
    good_digest,
    phase_of,
    without_path,
    without_requirement,
)


def offline() -> OfflineEngine:
    return OfflineEngine(notices=Notices(sink=None))


def section(text: str, title: str) -> str:
    _, body = split_frontmatter(text)
    return next(s.text for s in sections(body) if s.title == title)


def test_offline_compaction_writes_the_spec_format_and_leaves_originals(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    before = fingerprint(phase.planning.parent)
    result = compact_phase(phase, offline(), today=TODAY)
    written = phase.compacted_path.read_text(encoding="utf-8")
    assert result.written and written == result.text
    assert phase.compacted_path.name == "03-COMPACTED.md"
    assert written.split("\n")[:6] == [
        "---",
        "phase: 03-billing-exports",
        "compacted: 2026-11-30",
        "original_summaries: [03-01-SUMMARY.md, 03-02-SUMMARY.md, 03-03-SUMMARY.md]",
        "requirements_satisfied: [BILL-01, BILL-02, BILL-03, BILL-04]",
        "---",
    ]
    headings = re.findall(r"^#{1,2} .+$", written, re.MULTILINE)
    assert headings == [
        "# Phase 3: Billing exports — Compacted Summary",
        "## Deliverables",
        "## Decisions",
        "## Files Modified",
        "## Verification",
        "## Agents",
    ]
    assert "| File | Change |\n|------|--------|\n" in written
    assert fingerprint(phase.planning.parent) == before  # originals untouched
    assert list(phase.folder.glob(".*.tmp")) == []  # the atomic write left no temp file
    assert result.report.ok and 0.30 <= result.report.ratio <= 0.50
    assert result.engine == "offline" and not result.fell_back and result.repaired == []


def test_offline_output_drops_logs_and_keeps_verdicts(tmp_path: Path) -> None:
    result = compact_phase(phase_of("partial-and-failed-plans", tmp_path, "4"), offline(),
                           today=TODAY, write=False)  # fmt: skip
    text = result.text
    assert "```" not in text and "Traceback" not in text and "XFAIL" not in text
    verification = section(text, "Verification")
    assert "- R4: PASS" in verification and "- R5: PARTIAL" in verification
    assert "- R6: FAIL" in verification
    assert "FAIL: `python -m pytest tests/search/test_query.py -q` (exit 1)" in verification
    assert "requirements_not_satisfied: [R5, R6]" in text
    deliverables = section(text, "Deliverables")
    assert "(Partial)" in deliverables and "(Failed)" in deliverables
    assert "Phase 5" in deliverables  # the deferral is kept
    assert "- engineering-ai-engineer: 04-03" in section(text, "Agents")


def test_preconditions_refuse_with_clear_messages(tmp_path: Path) -> None:
    not_done = phase_of("phase-not-complete", tmp_path, "3")
    with pytest.raises(InputError) as caught:
        compact_phase(not_done, offline(), today=TODAY)
    assert caught.value.message == (
        "phase 3 is not marked complete in ROADMAP.md; plan(s) 03-03 have a PLAN but no SUMMARY "
        "(pass --force to compact anyway)"
    )
    missing = phase_of("missing-plan-summary", tmp_path, "5")
    with pytest.raises(InputError, match=r"plan\(s\) 05-03 have a PLAN but no SUMMARY"):
        compact_phase(missing, offline(), today=TODAY)
    assert not not_done.compacted_path.exists() and not missing.compacted_path.exists()


def test_force_is_recorded_and_roadmap_only_ids_are_flagged(tmp_path: Path) -> None:
    phase = phase_of("missing-plan-summary", tmp_path, "5")
    result = compact_phase(phase, offline(), today=TODAY, force=True)
    text = phase.compacted_path.read_text()
    assert "forced: true" in text
    assert 'forced_reason: "plan(s) 05-03 have a PLAN but no SUMMARY"' in text
    assert "- NOTF-03: NOT VERIFIED — not reported by the summaries" in text
    assert "requirements_not_satisfied: [NOTF-03]" in text
    assert "warning: plan(s) 05-03 have a PLAN but no SUMMARY (--force)" in result.warnings


def test_existing_file_is_replaced_only_with_force(tmp_path: Path) -> None:
    phase = phase_of("decimal-phase", tmp_path, "6.1")
    phase.compacted_path.write_text("hand written\n")
    with pytest.raises(InputError, match=r"06\.1-COMPACTED\.md exists; pass --force"):
        compact_phase(phase, offline(), today=TODAY)
    assert phase.compacted_path.read_text() == "hand written\n"
    dry = compact_phase(phase, offline(), today=TODAY, write=False)  # --dry-run
    assert not dry.written and phase.compacted_path.read_text() == "hand written\n"
    compact_phase(phase, offline(), today=TODAY, force=True)
    text = phase.compacted_path.read_text()
    assert text.startswith("---\nphase: 06.1-cache-eviction-hotfix\n")
    assert 'forced_reason: "replaced the existing compacted summary"' in text


def test_a_dropped_id_is_repaired_without_paying_for_a_re_ask(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    good = good_digest(phase)
    engine = FakeEngine().enqueue(without_requirement(good, "BILL-03"))  # one answer, no more
    result = compact_phase(phase, engine, today=TODAY, write=False)
    assert len(engine.requests) == 1 and [a["reask"] for a in result.answers] == [False]
    assert engine.requests[0].prompt.user == FIRST_ASK
    assert result.repaired == [
        "requirement BILL-03 added to Verification (the proposal left it out)"
    ]
    assert "- BILL-03: PASS" in section(result.text, "Verification")


def test_missing_ids_and_paths_are_repaired_in_their_sections(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    bad = without_path(without_requirement(good_digest(phase), "BILL-03"), "docs/BILLING.md")
    engine = FakeEngine().enqueue(bad)
    result = compact_phase(phase, engine, today=TODAY)
    assert len(engine.requests) == 1  # what repair fixes is never re-asked
    assert result.repaired == [
        "requirement BILL-03 added to Verification (the proposal left it out)",
        "path docs/BILLING.md added to Files Modified (the proposal left it out)",
    ]
    assert (
        "warning: repaired: requirement BILL-03 added to Verification (the proposal left it out)"
        in result.warnings
    )
    text = phase.compacted_path.read_text()
    assert re.search(
        r"^- BILL-03: PASS — Only finance and owner roles", section(text, "Verification"), re.M
    )
    assert '| docs/BILLING.md | new "Exports" section' in section(text, "Files Modified")
    assert result.as_dict()["missing_after_repair"] == []


def test_inventions_are_struck(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    good = good_digest(phase)
    invented = good.model_copy(update={
        "files": [*good.files, FileItem(path="src/billing/pdf_export.py", change="new")],
        "verification": [*good.verification,
                         RequirementItem(requirement_id="BILL-09", verdict="pass", evidence="x")],
        "decisions": [DecisionItem(plan_id="03-01", decision="Moved helpers to lib/money.py.",
                                   rationale="", rejected_alternatives=[]), *good.decisions],
    })  # fmt: skip
    engine = FakeEngine().enqueue(invented, invented)
    result = compact_phase(phase, engine, today=TODAY)
    # the re-ask is for the ungrounded decision only (repair strikes the invented id and path),
    # and asks for just that section; the summaries are in the unchanged context before it
    first, reask = engine.requests
    assert reask.prompt.context == first.prompt.context and "BILL-09" not in reask.prompt.user
    assert "[decisions]" in reask.prompt.user and "pdf_export" not in reask.prompt.user
    assert (
        "Redo only these sections: decisions. Return deliverables, files, verification, "
        "checks, agents as empty lists" in reask.prompt.user
    )
    text = phase.compacted_path.read_text()
    assert "pdf_export" not in text and "BILL-09" not in text and "lib/money.py" not in text
    # the invented decision is not among 03-01's decisions: the offline engine's section is used
    assert "Moved helpers" not in text and "removed" not in text
    decisions = result.settled.sections["decisions"]
    # struck of the path the originals never name, nothing the summary supports is left of it
    assert decisions == {"source": "offline", "proposal": None, "fallback": True,
                         "because": ["placeholder"], "items": len(good.decisions)}  # fmt: skip
    assert result.engine == "fake+offline" and result.fell_back
    assert set(result.repaired) == {
        "removed BILL-09: the originals never name it",
        "removed src/billing/pdf_export.py: the originals never name it",
    }


def test_a_long_answer_is_cut_to_length_and_never_re_asked(tmp_path: Path) -> None:
    # a length is form: the answer's own texts are cut at sentence boundaries (else the most
    # bloated section takes the offline text), never a paid second call
    phase = phase_of("ten-plan-phase", tmp_path, "5")
    good = good_digest(phase)
    wordy = good.model_copy(update={"deliverables": [
        d.model_copy(update={"summary": f"{d.summary} " * 3}) for d in good.deliverables]})  # fmt: skip
    engine = FakeEngine().enqueue(wordy, good)
    result = compact_phase(phase, engine, today=TODAY, write=False)
    assert len(engine.requests) == 1
    assert result.report.ratio <= 0.60 and result.settled.review.ok
    assert result.settled.sections["deliverables"]["source"] == "fake"  # the model's text, cut
    assert all(len(d.summary) <= 600 for d in result.settled.digest.deliverables)


def test_what_repair_leaves_wrong_takes_the_offline_item_and_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    bad = without_requirement(good_digest(phase), "BILL-02")
    monkeypatch.setattr(settle_module, "repair", lambda digest, *args: (digest, []))
    result = compact_phase(phase, FakeEngine().enqueue(bad, bad), today=TODAY)
    text = phase.compacted_path.read_text()
    assert result.written and result.settled.review.ok and "- BILL-02: PASS" in text
    verification = result.settled.sections["verification"]
    assert verification["rung"] == "offline" and verification["replaced"] == ["BILL-02"]
    assert verification["source"] == "fake+offline" and "missing-id" in verification["because"]
    assert any("verification of BILL-02: the offline text is written" in w for w in result.warnings)


def test_claude_down_falls_back_to_the_offline_step(tmp_path: Path) -> None:
    phase = phase_of("gsd-frontmatter-session-auth", tmp_path, "2")
    fake = FakeEngine(notices=Notices(sink=None)).enqueue(LLMUnavailableError("HTTP 529"))
    result = compact_phase(phase, FallbackEngine(fake, offline()), today=TODAY, write=False)
    assert result.fell_back and result.engine == "offline" and result.report.ok
    assert result.as_dict()["answers"][0]["fallback_reason"] == "HTTP 529"


def test_a_phase_over_one_call_is_compacted_plan_by_plan_and_merged(tmp_path: Path) -> None:
    phase = phase_of("very-large-phase", tmp_path, "7")
    # 119k tokens of summaries, 27k once their logs are cut: three calls at the real cap, more
    # at a small one (where a plan too large alone is split at section or line boundaries)
    assert compact_phase(phase, offline(), today=TODAY, write=False,
                         call_budget=CALL_CAP_TOKENS).chunks == 3  # fmt: skip
    result = compact_phase(phase, offline(), today=TODAY, call_budget=8_000)
    calls = [a["plans"] for a in result.answers]
    assert result.chunks == len(calls) > 5
    plan_ids = [part.split(" ")[0] for call in calls for part in call]
    assert list(dict.fromkeys(plan_ids)) == [
        f"07-0{n}" for n in range(1, 7)
    ]  # every plan, in order
    assert ["07-05 (part 1 of 5)"] in calls  # a plan too large alone was split, not cut
    assert result.report.ok and result.repaired == []
    assert any("compacted 6 plan(s) in" in w for w in result.warnings)
    assert result.report.ratio < 0.05  # machine logs dropped


def test_a_plan_too_large_for_one_call_is_split_never_cut(tmp_path: Path) -> None:
    from legion_llm.pipeline.compact.run import prepare
    from legion_llm.pipeline.compact.split import split_doc

    doc = prepare(phase_of("very-large-phase", tmp_path, "7")).docs[1]  # 07-02, ~30k tokens

    def count(text: str) -> int:
        return len(text) // 3

    parts = split_doc(doc, 4_000, count)
    assert len(parts) > 5 and [p.part for p in parts][-1] == f"part {len(parts)} of {len(parts)}"
    assert all(count(p.text) <= 4_000 for p in parts)
    kept = []
    for number, part in enumerate(parts):
        lines = part.text.split("\n")
        if number:  # the continuation header names the plan
            assert lines[0] == "# Plan 07-02: Bulk copy with checksums (continued)"
            lines = lines[2:]
        kept += lines
    # every original line, in order; only fence lines were added where a cut fell inside a fence
    assert [line for line in kept if line != "```"] == [
        line for line in doc.text.split("\n") if line != "```"
    ]
    assert all(p.text.count("```") % 2 == 0 for p in parts)


def test_a_re_ask_carries_the_problems_as_data(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    good = good_digest(phase)
    lazy = good.model_copy(update={"checks": [c.model_copy(update={"result": "x"})
                                              for c in good.checks]})  # fmt: skip
    engine = FakeEngine().enqueue(without_requirement(lazy, "BILL-03"), good)
    compact_phase(phase, engine, today=TODAY, write=False)
    first, second = (r.context for r in engine.requests)
    assert first.problems == ()
    # what the model must redo (the placeholder checks), not what repair fixes (BILL-03)
    assert {p["kind"] for p in second.problems} == {"placeholder"}
    assert {p["section"] for p in second.problems} == {"checks"}
    assert all(not p["repairable"] for p in second.problems)


def test_the_report_never_repeats_a_secret_of_the_models_answer(tmp_path: Path) -> None:
    """What `compact --json` says about a refused or repaired proposal is redacted like the
    file: the token a model pasted into its answer is in neither."""
    import json

    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    good = good_digest(phase)
    leaky = good.model_copy(update={
        "deliverables": [d.model_copy(update={"summary": f"Pushed with {token} to the remote"})
                         for d in good.deliverables],
        "files": [*good.files, FileItem(path=f"src/{token}.py", change=f"holds {token}")],
    })  # fmt: skip
    result = compact_phase(phase, FakeEngine().enqueue(leaky, leaky), today=TODAY)
    report = json.dumps(result.as_dict()) + "\n".join(result.warnings + result.repaired)
    assert token not in report and token not in phase.compacted_path.read_text()
    assert "[REDACTED" in report  # the report says where it was, not what it was
