"""`llm check` and an explicit `--engine claude-code` through the CLI, with the stub `claude`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.llm.claude_stub import StubClaude, answer


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubClaude:
    made = StubClaude(tmp_path / "bin")
    monkeypatch.setenv("PATH", made.on_path())
    return made


def engines(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in data["engines"]}


@pytest.mark.subprocess
def test_check_lists_every_engine_and_picks_a_logged_in_claude_code(
    cli: Any, project: Path, stub: StubClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "oauth-secret-value-123")
    result = cli("llm", "check", "--root", project, "--json")
    assert result.exit_code == 0
    data = result.json["data"]
    assert data["engine"]["selected"] == "claude-code"
    rows = engines(data)
    assert rows["claude-code"]["available"] is True and rows["anthropic"]["available"] is False
    assert rows["claude-code"]["cli"]["version"] == "2.1.197"
    assert rows["claude-code"]["cli"]["auth_method"] == "claude.ai"
    assert rows["offline"]["available"] is True and rows["host"]["available"] is True
    assert rows["sampling"]["available"] is False and "legion-llm mcp" in rows["sampling"]["reason"]
    assert stub.print_calls() == []  # --version, --help and auth status only: no model call
    human = cli("llm", "check", "--root", project)
    assert "claude-code  available: claude 2.1.197" in human.stdout
    for text in (result.stdout, human.stdout, human.stderr):
        assert "oauth-secret-value-123" not in text and "someone@example.com" not in text


@pytest.mark.subprocess
def test_check_says_why_claude_code_cannot_answer(
    cli: Any, project: Path, stub: StubClaude
) -> None:
    stub.script(logged_in=False, auth_method="none")
    data = cli("llm", "check", "--root", project, "--json").json["data"]
    assert data["engine"]["selected"] == "offline"
    assert engines(data)["claude-code"]["reason"] == (
        "Claude Code is not logged in (run `claude auth login`)"
    )
    forced = cli("llm", "check", "--root", project, "--engine", "claude-code", "--json")
    assert forced.exit_code == 1 and forced.json["data"]["problems"] == [
        "error: --engine claude-code: Claude Code is not logged in (run `claude auth login`)"
    ]


@pytest.mark.subprocess
def test_check_never_asks_an_old_cli_for_auth_status(
    cli: Any, project: Path, stub: StubClaude
) -> None:
    stub.script(old=True, version="1.0.128")
    data = cli("llm", "check", "--root", project, "--json").json["data"]
    assert engines(data)["claude-code"]["reason"] == (
        "claude 1.0.128 is too old for --json-schema; update it (`claude update`)"
    )
    assert stub.print_calls() == []  # `auth status` would have been a billed prompt


def test_check_without_claude_says_so(cli: Any, project: Path) -> None:
    data = cli("llm", "check", "--root", project, "--json").json["data"]
    assert engines(data)["claude-code"] == {**engines(data)["claude-code"], "available": False,
                                            "reason": "no `claude` on PATH (set LEGION_LLM_CLAUDE)"}  # fmt: skip


@pytest.mark.subprocess
def test_explicit_claude_code_that_cannot_answer_exits_non_zero(
    cli: Any, project: Path, stub: StubClaude
) -> None:
    stub.script(logged_in=False)
    result = cli("llm", "selftest", "--engine", "claude-code", "--root", project)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "error: --engine claude-code: Claude Code is not logged in (run `claude auth login`)"
    )


@pytest.mark.subprocess
def test_explicit_claude_code_failing_mid_run_does_not_fall_back(
    cli: Any, project: Path, stub: StubClaude
) -> None:
    stub.script({"kind": "api_error", "status": 529, "message": "API Error: 529 overloaded"})
    result = cli("llm", "selftest", "--engine", "claude-code", "--root", project, "--json")
    assert result.exit_code == 4 and "overloaded (HTTP 529)" in result.stderr
    stub.script(answer({"echo": "legion", "length": 6}, cost=0.003))
    ok = cli("llm", "selftest", "--engine", "claude-code", "--root", project, "--json")
    assert ok.exit_code == 0 and ok.json["data"]["usage"]["engine"] == "claude-code"
    assert 0 < ok.json["data"]["usage"]["estimated_cost_usd"] < 0.003  # priced by our table


@pytest.mark.subprocess
def test_explicit_claude_code_answers_an_unusable_answer_offline_like_anthropic(
    cli: Any, demo_project: Path, stub: StubClaude
) -> None:
    """As with --engine anthropic: a failing engine stops the command, but one unusable answer
    (invalid after the re-ask, refused) is the offline engine's, said so, never the model's."""
    stub.script(answer({"deliverables": "none"}))  # schema-invalid, and again after the re-ask
    result = cli("compact", "3", "--engine", "claude-code", "--root", demo_project, "--json")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["engine"] == "offline" and data["fell_back"] and data["written"]
    assert {s["source"] for s in data["sections"].values()} == {"offline"}
    assert data["usage"]["engine"] == "claude-code+offline" and data["usage"]["calls"] == 2
    (notice,) = [line for line in result.stderr.splitlines() if line.startswith("notice:")]
    assert "was unusable" in notice and "did not match PhaseDigest after one re-ask" in notice
    assert len(stub.print_calls()) == 2  # the answer and its one re-ask
    assert cli("verify-compaction", "3", "--root", demo_project).exit_code == 0
