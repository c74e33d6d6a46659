"""settings.json memory.redact: on by default, `allow` keeps what it matches, `enabled: false` is
the decision of the user's own settings or of a project they trusted (warned about on every
write), bad values fall back with a warning. An untrusted project's allow list and switch are
ignored with one warning (issue 25, point 11)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.config import load_settings
from legion_llm.memory.redact import project_redactor
from tests.conftest import trust_project
from tests.redact.samples import sample


def settings_file(root: Path, redact: Any, *, trusted: bool = True) -> Path:
    path = root / "settings.json"
    path.write_text(json.dumps({"memory": {"redact": redact}}), encoding="utf-8")
    if trusted:
        trust_project(root)
    return path


def test_on_by_default(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "settings.json")
    assert settings.redact_enabled is True and settings.redact_allow == ()
    assert project_redactor(tmp_path).text(sample("npm-token").text) == sample("npm-token").redacted


def test_bad_values_fall_back_with_one_warning_each(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"allow": ["ok\\d+", "(unclosed", 7], "enabled": "no"})
    settings = load_settings(path)
    assert settings.redact_allow == ("ok\\d+",) and settings.redact_enabled is True
    assert settings.warnings == (
        "Warning: settings.json memory.redact.enabled must be true or false; using true.",
        "Warning: settings.json memory.redact.allow[1] is not a valid regular expression "
        "(missing ), unterminated subpattern at position 0); ignored.",
        "Warning: settings.json memory.redact.allow[2] must be a non-empty string; ignored.",
    )
    not_object = load_settings(settings_file(tmp_path, ["x"]))
    assert not_object.warnings == (
        "Warning: settings.json memory.redact must be an object; using defaults.",
    )


@pytest.mark.subprocess
def test_allow_list_keeps_a_store_verbatim(cli: Any, demo_project: Path) -> None:
    kept = sample("aws-access-key-id")
    settings_file(demo_project, {"allow": [kept.secret]})
    text = f"{kept.text}; {sample('npm-token').text}"
    result = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", text, "--root", demo_project)  # fmt: skip
    stored = (demo_project / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    assert result.exit_code == 0
    assert kept.secret in stored and sample("npm-token").secret not in stored
    assert "npm-token in summary" in result.stderr and "aws-access-key-id" not in result.stderr


@pytest.mark.subprocess
def test_switched_off_by_the_project_writes_as_given_and_says_so(
    cli: Any, demo_project: Path
) -> None:
    settings_file(demo_project, {"enabled": False})
    token = sample("github-token")
    result = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", token.text, "--root", demo_project)  # fmt: skip
    stored = (demo_project / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    assert result.exit_code == 0 and token.secret in stored
    assert "1 secret(s) written to OUTCOMES.md as given (github-token in summary)" in result.stderr
    assert token.secret not in result.stderr
    scanned = cli("scan", "--root", demo_project)  # the switch does not blind the scan
    assert scanned.exit_code == 1 and "github-token" in scanned.stdout
