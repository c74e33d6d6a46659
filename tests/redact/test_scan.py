"""`legion-llm scan [--fix]`: file, line and kind of each secret already written (never the
value), exit 1 until fixed; --fix changes only the secrets' own characters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import trust_project
from tests.redact.samples import SAMPLES, sample
from tests.redact.test_write_paths import leaked

ROW = "| O-001 | 2026-03-01 | main | 1 | 01-01 | dev | backend | success | 3 | api | {} |"
HEADER = (
    "# Outcomes\n\n| ID | Date | Branch | Phase | Plan | Agent | Task Type | Outcome | "
    "Importance | Tags | Summary |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
)


def seeded(project: Path) -> dict[str, Path]:
    """Memory files with secrets in them, as a careless writer (or an old version) left them."""
    memory = project / ".planning/memory"
    memory.mkdir(parents=True)
    outcomes = memory / "OUTCOMES.md"
    outcomes.write_bytes(  # CRLF line endings and a byte-order mark must survive --fix
        ("\ufeff" + HEADER + ROW.format(sample("github-token").text) + "\n")
        .replace("\n", "\r\n")
        .encode("utf-8")
    )
    learning = project / ".mission-control/memory/ci.md"
    learning.parent.mkdir(parents=True)
    learning.write_text(
        "---\ntags:\n  - ci\nsource: manual\nextractedAt: 2026-03-01T00:00:00Z\n"
        "confidence: medium\ncategory: gotcha\n---\n\n# CI secrets\n\n"
        + sample("private-key").text
        + "\n",
        encoding="utf-8",
    )
    phase = project / ".planning/phases/01-core"
    phase.mkdir(parents=True)
    compacted = phase / "01-COMPACTED.md"
    compacted.write_text(f"# Phase 1\n\n- {sample('password').text}\n", encoding="utf-8")
    original = phase / "01-01-SUMMARY.md"  # not ours: never scanned, never changed
    original.write_text(f"# 01-01\n\n{sample('stripe-key').text}\n", encoding="utf-8")
    return {
        "outcomes": outcomes,
        "learning": learning,
        "compacted": compacted,
        "original": original,
    }


def test_a_clean_project_passes(cli: Any, demo_project: Path) -> None:
    result = cli("scan", "--root", demo_project)
    assert result.exit_code == 0
    assert "No secrets found in 4 memory file(s)." in result.stdout


def test_lists_file_line_kind_and_exits_1(cli: Any, project: Path) -> None:
    seeded(project)
    result = cli("scan", "--root", project)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:3] == [
        ".mission-control/memory/ci.md:13: private-key",
        ".planning/memory/OUTCOMES.md:5: github-token",
        ".planning/phases/01-core/01-COMPACTED.md:3: password",
    ]
    assert "run `legion-llm scan --fix`" in result.stdout
    assert leaked(result.stdout + result.stderr) == []


def test_json_envelope(cli: Any, project: Path) -> None:
    seeded(project)
    result = cli("scan", "--root", project, "--json")
    assert result.exit_code == 1
    envelope = result.json
    assert envelope["ok"] is False and envelope["command"] == "scan"
    assert envelope["data"]["total"] == 3 and envelope["data"]["files_scanned"] == 3
    assert {f["kind"] for f in envelope["data"]["findings"]} == {
        "private-key",
        "github-token",
        "password",
    }
    assert set(envelope["data"]["findings"][0]) == {"path", "line", "kind"}
    assert leaked(json.dumps(envelope)) == []


def test_fix_redacts_in_place_and_changes_nothing_else(cli: Any, project: Path) -> None:
    files = seeded(project)
    before = {name: path.read_bytes() for name, path in files.items()}
    result = cli("scan", "--fix", "--root", project)
    assert result.exit_code == 0, result.stdout
    assert "Redacted 3 secret(s) in 3 file(s)." in result.stdout
    token, key, url = sample("github-token"), sample("private-key"), sample("password")
    expected = {
        "outcomes": before["outcomes"].replace(token.secret.encode(), b"[REDACTED:github-token]"),
        "learning": before["learning"].replace(key.secret.encode(), b"[REDACTED:private-key]"),
        "compacted": before["compacted"].replace(url.secret.encode(), b"[REDACTED:password]"),
        "original": before["original"],
    }
    assert {name: path.read_bytes() for name, path in files.items()} == expected
    assert not list(project.rglob("*.tmp"))
    again = cli("scan", "--root", project)
    assert again.exit_code == 0 and "No secrets found in 3 memory file(s)." in again.stdout


def test_allow_list_is_honoured(cli: Any, project: Path) -> None:
    files = seeded(project)
    (project / "settings.json").write_text(
        json.dumps({"memory": {"redact": {"allow": ["gh" + "p_\\w+", "-----BEGIN RSA[\\s\\S]*?END RSA PRIVATE KEY-----", "postgres://\\S+"]}}}),
        encoding="utf-8",
    )  # fmt: skip
    untrusted = cli("scan", "--root", project)  # a cloned repository cannot hide its secrets
    assert untrusted.exit_code == 1 and "github-token" in untrusted.stdout
    assert "settings.json of this project is not trusted" in untrusted.stderr
    assert "memory.redact.allow keeps text that redaction would remove" in untrusted.stderr
    trust_project(project)
    result = cli("scan", "--fix", "--root", project)
    assert result.exit_code == 0 and "No secrets found" in result.stdout
    assert sample("github-token").secret in files["outcomes"].read_text(encoding="utf-8")


def test_a_file_that_is_not_text_is_named_and_skipped(cli: Any, project: Path) -> None:
    seeded(project)
    (project / ".planning/memory/RETRO.md").write_bytes(b"\xff\xfe\x00bad")
    result = cli("scan", "--root", project)
    assert result.exit_code == 1
    assert "warning: .planning/memory/RETRO.md was not scanned (not UTF-8 text)" in result.stderr


def test_every_sample_kind_is_found_by_scan(cli: Any, project: Path) -> None:
    memory = project / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "ERRORS.md").write_text("\n\n".join(s.text for s in SAMPLES) + "\n", "utf-8")
    result = cli("scan", "--root", project, "--json")
    kinds = [f["kind"] for f in result.json["data"]["findings"]]
    assert kinds == [s.kind for s in SAMPLES]


def test_one_bad_byte_hides_no_secret_and_fix_keeps_that_byte(cli: Any, project: Path) -> None:
    """A stray Latin-1 byte in a memory file must not turn `scan` into a green light."""
    memory = project / ".planning/memory"
    memory.mkdir(parents=True)
    patterns = memory / "PATTERNS.md"
    token = sample("github-token")
    patterns.write_bytes(b"# Patterns\n\ncaf\xe9 notes\n" + token.text.encode() + b"\n")
    found = cli("scan", "--root", project, "--json")
    assert found.exit_code == 1
    assert found.json["data"]["findings"] == [
        {"path": ".planning/memory/PATTERNS.md", "line": 4, "kind": "github-token"}
    ]
    assert "PATTERNS.md line 3 is not UTF-8 text (byte 0xe9)" in found.stderr
    fixed = cli("scan", "--fix", "--root", project)
    assert fixed.exit_code == 0, fixed.stderr
    assert patterns.read_bytes() == (
        b"# Patterns\n\ncaf\xe9 notes\n" + token.redacted.encode() + b"\n"
    )


def test_a_file_that_cannot_be_scanned_fails_the_gate(cli: Any, project: Path) -> None:
    memory = project / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "RETRO.md").write_bytes(b"\xff\xfe\x00bad")
    result = cli("scan", "--root", project, "--json")
    assert result.exit_code == 1  # CI must not pass a file it did not look at
    assert result.json["data"]["unscanned"] == [".planning/memory/RETRO.md"]


def test_a_symlinked_file_or_folder_is_listed_as_unscanned(
    cli: Any, project: Path, tmp_path: Path
) -> None:
    """Issue 25, point 12: a symlinked COMPACTED.md was neither scanned nor listed; exit 0."""
    seeded(project)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / "03-COMPACTED.md"
    target.write_text(sample("github-token").text + "\n", encoding="utf-8")
    phase = project / ".planning/phases/03-more"
    phase.mkdir(parents=True)
    (phase / "03-COMPACTED.md").symlink_to(target)
    (project / ".planning/phases/04-linked").symlink_to(outside, target_is_directory=True)
    result = cli("scan", "--root", project, "--json")
    data = result.json["data"]
    assert result.exit_code == 1 and data["clean"] is False
    assert data["unscanned"] == [".planning/phases/03-more/03-COMPACTED.md",
                                 ".planning/phases/04-linked"]  # fmt: skip
    assert any(
        "03-COMPACTED.md is a symbolic link; not followed" in w for w in result.json["warnings"]
    )
    assert target.read_text(encoding="utf-8").startswith(sample("github-token").text)
