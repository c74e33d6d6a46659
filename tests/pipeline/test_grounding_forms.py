"""Repair first, refuse only false facts; grounding reads every language; a check line is one
short sentence (issue: compaction on real phases). Own fixtures, one per rule."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from legion_llm.llm.engine import Notices, OfflineEngine
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.phases.find import find_phase
from legion_llm.memory.phases.markdown import cut_to
from legion_llm.memory.terms import content_terms, grounded, is_placeholder, terms_of
from legion_llm.pipeline.compact.ground import ground
from legion_llm.pipeline.compact.prepare import header_for, offline_proposal, prepare
from legion_llm.pipeline.compact.render import LIMITS, PhaseDigest
from legion_llm.pipeline.compact.run import check_compacted, compact_phase

TODAY = date(2026, 12, 3)


# command output a compacted summary drops: it makes each fixture phase as long as a real one,
# so what is measured is the rule, not the small-phase layout
LOG = (
    "\n## Test Output\n\n```\n"
    + "\n".join(
        f"PASS tests/forms/case_{n:02d}.test.ts ({n * 3} ms) validates field group {n}"
        for n in range(60)
    )
    + "\n```\n"
)


def phase_with(tmp_path: Path, *summaries: str, roadmap: str = "") -> Path:
    root = tmp_path / "p"
    folder = root / ".planning" / "phases" / "05-intake"
    folder.mkdir(parents=True)
    (root / ".planning" / "ROADMAP.md").write_text(
        f"# Roadmap\n\n- [x] Phase 5: Intake\n\n### Phase 5: Intake\n{roadmap}\n"
    )
    for number, text in enumerate(summaries, start=1):
        (folder / f"05-0{number}-SUMMARY.md").write_text(text + LOG)
    return root


CHINESE = """# Plan 05-01 Summary: 表单

**Status:** Complete

## What Was Done
- 创建表单校验模块，支持必填字段与长度限制
- 增加错误提示的本地化文本

## Files Modified
- `src/forms/validate.ts` — 表单校验规则与错误信息
- `src/i18n/zh.json` — 新增十二条中文错误提示
"""

RUSSIAN = """# Plan 05-02 Summary: Экспорт

**Status:** Complete

## What Was Done
- Добавлен экспорт заявок в CSV с фильтрами по дате и статусу

## Files Modified
- `src/export/csv.py` — экспорт заявок и фильтры по дате
"""


def test_summaries_in_chinese_and_russian_are_grounded_like_english(tmp_path: Path) -> None:
    root = phase_with(tmp_path, CHINESE, RUSSIAN)
    phase = find_phase(root, "5")
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)), today=TODAY)
    assert result.settled.reviews[0].problems == [] and result.repaired == []
    assert "表单校验规则与错误信息" in result.text and "экспорт заявок" in result.text
    _, report = check_compacted(phase)
    assert report.ok and report.grounding == []
    # a paraphrase in the same language shares its terms; another plan's text does not
    source = terms_of([CHINESE])
    assert grounded("表单校验模块支持必填字段", source)
    assert not grounded("Добавлен экспорт заявок в CSV", source)
    assert grounded("Экспорт заявок с фильтрами", terms_of([RUSSIAN]))
    assert content_terms("平台约束库索引") and not is_placeholder(
        "平台约束库索引，16 个 P0 约束速查表"
    )


FRONTMATTER = """---
phase: 05-intake
plan: 01
requirements-completed: [INTAKE-01, INTAKE-02]
---

# Plan 05-01 Summary: Intake form

**Status:** Complete

## What Was Done
- Intake form with server-side validation of every field (src/forms/intake.ts)
"""


def test_evidence_quoting_the_summary_gets_its_plan_id_for_free(tmp_path: Path) -> None:
    phase = find_phase(phase_with(tmp_path, FRONTMATTER), "5")
    prep = prepare(phase)
    good = offline_proposal(prep, header_for(prep, TODAY))
    quoted = good.model_copy(update={"verification": [
        r.model_copy(update={"evidence": "requirements-completed: [INTAKE-01, INTAKE-02]"})
        for r in good.verification]})  # fmt: skip
    kinds = {p.kind for p in ground(quoted, prep.facts, prep.evidence)}
    assert kinds == {"uncited-evidence"}  # a form problem, not a false claim
    result = compact_phase(phase, FakeEngine().enqueue(quoted, quoted), today=TODAY)
    assert result.engine == "fake" and not result.fell_back  # no re-ask, nothing replaced
    assert "- INTAKE-01: PASS — requirements-completed: [INTAKE-01, INTAKE-02] (05-01)" in (
        result.text
    )


def test_an_over_long_item_is_cut_at_a_sentence_boundary(tmp_path: Path) -> None:
    phase = find_phase(phase_with(tmp_path, FRONTMATTER), "5")
    prep = prepare(phase)
    good = offline_proposal(prep, header_for(prep, TODAY))
    sentence = "Intake form with server-side validation of every field. "
    long = good.model_copy(update={"deliverables": [
        d.model_copy(update={"summary": sentence * 30}) for d in good.deliverables]})  # fmt: skip
    result = compact_phase(phase, FakeEngine().enqueue(long, long), today=TODAY)
    summary = result.settled.digest.deliverables[0].summary
    assert len(summary) <= LIMITS["summary"] and summary.endswith("every field.")
    assert any("cut the summary of 05-01" in note for note in result.repaired)
    assert result.engine == "fake"  # repaired, not replaced
    assert cut_to("One two. Three four five six.", 12) == "One two."


def test_a_struck_path_leaves_no_marker_and_no_orphan_sentence(tmp_path: Path) -> None:
    phase = find_phase(phase_with(tmp_path, FRONTMATTER), "5")
    prep = prepare(phase)
    good = offline_proposal(prep, header_for(prep, TODAY))
    said = "Intake form with server-side validation of every field (src/forms/intake.ts)."
    invented = good.model_copy(update={"deliverables": [d.model_copy(update={
        "summary": f"{said} The shared rules moved to src/forms/rules_helpers.ts."})
        for d in good.deliverables]})  # fmt: skip
    result = compact_phase(phase, FakeEngine().enqueue(invented, invented), today=TODAY)
    summary = result.settled.digest.deliverables[0].summary
    assert summary == said and "removed" not in result.text and "rules_helpers" not in result.text
    assert result.engine == "fake"


CHECKLIST = """# Plan 05-01 Summary: Intake form

**Status:** Complete

## What Was Done
- Intake form with server-side validation of every field

## Verification
- [x] every required field is rejected when empty, with the field named in the message
- [x] lengths are checked against the schema limits before the record is saved
- [ ] the mobile layout was not checked on a real device yet
- [x] the error text reads the same in both locales
---
"""


def test_a_check_line_is_one_short_sentence_of_counts_and_failures(tmp_path: Path) -> None:
    phase = find_phase(phase_with(tmp_path, CHECKLIST), "5")
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)), today=TODAY)
    checks = result.settled.digest.checks
    assert [c.result for c in checks] == [
        "3/4 checks passed; FAIL: the mobile layout was not checked on a real device yet"
    ]
    assert len(checks[0].result) <= LIMITS["result"] and "---" not in checks[0].result


def test_an_empty_answer_is_no_file_of_the_models(tmp_path: Path) -> None:
    phase = find_phase(phase_with(tmp_path, FRONTMATTER), "5")
    empty = PhaseDigest(deliverables=[], decisions=[], files=[], verification=[], checks=[],
                        agents=[])  # fmt: skip
    result = compact_phase(phase, FakeEngine().enqueue(empty, empty), today=TODAY)
    assert result.written and result.settled.review.ok
    assert result.settled.sections["deliverables"]["source"] == "offline"
