"""`compact`, `compact --suggest`, `verify-compaction` and `phase-context` through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.compaction_cases import copy_case, fingerprint
from tests.pipeline.test_verify import HAND_MADE

USAGE_KEYS = {"calls", "offline_calls", "input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", "input_tokens_estimated", "input_tokens_counted",
              "estimated_cost_usd", "avoided_cost_usd", "avoided", "max_cost_usd", "engine",
              "model"}  # fmt: skip


def test_compact_json_envelope(cli: Any, tmp_path: Path) -> None:
    root = copy_case("legion-spec-billing-exports", tmp_path)
    before = fingerprint(root)
    result = cli("compact", "3", "--root", root, "--today", "2026-11-30", "--json")
    assert result.exit_code == 0, result.stderr
    envelope = result.json
    assert set(envelope) == {"ok", "command", "data", "warnings"}
    assert envelope["ok"] is True and envelope["command"] == "compact"
    data = envelope["data"]
    assert data["path"] == ".planning/phases/03-billing-exports/03-COMPACTED.md"
    assert data["requirement_ids"] == ["BILL-01", "BILL-02", "BILL-03", "BILL-04"]
    assert (
        len(data["paths"]) == 11 and data["missing_after_repair"] == [] and data["repaired"] == []
    )
    assert data["engine"] == "offline" and data["fell_back"] is False
    assert 0.30 <= data["ratio"] <= 0.50 and data["written"] is True
    assert set(data["usage"]) == USAGE_KEYS and data["usage"]["offline_calls"] == 1
    assert (root / data["path"]).is_file() and fingerprint(root) == before
    assert "no ANTHROPIC_API_KEY" in result.stderr  # the one notice


def test_dry_run_prints_and_writes_nothing(cli: Any, tmp_path: Path) -> None:
    root = copy_case("decimal-phase", tmp_path)
    result = cli("compact", "06.1", "--root", root, "--dry-run", "--today", "2026-11-30")
    assert result.exit_code == 0
    assert result.stdout.startswith(
        "---\nphase: 06.1-cache-eviction-hotfix\ncompacted: 2026-11-30\n"
    )
    assert (
        "Would write .planning/phases/06.1-cache-eviction-hotfix/06.1-COMPACTED.md" in result.stdout
    )
    assert not list(root.rglob("*COMPACTED.md"))


def test_preconditions_and_force_from_the_command_line(cli: Any, tmp_path: Path) -> None:
    root = copy_case("phase-not-complete", tmp_path)
    refused = cli("compact", "3", "--root", root)
    assert refused.exit_code == 1 and refused.stdout == ""
    assert "error: phase 3 is not marked complete in ROADMAP.md" in refused.stderr
    forced = cli("compact", "3", "--root", root, "--force", "--json")
    assert forced.exit_code == 0 and forced.json["data"]["forced"] is True
    assert "warning: phase 3 is not marked complete" in forced.stderr
    replaced = cli("compact", "3", "--root", root, "--force")
    assert (
        replaced.exit_code == 0
        and "Wrote .planning/phases/03-results-publishing" in replaced.stdout
    )


def test_ambiguous_phase_asks_for_the_folder(cli: Any, tmp_path: Path) -> None:
    root = copy_case("same-number-milestones", tmp_path)
    roadmap = root / ".planning" / "ROADMAP.md"
    roadmap.write_text(roadmap.read_text().replace("Design Tokens", "Colour Palette"))
    result = cli("compact", "1", "--root", root, "--json")
    assert result.exit_code == 1 and result.json["ok"] is False
    assert "pass the folder name or path instead" in result.json["data"]["error"]
    assert len(result.json["data"]["candidates"]) == 3
    # by its folder: found; but the ROADMAP's phase 1 is now another name, so which of the two
    # phase-1 folders it marks complete is not known (twins are matched by name)
    by_folder = cli("compact", "01-design-tokens", "--root", root, "--dry-run")
    assert by_folder.exit_code == 1 and "not marked complete" in by_folder.stderr
    forced = cli("compact", "01-design-tokens", "--root", root, "--dry-run", "--force")
    assert forced.exit_code == 0


def test_suggest(cli: Any, tmp_path: Path) -> None:
    root = copy_case("legion-spec-billing-exports", tmp_path)
    human = cli("compact", "--suggest", "--root", root)
    assert human.exit_code == 0
    assert (
        "💡 2 completed phase(s) have uncompacted summaries: Phase 2 (1), Phase 3 (3)"
        in human.stdout
    )
    cli("compact", "3", "--root", root)
    data = cli("compact", "--suggest", "--root", root, "--json").json["data"]
    assert [p["folder"] for p in data["phases"]] == [".planning/phases/02-invoice-lifecycle"]
    assert cli("compact", "--root", root).exit_code == 2  # neither PHASE nor --suggest


def test_verify_compaction_prints_real_misses(cli: Any, tmp_path: Path) -> None:
    root = copy_case("legion-spec-billing-exports", tmp_path)
    missing = cli("verify-compaction", "3", "--root", root)
    assert missing.exit_code == 1 and "03-COMPACTED.md does not exist" in missing.stderr
    (root / ".planning/phases/03-billing-exports/03-COMPACTED.md").write_bytes(HAND_MADE.encode())
    result = cli("verify-compaction", "3", "--root", root)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        ".planning/phases/03-billing-exports/03-COMPACTED.md: FAILED; ratio 0."
    )
    assert lines[1:] == [
        "missing requirement ids: BILL-04",
        "missing paths: tests/conftest.py, alembic/versions/0009_export_schedules.py, "
        "tests/test_scheduled_exports.py, docs/BILLING.md",
        "invented requirement ids: BILL-07",
        "invented paths: src/billing/pdf.py",
        "missing sections: Agents",
        "extra sections: Conventions and Open Questions, Also Covered",
        "plans never named: 03-03",
        "missing frontmatter keys: original_summaries",
    ]
    data = cli("verify-compaction", "3", "--root", root, "--json").json["data"]
    assert data["ok"] is False and data["missing_ids"] == ["BILL-04"]


def test_verify_compaction_passes_our_own_file(cli: Any, tmp_path: Path) -> None:
    root = copy_case("gsd-frontmatter-session-auth", tmp_path)
    cli("compact", "2", "--root", root)
    result = cli("verify-compaction", "02-session-auth", "--root", root)
    assert result.exit_code == 0 and ": OK; ratio 0." in result.stdout


def test_phase_context(cli: Any, tmp_path: Path) -> None:
    root = copy_case("letter-suffix-plan", tmp_path)
    originals = cli("phase-context", "2", "--root", root, "--json").json["data"]
    assert originals["source"] == "summaries"
    assert [Path(f).name for f in originals["files"]] == [
        "02-01-SUMMARY.md", "02-01a-SUMMARY.md", "02-02-SUMMARY.md"
    ]  # fmt: skip
    cli("compact", "2", "--root", root)
    compacted = cli("phase-context", "2", "--root", root)
    assert compacted.stdout.startswith("---\nphase: 02-text-extraction\n")
    assert cli("phase-context", "2", "--root", root, "--json").json["data"]["source"] == "compacted"


def test_verify_compaction_prints_ungrounded_claims(cli: Any, tmp_path: Path) -> None:
    from tests.pipeline.test_verify import CARELESS

    root = copy_case("missing-plan-summary", tmp_path)
    (root / ".planning/phases/05-notifications/05-COMPACTED.md").write_text(CARELESS)
    result = cli("verify-compaction", "5", "--root", root)
    assert result.exit_code == 1 and ": FAILED; ratio" in result.stdout
    printed = {
        line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in result.stdout.splitlines()[1:]
    }
    assert printed["ungrounded verdicts"] == (
        "NOTF-03: PASS is not grounded (no summary of this phase reports it); use NOT VERIFIED; "
        "NOTF-03 is listed as satisfied, but no summary of this phase reports it"
    )
    assert printed["unknown plans"] == (
        "deliverable for '05-03', which is not a plan of this phase; "
        "decision for 'Plan x', which is not a plan of this phase"
    )
    assert printed["placeholders"].startswith("05-01: deliverable 'x' is a placeholder; ")
    assert "file row 'x' is not a path the summaries name" in printed["placeholders"]
    data = cli("verify-compaction", "5", "--root", root, "--json").json["data"]
    assert data["ok"] is False
    assert {p["kind"] for p in data["problems"]} == {
        "placeholder", "placeholder-change", "unknown-plan", "ungrounded-text",
        "ungrounded-verdict"}  # fmt: skip


def test_a_phase_that_is_not_there_is_the_only_line(
    cli: Any, demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no claude CLI: auto would say it falls back
    result = cli("compact", "99", "--root", demo_project)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: no folder for phase 99 under {demo_project}/.planning/phases, archive/ or milestones/"
    ]
