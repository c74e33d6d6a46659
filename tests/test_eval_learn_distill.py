"""The distillation and learnings evals: pure scorers, definitions, the measured offline values
(the numbers in the README), and scorers that catch a misbehaving engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.evals import distill as distill_eval
from legion_llm.evals import learnings as learnings_eval
from legion_llm.evals.gates import failed_gates
from legion_llm.llm.engine import OfflineEngine
from legion_llm.llm.offline import OfflineCall, OfflineRegistry
from legion_llm.memory.learnings.read import Learning
from legion_llm.pipeline.distill import PROMPT as DISTILL_PROMPT
from legion_llm.pipeline.distill import PatternProposals, ProposedPattern, distill_offline
from legion_llm.pipeline.learnings.extract import PROMPT as EXTRACT_PROMPT
from legion_llm.pipeline.learnings.extract import Planned, extract_offline

REPO = Path(__file__).resolve().parents[1]


def offline() -> OfflineEngine:
    reg = OfflineRegistry()
    reg.register(DISTILL_PROMPT, distill_offline)
    reg.register(EXTRACT_PROMPT, extract_offline)
    return OfflineEngine(reg)


# ---------------------------------------------------------------- pure scorers


def test_distill_scorers() -> None:
    row = {"source": "O-001, O-002", "tags": ["db"], "pattern": "p", "context": "c",
           "reuse_criteria": "r"}  # fmt: skip
    assert distill_eval.row_violations(row, {"O-001", "O-002"}, set()) == []
    bad = dict(row, source="O-001, O-009", tags=["DB"], context=" ")
    assert distill_eval.row_violations(bad, {"O-001"}, {"O-001"}) == [
        "cites O-001, ruled out", "cites O-009, which does not exist",
        "tags empty or not lowercase", "empty context",
    ]  # fmt: skip
    assert distill_eval.match_expected([["O-1"], ["O-2"], ["O-3"]], [["O-1", "O-2"], ["O-3"]]) == [
        0, None, 1,
    ]  # fmt: skip
    assert distill_eval.overlapping_rows([["O-1", "O-9"], ["O-2", "O-9"], ["O-1"]], {"O-9"}) == 1
    assert distill_eval.near_duplicates_written([{"sources": ["O-4"], "of": "P-1"}], [["O-4"]]) == 1


def test_gates_min_max_and_offline_only() -> None:
    gates = {"coverage": {"min": 0.9, "offline_only": 1}, "rule_violations": {"max": 0}}
    assert failed_gates({"coverage": 0.5, "rule_violations": 0}, gates, offline=False) == []
    assert failed_gates({"coverage": 0.5, "rule_violations": 2}, gates, offline=True) == [
        "coverage: 0.5 < 0.9", "rule_violations: 2 > 0",
    ]  # fmt: skip
    assert failed_gates({"errors": 1}, {}, offline=True) == ["errors: 1 case(s) failed to run"]


def test_learnings_scorers() -> None:
    def planned(action: str, title: str, file: str = "a.md") -> Planned:
        return Planned(
            action, Learning(title, "body", ["a", "b"], "m", "", "medium", "gotcha", file)
        )

    items = [{"mentions": ["libnss3"], "action": "new", "category": ["gotcha"]},
             {"mentions": ["5433"], "action": "reinforce", "files": ["gotchas.md"], "category": ["gotcha"]}]  # fmt: skip
    produced = [planned("new", "port 5433", "x.md"), planned("new", "LIBNSS3 missing")]
    assert learnings_eval.match_expected(items, produced) == [1, 0]
    assert not learnings_eval.action_right(items[1], produced[0])
    assert learnings_eval.action_right(items[1], planned("reinforce", "5433", "gotchas.md"))
    assert learnings_eval.repeats(items, [*produced, planned("new", "libnss3 again")]) == 1
    high = Planned("new", Learning("t", "b", ["a"], "other", "", "high", "pattern", "f.md"))
    assert learnings_eval.file_violations(high, "m", False) == [
        "f.md: needs 2-5 tags, not 1", "f.md: high confidence on a first sighting",
        "f.md: names nothing found in the mission", "f.md: source 'other', not 'm'",
    ]  # fmt: skip
    assert learnings_eval.changed({"a": b"1", "b": b"2"}, {"a": b"1", "b": b"3", "c": b""}) == 2


def test_definitions_load() -> None:
    d = distill_eval.load_definition()
    assert d.dataset == (REPO / "fixtures" / "distill").resolve() and d.catalog.name == "CATALOG.md"
    assert d.gates["rule_violations"] == {"max": 0} and d.gates["coverage"]["min"] == 0.96
    l_def = learnings_eval.load_definition()
    assert l_def.budgets == (120, 300, 600, 1200, 2000)
    assert l_def.gates["budget_violations"] == {"max": 0} and l_def.gates["coverage"]["min"] == 0.89


# ---------------------------------------------------------------- the measured offline runs


def test_distill_eval_offline_passes_its_gates_with_the_measured_values() -> None:
    run = distill_eval.run_distill_eval(offline())
    summary = run.summary()
    assert run.failed_gates() == [] and run.passed
    assert (summary["histories"], summary["expected_patterns"], summary["covered"]) == (31, 30, 29)
    assert summary["coverage"] == 0.9667 and summary["written"] == 31
    assert summary["rule_violations"] == 0 and summary["duplicates_written"] == 0
    assert summary["source_id_validity"] == 1.0 and summary["near_duplicates_caught"] == 1


def test_learnings_eval_offline_passes_its_gates_with_the_measured_values() -> None:
    run = learnings_eval.run_learnings_eval(offline())
    summary = run.summary()
    assert run.failed_gates() == [], run.as_dict()["cases"]
    assert (summary["cases"], summary["expected_learnings"], summary["covered"]) == (7, 19, 17)
    assert summary["coverage"] == 0.8947 and summary["reinforced"] == 6 and summary["new"] == 11
    assert summary["action_accuracy"] == 1.0 and summary["category_accuracy"] == 1.0
    assert summary["second_pass_changes"] == 0 and summary["budget_violations"] == 0
    assert summary["load_checks"] == 35


# ---------------------------------------------------------------- scorers catch bad engines


def careless(call: OfflineCall) -> PatternProposals:
    """Cites O-001 on top of its group and writes tags in capitals."""
    good = distill_offline(call)
    return PatternProposals(patterns=[
        ProposedPattern(**{**p.model_dump(), "tags": [t.upper() for t in p.tags],
                           "source": sorted({"O-001", *p.source})})
        for p in good.patterns
    ])  # fmt: skip


def test_the_verification_refuses_a_careless_distiller() -> None:
    reg = OfflineRegistry()
    reg.register(DISTILL_PROMPT, careless)
    run = distill_eval.run_distill_eval(OfflineEngine(reg))
    summary = run.summary()
    assert summary["written"] == 0 and summary["coverage"] == 0.0  # nothing passed verification
    assert summary["rule_violations"] == 0 and "coverage: 0.0 < 0.96" in run.failed_gates()


def test_without_verification_the_scorers_catch_the_violations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Switch the verification off: the eval, scoring the rows on disk, must fail the run."""
    from legion_llm.pipeline import distill

    monkeypatch.setattr(distill, "verify", lambda p, prepared, index: (list(p.source), None))
    reg = OfflineRegistry()
    reg.register(DISTILL_PROMPT, careless)
    run = distill_eval.run_distill_eval(OfflineEngine(reg))
    summary = run.summary()
    assert summary["rule_violations"] > 0 and summary["duplicates_written"] > 0
    failed = run.failed_gates()
    assert any(f.startswith("rule_violations") for f in failed)
    assert any(f.startswith("duplicates_written") for f in failed)


def test_a_run_that_writes_duplicates_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break de-duplication: every proposal becomes a new file. The scorers must notice."""
    from legion_llm.pipeline.learnings import extract

    def always_new(self: Any, learning: Learning, source: str, now: str) -> Planned:
        from dataclasses import replace

        return Planned("new", replace(learning, source=source, extracted_at=now))

    monkeypatch.setattr(extract.Deduper, "place", always_new)
    run = learnings_eval.run_learnings_eval(offline())
    summary = run.summary()
    assert summary["duplicates_written"] > 0 and summary["second_pass_changes"] > 0
    assert any(f.startswith("duplicates_written") for f in run.failed_gates())


def test_one_failing_case_does_not_abort_the_run(tmp_path: Path) -> None:
    fixtures = tmp_path / "missions"
    fixtures.mkdir()
    (fixtures / "project").mkdir()
    (fixtures / "expected.json").write_text(json.dumps({
        "project": "project", "now": "2026-01-01T00:00:00Z",
        "cases": [{"path": "missing", "source": "m-1", "learnings": []}],
    }))  # fmt: skip
    run = learnings_eval.run_learnings_eval(offline(), fixtures)
    assert run.cases[0].error and "errors: 1 case(s) failed to run" in run.failed_gates()


def test_cli_eval_commands(cli: Any, tmp_path: Path) -> None:
    for suite in ("distill", "learnings"):
        log = tmp_path / f"{suite}.json"
        done = cli("eval", suite, "--engine", "offline", "--json", "--out", log, "--root", tmp_path)
        assert done.exit_code == 0, done.stderr
        data = done.json["data"]
        assert data["passed"] is True and data["eval"] == suite and data["log"] == str(log)
        assert data["usage"]["calls"] == 0 and data["usage"]["offline_calls"] > 0
        assert len(next(iter(data["prompts"].values()))) == 64
        assert json.loads(log.read_text())["summary"] == data["summary"]
    outside = tmp_path.parent / "x.json"  # a log goes where --out names it, outside the root too
    done = cli("eval", "distill", "--engine", "offline", "--out", outside, "--root", tmp_path)
    assert done.exit_code == 0, done.stderr
    assert json.loads(outside.read_text())["eval"] == "distill"


@pytest.mark.subprocess
def test_a_broken_or_empty_fixture_fails_the_gates_instead_of_passing(
    cli: Any, tmp_path: Path
) -> None:
    junk = tmp_path / "junk"
    (junk / "a").mkdir(parents=True)
    (junk / "a" / "expected.json").write_text("{")
    (junk / "b").mkdir()
    (junk / "b" / "expected.json").write_text("{}")
    for suite in ("distill", "compaction"):
        result = cli(
            "eval", suite, "--fixtures", junk, "--engine", "offline", "--json", "--root", tmp_path
        )
        assert result.exit_code == 1, (suite, result.stderr)
        assert result.json["data"]["passed"] is False


def test_an_out_folder_that_does_not_exist_is_refused_before_the_run(
    cli: Any, tmp_path: Path
) -> None:
    missing = tmp_path.parent / "no-such-folder" / "outside.json"
    result = cli("eval", "errors", "--engine", "offline", "--out", missing, "--root", tmp_path)
    assert result.exit_code == 1 and str(missing.parent) in result.stderr
    assert not missing.parent.exists() and result.stdout == ""
