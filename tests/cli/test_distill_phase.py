"""`distill --phase`: a phase's summaries alone through the command line; bad input is one line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "fixtures" / "demo-project"


def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root)
    return root


def test_a_phase_is_distilled_without_the_outcome_log(cli: Any, tmp_path: Path) -> None:
    root = demo(tmp_path)
    (root / ".planning/memory/OUTCOMES.md").unlink()
    result = cli("distill", "--phase", "3", "--engine", "offline", "--dry-run", "--root", root,
                 "--json")  # fmt: skip
    data = result.json["data"]
    assert result.exit_code == 0 and data["candidates"] == [] and data["plans"]
    assert data["written"] and all(set(w["source"].split(", ")) <= set(data["plans"])
                                   for w in data["written"])  # fmt: skip
    assert (
        data["usage"]["engine"] == "offline"
        and not (root / ".planning/memory/PATTERNS.md").exists()
    )


def test_a_phase_that_does_not_exist_is_one_line(cli: Any, tmp_path: Path) -> None:
    result = cli("distill", "--phase", "9", "--engine", "offline", "--root", demo(tmp_path))
    assert result.exit_code != 0 and len(result.stderr.strip().split("\n")) == 1
    assert result.stderr.startswith("error: no folder for phase 9")


def test_the_host_route_says_a_phase_needs_an_engine(cli: Any, tmp_path: Path) -> None:
    result = cli("distill", "--phase", "3", "--prepare", "--root", demo(tmp_path))
    assert result.exit_code != 0 and result.stderr.strip() == (
        "error: --phase runs with an engine (offline, anthropic, claude-code); the host route "
        "distils OUTCOMES.md and the summaries it names"
    )


def test_without_an_outcome_log_distill_says_where_patterns_are(cli: Any, tmp_path: Path) -> None:
    root = demo(tmp_path)
    (root / ".planning/memory/OUTCOMES.md").unlink()
    result = cli("distill", "--engine", "offline", "--root", root, "--json")
    assert result.exit_code == 0 and result.json["data"]["written"] == []
    assert result.json["warnings"] == [
        "no OUTCOMES.md: `distill --phase N` distils a phase's plan summaries"
    ]


def test_the_corpus_eval_runs_directly_not_as_a_batch(cli: Any, tmp_path: Path) -> None:
    result = cli("eval", "distill", "--corpus", tmp_path, "--batch", "--root", tmp_path)
    assert result.exit_code == 1 and result.stderr.strip() == (
        "error: eval distill --corpus runs directly: leave out --batch and --wait"
    )
