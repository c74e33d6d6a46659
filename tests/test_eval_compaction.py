"""`legion-llm eval compaction`: pure scorers, gates, the offline run over every fixture phase."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.evals.compaction import (
    DEFAULT_GATES,
    fenced_share,
    gate_failures,
    grounding_scores,
    id_recall,
    path_recall,
    plan_coverage,
    ratio_gate,
    run_compaction_eval,
    section_completeness,
)
from legion_llm.llm.engine import Notices, OfflineEngine
from legion_llm.pipeline.compact.ground import Problem
from tests.conftest import FIXTURES

TODAY = date(2026, 11, 30)


@pytest.fixture(scope="module")
def offline_run() -> Any:
    return run_compaction_eval(OfflineEngine(notices=Notices(sink=None)), today=TODAY)


def test_offline_eval_passes_every_gate(offline_run: Any) -> None:
    assert [c.error for c in offline_run.cases] == [None] * len(offline_run.cases)
    assert offline_run.passed, [(c.name, c.failed_gates) for c in offline_run.cases]
    summary = offline_run.summary()
    assert summary["cases"] >= 12 and summary["passed"] == summary["cases"]
    assert summary["id_recall_min"] == summary["path_recall_min"] == 1.0
    assert summary["invented_total"] == 0
    for name in ("ungrounded_verdicts", "placeholder_cells", "unknown_plans",
                 "deliverables_without_overlap"):  # fmt: skip
        assert summary[f"{name}_total"] == 0, name
    assert summary["cases_with_offline_sections"] == 0  # the offline text needs no fallback
    for case in offline_run.cases:
        s = case.scores
        assert s["extraction_exact"] and s["section_completeness"] == s["plan_coverage"] == 1.0
        if s["tokens_original"] >= 1500 and s["log_share"] <= 0.5:
            assert 0.30 <= s["ratio"] <= 0.50, case.name
    large = next(c for c in offline_run.cases if c.name == "very-large-phase")
    assert large.scores["log_share"] > 0.9 and large.scores["ratio"] < 0.05


def test_recall_scorers() -> None:
    text = "- R1.1: PASS\n- R1.2\n- R1.3 R1.4 | `src/a.py` | and lib/src/b.py"
    assert id_recall(["R1.1–R1.4", "R1.1"], text) == 1.0
    assert id_recall(["R1", "R1.1"], text) == 0.5  # R1 is not inside R1.1
    assert path_recall(["src/a.py", "src/b.py"], text) == 0.5
    assert id_recall([], "") == path_recall([], "") == 1.0


def test_shape_scorers() -> None:
    text = "## Deliverables\n- 03-01 x\n## Decisions\n## Files Modified (table)\n## Agents\n"
    assert section_completeness(text) == 0.8
    assert plan_coverage(["03-01", "03-01a", "03-02"], text) == pytest.approx(1 / 3)
    share = fenced_share(["a b\n```\nx y z w\n```\n"], lambda t: len(t.split()))
    assert share == pytest.approx(6 / 8)


@pytest.mark.parametrize(
    ("ratio", "tokens", "log_share", "failure"),
    [
        (0.41, 2000, 0.1, None),
        (0.29, 2000, 0.1, "ratio 0.290 outside 0.3-0.5"),
        (0.52, 2000, 0.1, "ratio 0.520 outside 0.3-0.5"),
        (0.70, 1200, 0.1, None),  # too small to gate
        (0.02, 90000, 0.96, None),  # log-dominated: no lower bound
        (0.55, 90000, 0.96, "ratio 0.550 above 0.5 (log-dominated phase)"),
    ],
)
def test_ratio_gate(ratio: float, tokens: int, log_share: float, failure: str | None) -> None:
    assert ratio_gate(ratio, tokens, log_share, DEFAULT_GATES) == failure


def test_gate_failures_name_every_broken_gate() -> None:
    scores = {"id_recall": 0.75, "path_recall": 1.0, "invented": 2, "extraction_exact": False,
              "ratio": 0.6, "tokens_original": 3000, "log_share": 0.0}  # fmt: skip
    assert gate_failures(scores, DEFAULT_GATES, offline=True) == [
        "id recall 0.750", "2 invented id(s)/path(s)", "extraction differs from expected.json",
        "ratio 0.600 outside 0.3-0.5",
    ]  # fmt: skip
    assert "ratio 0.600 outside 0.3-0.5" not in gate_failures(scores, DEFAULT_GATES, offline=False)


def test_grounding_scores_and_their_gates() -> None:
    problems = [Problem("ungrounded-verdict", "verification", "m", id="R1"),
                Problem("placeholder", "files", "m", path="x"),
                Problem("placeholder", "deliverables", "m", plan="01-01"),
                Problem("unknown-plan", "decisions", "m", plan="x"),
                Problem("wrong-plan", "deliverables", "m", plan="01-02"),
                Problem("ungrounded-text", "decisions", "m", plan="01-01")]  # fmt: skip
    scores = grounding_scores(problems)
    assert scores == {"ungrounded_verdicts": 1, "placeholder_cells": 2, "unknown_plans": 1,
                      "deliverables_without_overlap": 1}  # fmt: skip
    base = {"id_recall": 1.0, "path_recall": 1.0, "invented": 0, "extraction_exact": True}
    for offline in (True, False):  # the grounding gates hold for every engine
        failed = gate_failures({**base, **scores, "ratio": 0.4, "tokens_original": 10,
                                "log_share": 0.0}, DEFAULT_GATES, offline=offline)  # fmt: skip
        assert failed == ["1 ungrounded verdict(s)", "2 placeholder cell(s)", "1 unknown plan(s)",
                          "1 deliverable(s) without overlap with their plan"]  # fmt: skip


def broken_dataset(tmp_path: Path) -> Path:
    root = tmp_path / "fixtures"
    for name in ("decimal-phase", "paths-zoo", "requirement-id-styles"):
        shutil.copytree(FIXTURES / "phases" / name, root / name)
    # a case whose phase does not exist: an error for that case only
    (root / "paths-zoo" / "expected.json").write_text(
        (root / "paths-zoo" / "expected.json").read_text().replace('"phase": "4"', '"phase": "9"')
    )
    # a case whose ground truth names an id the phase never had: a recall gate failure
    exp = json.loads((root / "decimal-phase" / "expected.json").read_text())
    exp["requirement_ids"].append("CACHE-09")
    (root / "decimal-phase" / "expected.json").write_text(json.dumps(exp))
    return root


def test_one_failing_case_never_aborts_the_run(tmp_path: Path) -> None:
    run = run_compaction_eval(OfflineEngine(notices=Notices(sink=None)), broken_dataset(tmp_path),
                              today=TODAY)  # fmt: skip
    by_name = {c.name: c for c in run.cases}
    assert (
        by_name["paths-zoo"].error
        == "InputError: no folder for phase 9 under "
        + str(tmp_path / "fixtures" / "paths-zoo" / ".planning" / "phases")
        + ", archive/ or milestones/"
    )
    assert "id recall 0.667" in by_name["decimal-phase"].failed_gates
    assert by_name["requirement-id-styles"].passed
    assert not run.passed


@pytest.mark.subprocess
def test_cli_writes_the_log_and_fails_on_a_gate(cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    result = cli("eval", "compaction", "--fixtures", broken_dataset(tmp_path), "--out", log,
                 "--engine", "offline", "--json", "--root", tmp_path)  # fmt: skip
    assert result.exit_code == 1
    envelope = result.json
    assert envelope["ok"] is False and envelope["command"] == "eval compaction"
    saved = json.loads(log.read_text())
    assert saved["engine"] == "offline" and saved["model"] is None
    assert len(saved["prompts"]["compact-phase"]) == 64
    assert saved["usage"]["offline_calls"] == 2 and saved["usage"]["calls"] == 0
    assert saved["git_commit"] is None or len(saved["git_commit"]) == 40
    assert [c["name"] for c in saved["cases"]] == [
        "decimal-phase",
        "paths-zoo",
        "requirement-id-styles",
    ]
    assert saved["cases"][2]["scores"]["id_recall"] == 1.0 and saved["cases"][2]["passed"]


@pytest.mark.subprocess
def test_cli_human_table_for_a_passing_run(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "fixtures"
    shutil.copytree(FIXTURES / "phases" / "letter-suffix-plan", root / "letter-suffix-plan")
    result = cli("eval", "compaction", "--fixtures", root, "--out", tmp_path / "l.json",
                 "--engine", "offline", "--root", tmp_path)  # fmt: skip
    assert result.exit_code == 0
    assert "Compaction eval" in result.stdout and "letter-suffix-plan" in result.stdout
    assert "1/1 cases pass, all gates pass" in result.stdout
