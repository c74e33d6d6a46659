"""verify-compaction on COMPACTED.md files written by someone else (memory-manager Section 12)."""

from __future__ import annotations

from pathlib import Path

from legion_llm.llm.engine import OfflineEngine
from legion_llm.memory.phases.find import Phase
from legion_llm.pipeline.compact.run import check_compacted, compact_phase, prepare
from legion_llm.pipeline.compact.verify import verify_document
from tests.pipeline.compaction_cases import TODAY, phase_of

# Written the way other tools write them: extra sections, files listed inline on deliverable
# lines, a decision cut mid-word, a path repeated in the table, no Agents section, CRLF.
HAND_MADE = """---
phase: 03-billing-exports
compacted: 2026-09-04
requirements_satisfied: [BILL-01, BILL-02, BILL-03, BILL-07]
---

# Phase 3: Billing exports — Compacted Summary

## Deliverables
- 03-01: streaming export (src/billing/export.py, src/billing/columns.py, tests/test_export.py)
- 03-02: export routes (`src/api/routes/exports.py`, `src/api/permissions.py`)

## Decisions
- Keyset pagination on (issued_at, id) instead of OFFSET: OFFSET degraded to minutes on la

## Files Modified
| File | Change |
|------|--------|
| src/api/routes/exports.py | streaming route |
| src/api/routes/exports.py | validation |
| tests/test_export_routes.py | 9 tests |
| src/billing/pdf.py | pdf export |

## Verification
- BILL-01: pass
- BILL-02: pass
- BILL-03: pass

## Conventions and Open Questions
- every export route has an isolation test; credit notes still open

## Also Covered
- BILL-07 groundwork in src/worker/scheduled_exports.py
""".replace("\n", "\r\n")


def write_hand_made(phase: Phase) -> None:
    phase.compacted_path.write_bytes(HAND_MADE.encode())


def test_a_hand_made_file_gets_its_real_misses(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    write_hand_made(phase)
    _, report = check_compacted(phase)
    assert report.missing_ids == ["BILL-04"]
    assert report.missing_paths == [
        "tests/conftest.py",
        "alembic/versions/0009_export_schedules.py",
        "tests/test_scheduled_exports.py",
        "docs/BILLING.md",
    ]
    assert report.invented_ids == ["BILL-07"]
    assert report.invented_paths == ["src/billing/pdf.py"]
    assert report.sections_missing == ["Agents"]
    assert report.sections_extra == ["Conventions and Open Questions", "Also Covered"]
    assert report.plans_missing == ["03-03"]
    assert report.frontmatter_missing == ["original_summaries"]
    assert not report.ok and 0 < report.ratio < 0.2


def test_strict_mode_wants_ids_and_paths_in_their_sections(tmp_path: Path) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    prep = prepare(phase)
    text = HAND_MADE.replace("\r\n", "\n")
    lenient = verify_document(text, prep.facts, prep.sources, tokens_original=1)
    strict = verify_document(text, prep.facts, prep.sources, tokens_original=1, strict=True)
    # named on a deliverable line counts for a reader, not for the compactor's own table
    assert "src/billing/export.py" not in lenient.missing_paths
    assert "src/billing/export.py" in strict.missing_paths


def test_our_own_output_verifies_and_a_later_edit_is_caught(tmp_path: Path) -> None:
    phase = phase_of("requirement-id-styles", tmp_path, "1")
    compact_phase(phase, OfflineEngine(), today=TODAY)
    _, report = check_compacted(phase)
    assert report.ok and report.sections_missing == report.sections_extra == []
    text = phase.compacted_path.read_text()
    phase.compacted_path.write_text(text.replace("R14", "requirement fourteen"))
    _, edited = check_compacted(phase)
    assert edited.missing_ids == ["R14"]


def test_an_id_without_its_own_verdict_line_is_missing(tmp_path: Path) -> None:
    phase = phase_of("requirement-id-styles", tmp_path, "1")
    compact_phase(phase, OfflineEngine(), today=TODAY)
    lines = phase.compacted_path.read_text().split("\n")
    verdict = next(line for line in lines if line.startswith("- R14: "))
    phase.compacted_path.write_text("\n".join(line for line in lines if line != verdict))
    text, report = check_compacted(phase)
    assert "R14" in text.split("---")[1]  # still in the frontmatter
    assert report.missing_ids == ["R14"] and not report.ok


# A careless hand-made (or model-made) file: every id and path may be there, but its claims are
# not what the summaries say.
CARELESS = """---
phase: 05-notifications
compacted: 2026-06-03
requirements_satisfied: [NOTF-01, NOTF-02, NOTF-03, NOTF-04]
---

# Phase 5: Notifications — Compacted Summary

## Deliverables
- **05-01 Notification service and templates** (Complete): x
- **05-03**: Courier ETA messages two stops away
- **05-04 Opt-outs and preference centre** (Complete): Implemented the planned changes.

## Decisions
- (05-02) None recorded
- (Plan x) Used a queue

## Files Modified
| File | Change |
|------|--------|
| x | x |
| services/notify/index.ts | , `services/notify/render.ts` |

## Verification
- NOTF-01: PASS — 05-01
- NOTF-03: PASS — done
"""


def test_verify_compaction_reports_ungrounded_claims(tmp_path: Path) -> None:
    phase = phase_of("missing-plan-summary", tmp_path, "5")
    phase.compacted_path.write_text(CARELESS)
    _, report = check_compacted(phase)
    found = [(p.kind, p.plan or p.id or p.path) for p in report.grounding]
    assert found == [
        ("placeholder", "05-01"),
        ("unknown-plan", "05-03"),  # a PLAN without a SUMMARY: nothing grounds a deliverable
        ("ungrounded-text", "05-04"),
        ("placeholder", "05-02"),
        ("unknown-plan", "Plan x"),
        ("placeholder", "x"),
        ("placeholder-change", "services/notify/index.ts"),
        ("ungrounded-verdict", "NOTF-03"),
        ("ungrounded-verdict", "NOTF-03"),  # and again in requirements_satisfied
    ]
    assert not report.ok
    data = report.as_dict()
    assert data["grounding"]["ungrounded-verdict"] == [
        "NOTF-03: PASS is not grounded (no summary of this phase reports it); use NOT VERIFIED",
        "NOTF-03 is listed as satisfied, but no summary of this phase reports it",
    ]


def test_our_rendering_reads_back_as_the_digest_it_came_from(tmp_path: Path) -> None:
    from legion_llm.pipeline.compact.parse import parse_document
    from legion_llm.pipeline.compact.prepare import header_for
    from legion_llm.pipeline.compact.render import render
    from tests.pipeline.compaction_cases import good_digest

    for case, spec in [("legion-spec-billing-exports", "3"), ("paths-zoo", "4"),
                       ("prose-status-requirements", "5"), ("partial-and-failed-plans", "4")]:  # fmt: skip
        phase = phase_of(case, tmp_path / case, spec)
        prep = prepare(phase)
        digest = good_digest(phase, level=5)
        claimed = parse_document(render(header_for(prep, TODAY), digest))
        back = claimed.digest
        assert [(d.plan_id, d.summary, d.follow_ups) for d in back.deliverables] == [
            (d.plan_id, " ".join(d.summary.split()), d.follow_ups) for d in digest.deliverables]  # fmt: skip
        assert [(r.requirement_id, r.verdict, r.evidence) for r in back.verification] == [
            (r.requirement_id, r.verdict, r.evidence) for r in digest.verification]  # fmt: skip
        assert [c.plan_id for c in back.checks] == [c.plan_id for c in digest.checks]
        assert {f.path for f in back.files} == {f.path for f in digest.files}
        assert [d.plan_id for d in back.decisions] == [d.plan_id for d in digest.decisions]
        passed = [r.requirement_id for r in digest.verification if r.verdict == "pass"]
        assert claimed.satisfied == passed
