"""One secret of every kind through every write path, from the command line: the record is still
stored, every secret is a marker in the file, and the warning names kind and field only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.knowledge.read import ERRORS, read_knowledge
from legion_llm.memory.outcomes.read import read_outcomes
from tests.conftest import FIXTURES
from tests.redact.samples import KINDS, SAMPLES, everything, sample

TODAY = "2026-06-15"
SECRETS = everything()


def memory_text(root: Path) -> str:
    """Everything legion-llm writes in a project: memory folders and compacted summaries."""
    files = [
        *(root / ".planning" / "memory").glob("*.md"),
        *(root / ".mission-control" / "memory").rglob("*.md"),
        *(root / ".planning").rglob("*-COMPACTED.md"),
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def leaked(text: str) -> list[str]:
    return [s.kind for s in SAMPLES if s.secret in text]


def markers(text: str) -> set[str]:
    return {kind for kind in KINDS if f"[REDACTED:{kind}]" in text}


def assert_clean(root: Path, *outputs: str) -> None:
    written = memory_text(root)
    assert leaked(written) == []
    for output in outputs:
        assert leaked(output) == []  # nothing printed either, warnings included


@pytest.mark.subprocess
def test_outcome_summary(cli: Any, demo_project: Path) -> None:
    result = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", SECRETS, "--tags", "secrets",
                 "--root", demo_project, "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0
    assert_clean(demo_project, result.stdout, result.stderr)
    stored = read_outcomes(demo_project / ".planning/memory/OUTCOMES.md").records[-1]
    assert markers(stored.summary) == set(KINDS)  # the record is stored, readable
    (warning,) = [w for w in result.json["warnings"] if "redacted" in w]
    assert warning.startswith(
        f"warning: redacted {len(SAMPLES)} secret(s) before writing OUTCOMES.md"
    )
    assert "github-token in summary" in warning and "private-key in summary" in warning


@pytest.mark.subprocess
def test_error_signature_and_fix(cli: Any, demo_project: Path) -> None:
    signature = "psycopg.OperationalError: connection failed\n" + sample("password").text
    fix = SECRETS
    result = cli("errors", "add", "--signature", signature, "--fix", fix, "--agent", "dev",
                 "--engine", "offline", "--root", demo_project, "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert_clean(demo_project, result.stdout, result.stderr)
    record = read_knowledge(ERRORS, demo_project / ".planning/memory/ERRORS.md").records[-1]
    assert "[REDACTED:password]" in record.title and markers(record.values["fix"]) == set(KINDS)
    assert (
        "password in error_signature" in result.stderr and "aws-secret-key in fix" in result.stderr
    )


@pytest.mark.subprocess
def test_pattern_and_preference(cli: Any, demo_project: Path) -> None:
    pattern = cli("patterns", "add", "--pattern", sample("jwt").text, "--context", SECRETS,
                  "--reuse-criteria", "always", "--root", demo_project, "--today", TODAY)  # fmt: skip
    preference = cli("preferences", "add", "--decision-point", "review-verdict", "--context",
                     SECRETS, "--proposed", sample("stripe-key").text, "--user-choice",
                     sample("slack-webhook").text, "--signal", "positive", "--agent", "dev",
                     "--root", demo_project, "--today", TODAY)  # fmt: skip
    assert pattern.exit_code == preference.exit_code == 0
    assert_clean(demo_project, pattern.stdout, pattern.stderr, preference.stdout, preference.stderr)
    patterns = (demo_project / ".planning/memory/PATTERNS.md").read_text(encoding="utf-8")
    preferences = (demo_project / ".planning/memory/PREFERENCES.md").read_text(encoding="utf-8")
    assert markers(patterns) == markers(preferences) == set(KINDS)
    assert (
        "jwt in pattern" in pattern.stderr and "slack-webhook in user_choice" in preference.stderr
    )


def test_learning_title_and_body(cli: Any, demo_project: Path) -> None:
    title = "Rotate " + sample("anthropic-key").secret + " after the leak"
    result = cli("learnings", "add", "--title", title, "--body", SECRETS, "--category", "gotcha",
                 "--tags", "secrets,ci", "--confidence", "medium", "--root", demo_project,
                 "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert_clean(demo_project, result.stdout, result.stderr)
    path = result.json["data"]["path"]
    assert path == ".mission-control/memory/rotate-redacted-anthropic-key-after-the-leak.md"
    written = (demo_project / path).read_text(encoding="utf-8")
    assert "# Rotate [REDACTED:anthropic-key] after the leak" in written
    assert markers(written) == set(KINDS)
    assert "anthropic-key in title" in result.stderr


def _phase_with_secrets(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "billing"
    shutil.copytree(FIXTURES / "phases" / "legion-spec-billing-exports", root)
    summary = root / ".planning/phases/03-billing-exports/03-01-SUMMARY.md"
    one_line = " ".join(s.text for s in SAMPLES if "\n" not in s.text)
    text = summary.read_text(encoding="utf-8").replace(
        "- Void invoices are exported", f"- The export job connects with {one_line}.\n- Void invoices are exported"
    )  # fmt: skip
    summary.write_text(text, encoding="utf-8")
    return root, summary


def test_compaction_output(cli: Any, tmp_path: Path) -> None:
    root, summary = _phase_with_secrets(tmp_path)
    before = summary.read_bytes()
    result = cli("compact", "3", "--engine", "offline", "--root", root, "--today", "2026-11-30")
    assert result.exit_code == 0, result.stderr
    compacted = (root / ".planning/phases/03-billing-exports/03-COMPACTED.md").read_text(
        encoding="utf-8"
    )
    assert leaked(compacted) == [] and "[REDACTED:github-token]" in compacted
    assert "before writing 03-COMPACTED.md" in result.stderr and leaked(result.stderr) == []
    assert summary.read_bytes() == before  # the originals are never touched
    check = cli("verify-compaction", "3", "--root", root)
    assert check.exit_code == 0, check.stdout + check.stderr  # still verifies against them


def test_compaction_dry_run_shows_the_redacted_text(cli: Any, tmp_path: Path) -> None:
    root, _ = _phase_with_secrets(tmp_path)
    result = cli("compact", "3", "--engine", "offline", "--dry-run", "--root", root, "--json")
    assert result.exit_code == 0, result.stderr
    assert leaked(result.stdout) == [] and "[REDACTED:" in result.stdout


def _hand_edited_outcomes(root: Path) -> None:
    """Rows holding secrets that were written before redaction existed (or by hand)."""
    path = root / ".planning/memory/OUTCOMES.md"
    rows = [
        f"| O-{90 + n:03d} | 2026-06-0{n} | main | 5 | 05-0{n} | engineering-backend-architect | "
        f"backend | success | 4 | audit-log | Signed exports using {sample(kind).text} |\n"
        for n, kind in enumerate(("github-token", "password", "aws-secret-key"), start=1)
    ]
    path.write_text(path.read_text(encoding="utf-8") + "".join(rows), encoding="utf-8")


@pytest.mark.subprocess
@pytest.mark.parametrize("dry_run", [True, False])
def test_distillation_output(cli: Any, demo_project: Path, dry_run: bool) -> None:
    _hand_edited_outcomes(demo_project)
    before = (demo_project / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    args = ["--dry-run"] if dry_run else []
    result = cli("distill", *args, "--engine", "offline", "--root", demo_project,
                 "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    written = result.json["data"]["written"]
    assert any("[REDACTED:" in json.dumps(w) for w in written)  # the proposals held secrets
    assert leaked(result.stdout) == [] and leaked(result.stderr) == []
    patterns = demo_project / ".planning/memory/PATTERNS.md"
    if not dry_run:
        assert leaked(patterns.read_text(encoding="utf-8")) == []
    outcomes = (demo_project / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    assert outcomes == before  # distill reads outcomes, never rewrites them (scan --fix does)


def test_learnings_extracted_from_a_mission_log(cli: Any, demo_project: Path) -> None:
    mission = demo_project / ".mission-control/missions/archive/mission-2026-06-12-audit-export"
    log = mission / "log.jsonl"
    notes = "; ".join(s.text for s in SAMPLES if "\n" not in s.text)
    text = log.read_text(encoding="utf-8").replace(
        "never by created_at alone", "never by created_at alone. " + notes.replace('"', "'")
    )
    log.write_text(text, encoding="utf-8")
    result = cli("learnings", "extract", mission, "--engine", "offline", "--root", demo_project,
                 "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    written = memory_text(demo_project)
    assert leaked(written) == [] and "[REDACTED:" in written
    assert leaked(result.stdout) == [] and "redacted" in result.stderr


@pytest.mark.parametrize("dry_run", [True, False])
def test_learnings_extract_reports_no_secret_of_a_proposal_it_skips(
    cli: Any, demo_project: Path, dry_run: bool
) -> None:
    """The same failure logged twice: the second proposal is skipped as already recorded, and the
    report repeats it (in a dry run, every proposal): redacted like the one written."""
    mission = demo_project / ".mission-control/missions/archive/mission-2026-06-12-audit-export"
    secret = sample("github-token")
    event = {"ts": "2026-06-12T11:00:00Z", "event": "task_failed", "task": "T2", "attempt": 2,
             "error": f"deploy used GH_PAT={secret.secret} and failed"}  # fmt: skip
    with (mission / "log.jsonl").open("a", encoding="utf-8") as log:
        log.write(
            json.dumps(event) + "\n" + json.dumps({**event, "ts": "2026-06-12T11:05:00Z"}) + "\n"
        )
    args = ["--dry-run"] if dry_run else []
    result = cli("learnings", "extract", mission, *args, "--engine", "offline",
                 "--root", demo_project, "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert leaked(result.stdout) == [] and leaked(result.stderr) == []
    assert "[REDACTED:github-token]" in result.stdout
    if dry_run:
        assert any("(dry run)" in w for w in result.json["warnings"])
    else:
        assert leaked(memory_text(demo_project)) == []
        assert result.json["data"]["skipped"]  # the second one was there to leak


def test_a_secret_in_a_json_log_line_is_not_sent(cli: Any, demo_project: Path) -> None:
    """A mission's log.jsonl line is rendered into the prompt as JSON: an assignment's quotes are
    escaped there (`CLIENT_SECRET=\\"...\\"`, `{\\"password\\": \\"...\\"}`)."""
    mission = demo_project / ".mission-control/missions/archive/mission-2026-06-12-audit-export"
    secret, password = sample("github-token").secret[4:], "Hx7" + sample("jwt").secret[-12:]
    notes = [f'CLIENT_SECRET="{secret}" was rejected', f'login {{"password": "{password}"}} failed']
    with (mission / "log.jsonl").open("a", encoding="utf-8") as log:
        for note in notes:
            log.write(json.dumps({"ts": "2026-06-12T11:00:00Z", "event": "retry", "task": "T2",
                                  "note": note}) + "\n")  # fmt: skip
    result = cli("learnings", "extract", mission, "--prepare", "--root", demo_project,
                 "--today", TODAY, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert secret not in result.stdout and password not in result.stdout
    assert "[REDACTED:secret]" in result.stdout and "[REDACTED:password]" in result.stdout
