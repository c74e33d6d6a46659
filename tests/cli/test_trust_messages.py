"""`trust` says what it did: trusting a project with no settings.json says there is none and
what that means; revoking a project that was not trusted says there was nothing to revoke."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_trust_without_settings_says_there_is_none(cli: Any, project: Path) -> None:
    result = cli("trust", "--root", project)
    assert result.exit_code == 0
    assert "which has no settings.json" in result.stdout
    assert "as it is now" not in result.stdout


def test_revoking_an_untrusted_project_says_nothing_was_revoked(cli: Any, project: Path) -> None:
    first = cli("trust", "--revoke", "--root", project, "--json")
    assert first.exit_code == 0 and first.json["data"]["was_trusted"] is False
    said = cli("trust", "--revoke", "--root", project).stdout
    assert said.startswith("Not trusted, so nothing to revoke:") and "No longer" not in said
    cli("trust", "--root", project)
    revoked = cli("trust", "--revoke", "--root", project, "--json")
    assert revoked.json["data"]["was_trusted"] is True
    cli("trust", "--root", project)
    assert cli("trust", "--revoke", "--root", project).stdout.startswith("No longer trusted:")


def test_trust_with_settings_says_it_is_trusted_as_it_is(cli: Any, project: Path) -> None:
    (project / "settings.json").write_text("{}")
    result = cli("trust", "--root", project)
    assert "with its settings.json as it is now" in result.stdout
