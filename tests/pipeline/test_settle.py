"""settle(): any proposal (an engine's, a host agent's JSON, a batch result) -> a file or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from legion_llm.pipeline.compact.prepare import Prepared, header_for, offline_proposal, prepare
from legion_llm.pipeline.compact.render import (
    AgentItem,
    CheckItem,
    Header,
    PhaseDigest,
    RequirementItem,
    render,
)
from legion_llm.pipeline.compact.run import write_compacted
from legion_llm.pipeline.compact.settle import (
    CompactionError,
    Proposal,
    review,
    settle,
    should_reask,
)
from legion_llm.pipeline.compact.verify import Review
from tests.pipeline.compaction_cases import TODAY, good_digest, phase_of


def lazy(digest: PhaseDigest) -> PhaseDigest:
    """What a careless model sends: every string `x` (ids kept so it is schema-valid)."""
    data = json.loads(digest.model_dump_json())
    for item in data["deliverables"]:
        item.update(summary="x", follow_ups=[])
    for item in data["decisions"]:
        item.update(decision="x", rationale="x", rejected_alternatives=[])
    data["files"] = [{"path": "x", "change": "x"}]
    for item in data["verification"]:
        item.update(verdict="pass", evidence="x")
    return PhaseDigest.model_validate(data)


def setup(tmp_path: Path, case: str = "legion-spec-billing-exports",
          spec: str = "3") -> tuple[Prepared, Header]:  # fmt: skip
    prep = prepare(phase_of(case, tmp_path, spec))
    return prep, header_for(prep, TODAY, "test")


def test_a_host_agents_lazy_json_is_never_written_as_its_work(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    proposal = Proposal(lazy(good_digest(prep.phase)), "host")
    settled = settle(prep, header, [proposal])
    assert settled.engine == "offline+host" and settled.fell_back
    assert {name: s["source"] for name, s in settled.sections.items()} == dict.fromkeys(
        ["deliverables", "decisions", "files", "verification", "checks", "agents"], "offline"
    ) | {"checks": "host", "agents": "host"}  # the lazy answer left those two alone
    assert settled.text == render(header, settled.digest)
    assert "| x |" not in settled.text and ": x" not in settled.text
    assert settled.review.ok and settled.reviews[0].needs_model
    assert settled.sections["verification"]["because"] == ["placeholder"]
    write_compacted(settled)
    assert prep.phase.compacted_path.read_text() == settled.text


def test_good_sections_stay_the_proposers_and_bad_ones_come_from_offline(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    good = good_digest(prep.phase, level=3)
    mixed = good.model_copy(update={"decisions": lazy(good).decisions})
    settled = settle(prep, header, [Proposal(mixed, "host")])
    sources = {name: s["source"] for name, s in settled.sections.items()}
    assert sources["decisions"] == "offline" and sources["deliverables"] == "host"
    assert settled.engine == "host+offline" and settled.fell_back
    assert settled.digest.deliverables == good.deliverables
    assert settled.digest.decisions == offline_proposal(prep, header).decisions
    assert any("decisions did not hold up (placeholder)" in w for w in settled.warnings)


def test_one_re_ask_names_exactly_what_to_redo(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    good = good_digest(prep.phase)
    asked: list[Review] = []

    def ask_again(first: Review) -> Proposal:
        asked.append(first)
        return Proposal(good, "host")

    settled = settle(prep, header, [Proposal(lazy(good), "host")], ask_again=ask_again)
    assert len(asked) == 1 and should_reask(asked[0])
    problems = [p.as_dict() for p in asked[0].problems]
    assert {"kind": "placeholder", "section": "deliverables", "plan": "03-01",
            "message": "03-01: deliverable 'x' is a placeholder",
            "repairable": False} in problems  # fmt: skip
    assert {"kind": "ungrounded-verdict", "id": "BILL-01"} not in problems  # BILL-01 is reported
    assert settled.engine == "host" and not settled.fell_back
    assert all(s["proposal"] == 1 for s in settled.sections.values())


def test_no_re_ask_for_a_clean_or_an_offline_proposal(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    calls: list[Review] = []

    def ask_again(first: Review) -> None:
        calls.append(first)

    good = good_digest(prep.phase)
    settle(prep, header, [Proposal(good, "host")], ask_again=ask_again)
    offline = settle(prep, header, [Proposal(lazy(good), "offline")], ask_again=ask_again)
    assert calls == [] and offline.engine == "offline" and offline.review.ok
    assert not should_reask(review(prep, header, good))


def test_batch_results_collected_later_are_settled_together(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    good = good_digest(prep.phase)
    first = good.model_copy(update={"deliverables": lazy(good).deliverables})
    second = good.model_copy(update={"decisions": lazy(good).decisions})
    settled = settle(prep, header, [Proposal(first, "batch"), Proposal(second, "batch")])
    assert settled.sections["deliverables"]["proposal"] == 1  # newest good one
    assert settled.sections["decisions"]["proposal"] == 0
    assert settled.engine == "batch" and not settled.fell_back
    report = settled.report()
    assert [p["source"] for p in report["proposals"]] == ["batch", "batch"]
    assert json.loads(json.dumps(report)) == report


def test_a_missing_path_gets_its_own_row_with_its_plans(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    good = good_digest(prep.phase)
    dropped = good.model_copy(
        update={"files": [f for f in good.files if f.path != "tests/conftest.py"]}
    )
    settled = settle(prep, header, [Proposal(dropped, "host")])
    row = next(line for line in settled.text.split("\n") if line.startswith("| tests/conftest.py "))
    assert row.startswith("| tests/conftest.py | added the `ledger_200k` fixture")
    assert row.endswith(" (03-01) |")  # the plan that names it
    assert settled.repaired == [
        "path tests/conftest.py added to Files Modified (the proposal left it out)"
    ]
    assert settled.sections["files"]["source"] == "host"


def test_every_files_row_is_one_path_and_never_an_empty_cell(tmp_path: Path) -> None:
    prep, header = setup(tmp_path, "paths-zoo", "4")
    text = settle(prep, header, [Proposal(good_digest(prep.phase), "host")]).text
    rows = [line for line in text.split("\n") if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == len([p for p in prep.facts.paths]) - 8  # 8 move sources share a row
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 2 and all(any(ch.isalnum() for ch in c) for c in cells), row
        assert ", " not in cells[0], row


def test_nothing_that_fails_its_review_can_be_written(tmp_path: Path) -> None:
    prep, header = setup(tmp_path)
    settled = settle(prep, header, [Proposal(good_digest(prep.phase), "host")])
    broken = lazy(settled.digest)
    settled.review = review(prep, header, broken)
    with pytest.raises(CompactionError, match="refusing to write"):
        write_compacted(settled)
    assert not prep.phase.compacted_path.exists()


def test_a_line_even_the_offline_text_cannot_ground_takes_its_minimal_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from legion_llm.pipeline.compact import settle as settle_module
    from legion_llm.pipeline.compact.render import DecisionItem

    prep, header = setup(tmp_path)
    good = good_digest(prep.phase)
    odd = DecisionItem(plan_id="03-02", decision="Quantum ledgers are sharded by moon phase",
                       rationale="", rejected_alternatives=[])  # fmt: skip
    broken = good.model_copy(update={"decisions": [odd, *good.decisions[1:]]})
    monkeypatch.setattr(settle_module, "offline_proposal", lambda *args: broken)
    settled = settle(prep, header, [Proposal(broken, "host")])
    assert odd not in settled.digest.decisions and settled.review.ok
    assert [d.plan_id for d in settled.digest.decisions].count("03-02") == 1  # its first one
    decisions = settled.sections["decisions"]
    assert decisions["rung"] == "minimal" and decisions["replaced"] == ["03-02"]
    assert any("decisions of 03-02: the minimal text is written" in w for w in settled.warnings)


def test_a_digest_nothing_can_ground_is_written_in_its_minimal_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from legion_llm.pipeline.compact import settle as settle_module

    prep, header = setup(tmp_path)
    lazy_everything = lazy(good_digest(prep.phase))
    monkeypatch.setattr(settle_module, "offline_proposal", lambda *args: lazy_everything)
    settled = settle(prep, header, [Proposal(lazy_everything, "host")])
    assert settled.review.ok and ": x" not in settled.text and "| x |" not in settled.text
    assert settled.sections["deliverables"]["rung"] == "minimal"
    assert settled.engine != "host"  # nothing of the lazy answer is credited to the proposer
    write_compacted(settled)
    assert prep.phase.compacted_path.read_text() == settled.text


def test_only_a_bug_in_the_last_rung_can_stop_a_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from legion_llm.errors import EXIT_INTERNAL
    from legion_llm.pipeline.compact import settle as settle_module

    prep, header = setup(tmp_path)
    lazy_everything = lazy(good_digest(prep.phase))
    monkeypatch.setattr(settle_module, "offline_proposal", lambda *args: lazy_everything)
    monkeypatch.setattr(settle_module, "minimal_proposal", lambda *args: lazy_everything)
    with pytest.raises(CompactionError, match="internal error") as raised:
        settle(prep, header, [Proposal(lazy_everything, "host")])
    assert raised.value.exit_code == EXIT_INTERNAL
    assert not prep.phase.compacted_path.exists()


def test_a_missing_requirement_gets_its_grounded_verdict_and_plan(tmp_path: Path) -> None:
    prep, header = setup(tmp_path, "prose-status-requirements", "5")
    good = good_digest(prep.phase)
    dropped = good.model_copy(update={"verification": [
        r for r in good.verification if r.requirement_id not in ("R2.7", "R2.6")]})  # fmt: skip
    settled = settle(prep, header, [Proposal(dropped, "host")])
    lines = settled.text.split("\n")
    assert any(line.startswith("- R2.7: PARTIAL — ") and "05-03" in line for line in lines)
    assert "- R2.6: NOT VERIFIED — not reported by the summaries" in lines
    assert settled.sections["verification"]["source"] == "host"


def padded(digest: PhaseDigest, times: int = 40) -> PhaseDigest:
    """A grounded answer blown up: each deliverable repeats its summary `times` times over as
    follow-ups (each within its field's limit, so nothing for repair to cut)."""
    return digest.model_copy(update={"deliverables": [
        d.model_copy(update={"follow_ups": [d.summary[:280]] * times * 2})
        for d in digest.deliverables]})  # fmt: skip


@pytest.mark.parametrize(
    ("case", "spec"), [("legion-spec-billing-exports", "3"), ("brace-lists-and-bare-names", "2")]
)
def test_an_answer_many_times_the_originals_is_not_written_as_the_models_work(
    tmp_path: Path, case: str, spec: str
) -> None:
    prep, header = setup(tmp_path, case, spec)
    offline = offline_proposal(prep, header)
    long = padded(offline)
    asked: list[Review] = []

    def again(first: Review) -> Proposal:
        asked.append(first)
        return Proposal(long, "anthropic")  # asked to shorten, it answers the same

    settled = settle(prep, header, [Proposal(long, "anthropic")], ask_again=again)
    small = prep.tokens_original < 1_500
    limit = prep.tokens_original * (1.0 if small else 0.6)  # a small phase: its originals
    assert settled.review.presence.tokens_output <= limit
    assert review(prep, header, long).presence.tokens_output > 2 * limit
    assert settled.sections["deliverables"] == {**settled.sections["deliverables"],
                                                "source": "offline", "fallback": True,
                                                "because": ["too-long"]}  # fmt: skip
    assert settled.sections["files"]["source"] == "anthropic"  # the sections that were fine
    assert settled.fell_back and settled.engine == "offline+anthropic"
    assert settled.digest.deliverables == offline.deliverables
    assert any("(too-long)" in w for w in settled.warnings)
    assert not asked  # a length is form: never a paid re-ask (the texts are cut, else offline)


def test_a_section_repair_rebuilt_whole_is_not_the_proposers(tmp_path: Path) -> None:
    """Only invented ids in Verification, only agents who ran no plan: repair removes them all
    and writes the offline engine's lines; `engine` must not name the proposer for those."""
    prep, header = setup(tmp_path)
    good = good_digest(prep.phase)
    invented = {
        "verification": [RequirementItem(requirement_id="ZZ-99", verdict="pass", evidence="done")],
        "agents": [AgentItem(agent="nobody-at-all", work="everything")],
    }
    settled = settle(prep, header, [Proposal(good.model_copy(update=invented), "host")])
    assert settled.sections["verification"]["source"] == "offline" and settled.fell_back
    assert settled.sections["agents"]["items"] == 0 and settled.engine == "host+offline"
    assert settled.sections["deliverables"]["source"] == "host"
    assert "ZZ-99" not in settled.text and "nobody-at-all" not in settled.text
    junk = lazy(good).model_copy(
        update={**invented, "checks": [CheckItem(plan_id="99-99", result="passed")]}
    )
    settled = settle(prep, header, [Proposal(junk, "host")])
    assert settled.engine == "offline" and settled.fell_back


TINY = """# Plan 02-01 Summary

## Completed

- [x] jose JWT helpers for signing and verifying session tokens (src/lib/auth.ts)
- [x] WeChat login exchange wired to the session helpers (src/lib/wechat.ts)
- [x] Prisma client singleton shared by the handlers (src/lib/prisma.ts)
- [x] .env.example lists the new secrets without values
- [x] Three unit tests pass: signing, verifying, tamper detection

## Notes

The session token lifetime stays at seven days until the refresh flow lands in the next plan;
the WeChat sandbox account is shared by the team and must not be used for load tests.
"""


def test_a_tiny_phase_is_never_compacted_to_more_than_its_originals(tmp_path: Path) -> None:
    from legion_llm.llm.engine import Notices, OfflineEngine
    from legion_llm.memory.phases.find import find_phase
    from legion_llm.pipeline.compact.parse import parse_document
    from legion_llm.pipeline.compact.run import check_compacted, compact_phase

    planning = tmp_path / ".planning"
    folder = planning / "phases" / "02-auth"
    folder.mkdir(parents=True)
    (planning / "ROADMAP.md").write_text(
        "# Roadmap\n\n- [ ] Phase 2: Auth\n\n### Phase 2: Auth\n**Requirements**: AUTH-01, AUTH-02\n"
    )
    (folder / "02-01-SUMMARY.md").write_text(TINY)
    (folder / "02-02-PLAN.md").write_text("# Plan\n")
    phase = find_phase(tmp_path, "2")
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)), today=TODAY,
                           force=True)  # fmt: skip
    assert result.report.tokens_output <= result.report.tokens_original, result.text
    assert "layout: per-plan" in result.text and "## Plan 02-01" in result.text
    assert "- AUTH-01: NOT VERIFIED" in result.text
    assert any("the per-plan layout is written" in w for w in result.warnings)
    claimed = parse_document(result.text).digest  # it reads back as what it says
    assert {f.path for f in claimed.files} == set(result.facts.paths)
    assert [r.requirement_id for r in claimed.verification] == ["AUTH-01", "AUTH-02"]
    _, report = check_compacted(phase)
    assert report.ok and report.grounding == [] and report.sections_missing == []
