"""Error text is redacted wherever it goes (issue 25, point 6): what the `claude` CLI prints
(GitHub, AWS, proxy-password and Slack tokens: only `sk-ant-*` was masked) never reaches the
error line, --json or an MCP tool error; an error body cut to one line is redacted before the
cut, so no token keeps its head."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from legion_llm.app.result import CommandResult
from legion_llm.llm.claude_code.envelope import ClaudeCodeError
from legion_llm.mcp.runner import Runner
from legion_llm.memory.redact import excerpt
from tests.llm.claude_stub import StubClaude, reply
from tests.redact.samples import ALNUM, draw, p, sample


def secrets() -> dict[str, str]:
    slack = p("xo", "xb-") + "1234567890-" + draw(24, ALNUM, seed=41)
    proxy = draw(16, ALNUM, seed=42)
    return {
        "github-token": sample("github-token").secret,
        "aws-secret-key": sample("aws-secret-key").secret,
        "password": proxy,
        "slack-bot-token": slack,
    }


def said(values: dict[str, str]) -> str:
    return (
        f"fatal: push rejected for token {values['github-token']}\n"
        f"  aws_secret_access_key = {values['aws-secret-key']}\n"
        f"  proxy http://builder:{values['password']}@proxy.internal:3128 refused\n"
        f"  notify {values['slack-bot-token']} failed\n"
    )


def leaked(text: str, values: dict[str, str]) -> list[str]:
    return [kind for kind, value in values.items() if value in text]


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubClaude:
    made = StubClaude(tmp_path / "bin")
    monkeypatch.setenv("PATH", made.on_path())
    return made


@pytest.mark.subprocess
def test_the_clis_error_text_is_redacted_on_the_line_and_in_json(
    cli: Any, project: Path, stub: StubClaude
) -> None:
    values = secrets()
    stub.script(reply("stderr", stderr=said(values)))
    human = cli("llm", "selftest", "--engine", "claude-code", "--root", project)
    as_json = cli("llm", "selftest", "--engine", "claude-code", "--root", project, "--json")
    assert human.exit_code == 4 and human.stderr.startswith("error: claude exited with 1")
    assert "[REDACTED:github-token]" in human.stderr
    assert leaked(human.stdout + human.stderr + as_json.stdout + as_json.stderr, values) == []
    assert as_json.json["ok"] is False and "[REDACTED:" in as_json.json["data"]["error"]


def test_an_mcp_tool_error_is_redacted(tmp_path: Path) -> None:
    values = secrets()

    def build() -> CommandResult:
        raise ClaudeCodeError(f"Claude Code failed: {said(values)}")

    with pytest.raises(ToolError) as caught:
        Runner(tmp_path).run(build)
    assert leaked(str(caught.value), values) == [] and "[REDACTED:" in str(caught.value)


def test_any_error_line_leaving_the_cli_is_redacted(cli: Any, tmp_path: Path) -> None:
    """A warning or error that is not the LLM layer's (a path the user typed) goes through the
    same step on its way to stderr."""
    values = secrets()
    missing = tmp_path / f"x-{values['github-token']}"
    result = cli("outcomes", "recall", "--root", missing)
    assert result.exit_code == 2 or result.exit_code == 1
    assert leaked(result.stderr, values) == []


def test_an_excerpt_is_redacted_before_it_is_cut() -> None:
    token = sample("github-token").secret
    text = "x" * 150 + " " + token  # the cut at 160 falls inside the token
    line = excerpt(text, 160)
    assert token[:9] not in line and len(line) <= 160
