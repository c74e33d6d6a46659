from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.subprocess


def test_eval_errors_offline_passes_its_gates_and_writes_the_log(cli: Any, project: Path) -> None:
    result = cli(
        "eval",
        "errors",
        "--engine",
        "offline",
        "--split",
        "original",
        "--out",
        "errors-eval.json",
        "--json",
        "--root",
        project,
    )
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["passed"] is True and data["engine"] == "offline"
    original = data["splits"]["original"]
    assert original["precision"] >= 0.98 and original["fix_at_1"] >= 0.95
    assert len(data["prompt_sha256"]) == 64 and data["usage"]["calls"] == 0
    logged = json.loads((project / "errors-eval.json").read_text())
    assert logged["splits"]["original"]["recall"] == original["recall"]
    answers = original["answers"]  # the three answers, logged with the confidence that gave them
    assert answers["fix_precision"] >= 0.95 and answers["hard_negative_fix"] <= 0.05
    assert len(data["confidence"]["data_sha256"]) == 64
    assert 0 < data["confidence"]["confirm_band"] < data["confidence"]["fix_band"] <= 1


def test_eval_errors_fails_with_exit_1_when_a_gate_fails(
    cli: Any, project: Path, tmp_path: Path
) -> None:
    fixtures = tmp_path / "errors"
    fixtures.mkdir()
    (fixtures / "groups.jsonl").write_text(
        '{"group": "a", "ecosystem": "python", "root_cause": "x", "fix": "f", "confusable_with": []}\n'
        '{"group": "b", "ecosystem": "python", "root_cause": "y", "fix": "g", "confusable_with": []}\n'
    )
    rows = [("a-01", "a", "KeyError: 'HOME'"), ("a-02", "a", "totally unrelated words here"),
            ("b-01", "b", "KeyError: 'HOME' in loader"), ("b-02", "b", "ValueError: bad")]  # fmt: skip
    (fixtures / "python.jsonl").write_text(
        "".join(json.dumps({"id": i, "group": g, "text": t}) + "\n" for i, g, t in rows)
    )
    result = cli("eval", "errors", "--engine", "offline", "--fixtures", fixtures, "--root", project)
    assert result.exit_code == 1
    assert "FAILED" in result.stdout
