"""`distill --phase`: a phase's summaries alone through the command line; bad input is one line."""

from __future__ import annotations

import json
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


def test_the_host_route_distils_the_named_phase_and_its_ticket_keeps_it(
    cli: Any, tmp_path: Path
) -> None:
    root = demo(tmp_path)
    (root / ".planning/memory/OUTCOMES.md").unlink()  # the phase's summaries alone
    prepared = cli("distill", "--phase", "3", "--prepare", "--root", root, "--json")
    assert prepared.exit_code == 0, prepared.stderr
    request = prepared.json["data"]
    assert "03-01" in request["inputs"] and "03-02" in request["inputs"]
    proposal = tmp_path / "proposal.json"
    proposal.write_text(json.dumps({"ticket": request["ticket"], "proposal": {"patterns": []}}))
    elsewhere = cli("distill", "--phase", "1", "--proposal", proposal, "--root", root)
    assert elsewhere.exit_code != 0 and elsewhere.stderr.strip() == (
        "error: the ticket was prepared with --phase 3, this submit has --phase 1"
    )
    same = cli("distill", "--proposal", proposal, "--root", root, "--json")  # the ticket's phase
    assert same.exit_code == 0, same.stderr


def test_without_an_outcome_log_distill_says_where_patterns_are(cli: Any, tmp_path: Path) -> None:
    root = demo(tmp_path)
    (root / ".planning/memory/OUTCOMES.md").unlink()
    result = cli("distill", "--engine", "offline", "--root", root, "--json")
    assert result.exit_code == 0 and result.json["data"]["written"] == []
    assert result.json["warnings"] == [
        "no OUTCOMES.md here: name the phases whose plan summaries to distil"
    ]


def test_the_corpus_eval_runs_directly_not_as_a_batch(cli: Any, tmp_path: Path) -> None:
    result = cli("eval", "distill", "--corpus", tmp_path, "--batch", "--root", tmp_path)
    assert result.exit_code == 1 and result.stderr.strip() == (
        "error: eval distill --corpus runs directly: leave out --batch and --wait"
    )
