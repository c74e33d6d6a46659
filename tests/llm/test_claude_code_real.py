"""The real Claude Code CLI (from npm, in a temp prefix) against the loopback fake Messages API.

This proves that the argv, the environment and the envelope the engine relies on are the real
CLI's, not our guess (the stub in claude_stub.py copies them). The CLI is "logged in" with a
dummy CLAUDE_CODE_OAUTH_TOKEN (no API key anywhere), ANTHROPIC_BASE_URL points at the fake, and
HOME / CLAUDE_CONFIG_DIR are temp folders, so no real user's login, settings or history is read
or touched, and every request the CLI makes goes to 127.0.0.1 (measured with strace on 2.1.197).

The install needs npm and the registry: without them every test here is skipped with the reason.
The version is pinned to the one measured (LEGION_TEST_CLAUDE_CODE=latest tries the newest); npm's
download cache lives in the system temp folder, so a second run installs in seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.claude_code.cli import probe
from legion_llm.llm.claude_code.envelope import ClaudeCodeError, ClaudeCodeNotLoggedInError
from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import Engine, FallbackEngine, Notices
from legion_llm.llm.errors import BudgetExceededError, InvalidOutputError, RefusalError
from legion_llm.llm.factory import select_engine
from legion_llm.llm.prompts import load_prompt
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.run import header_for, offline_digest, prepare
from tests.fakes import FakeMessagesAPI, Reply

pytestmark = [pytest.mark.real_claude_cli, pytest.mark.slow, pytest.mark.subprocess]
VERSION = os.environ.get("LEGION_TEST_CLAUDE_CODE", "2.1.197")
INSTALL_TIMEOUT_S = 300
GOOD = {"echo": "legion", "length": 6}


@pytest.fixture(scope="session")
def real_claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the real Claude Code CLI cannot be installed")
    prefix = tmp_path_factory.mktemp("claude-code")
    cache = Path(tempfile.gettempdir()) / "legion-llm-test-npm-cache"  # npm's logs go there too
    env = {**os.environ, "npm_config_cache": str(cache), "npm_config_update_notifier": "false"}
    package = f"@anthropic-ai/claude-code@{VERSION}"
    quick = ["--prefer-offline", "--fetch-retries=0", "--fetch-timeout=15000"]
    try:  # a registry that does not answer is found out in seconds, not after npm's retries
        seen = subprocess.run([npm, "view", package, "version", *quick], capture_output=True,
                              text=True, timeout=60, env=env)  # fmt: skip
        if seen.returncode != 0:
            pytest.skip(f"the npm registry does not answer for {package}: {_last(seen.stderr)}")
        argv = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                "--loglevel=error", "--prefer-offline", "--fetch-retries=1", package]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                              env=env)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip(f"npm did not finish in time (registry unreachable?) for {package}")
    cli = prefix / "node_modules" / ".bin" / "claude"
    if done.returncode != 0 or not cli.exists():
        pytest.skip(f"npm could not install {package}: {_last(done.stderr)}")
    return cli


def _last(text: str) -> str:
    """npm's last error line that is not the pointer to its log file."""
    lines = [line for line in text.strip().splitlines() if "complete log" not in line]
    return (lines or ["no output"])[-1]


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as fake:
        yield fake


@pytest.fixture
def logged_in(
    real_claude: Path, api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The environment of a user with only a logged-in Claude Code, in a project folder that has
    a CLAUDE.md, and a Claude Code set up as people set it up: an MCP server, hooks and an output
    style of their own (none of which may reach, or run for, a one-shot call of ours)."""
    home = tmp_path / "home"
    user_claude_config(home / ".claude", tmp_path / "spy")
    monkeypatch.setenv("PATH", f"{real_claude.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "oauth-dummy-token-for-tests")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("MARKER-FROM-CLAUDE-MD\n", encoding="utf-8")
    monkeypatch.chdir(project)
    return project


SPY_SERVER = """
import json, pathlib, sys
pathlib.Path(sys.argv[1]).touch()
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    result = {"tools": [{"name": "spy_tool", "description": "MARKER-FROM-MCP",
                         "inputSchema": {"type": "object", "properties": {}}}]}
    if message["method"] == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "spy", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def user_claude_config(config: Path, spy: Path) -> None:
    """A user's Claude Code folder: a user-scope MCP server, two hooks that print context (and
    leave a file when they run), an output style. Each would add text to our call."""
    spy.mkdir()
    (spy / "server.py").write_text(SPY_SERVER, encoding="utf-8")
    server = {"type": "stdio", "command": sys.executable,
              "args": [str(spy / "server.py"), str(spy / "mcp-started")]}  # fmt: skip
    hook = [{"hooks": [{"type": "command",
                        "command": f"touch {spy / 'hook-ran'}; echo MARKER-FROM-HOOK"}]}]  # fmt: skip
    settings = {"hooks": {"SessionStart": hook, "UserPromptSubmit": hook}, "outputStyle": "Spy"}
    (config / "output-styles").mkdir(parents=True)
    (config / "output-styles/spy.md").write_text(
        "---\nname: Spy\ndescription: spy\n---\nMARKER-FROM-OUTPUT-STYLE\n", encoding="utf-8"
    )
    (config / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (config / ".claude.json").write_text(json.dumps({"mcpServers": {"spy": server}}), "utf-8")


def engine(choice: str = "claude-code", **env: str) -> Engine:
    merged = {**os.environ, **env}
    config = resolve_llm_config({}, env=merged)
    return select_engine(choice, config, env=merged, notices=Notices(sink=None))


def bare(**env: str) -> Engine:
    """The ClaudeCodeEngine without the offline engine that answers an unusable answer."""
    chosen = engine(**env)
    assert isinstance(chosen, FallbackEngine)
    return chosen.primary


def structured_output(api: FakeMessagesAPI, output: dict[str, Any]) -> None:
    api.responder = lambda request: Reply.tool(output, name="StructuredOutput")


def test_probe_reads_version_help_and_auth_status(logged_in: Path) -> None:
    status = probe(resolve_llm_config({}, env=dict(os.environ)))
    assert status.available and status.version == VERSION.replace("latest", status.version or "")
    assert status.json_schema and status.logged_in and status.auth_method == "oauth_token"


def test_probe_sees_a_logged_out_cli(logged_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_OAUTH_TOKEN")
    status = probe(resolve_llm_config({}, env=dict(os.environ)))
    assert status.logged_in is False and status.auth_method == "none"
    assert status.problem == "Claude Code is not logged in (run `claude auth login`)"


def test_a_structured_answer_through_the_real_cli(logged_in: Path, api: FakeMessagesAPI) -> None:
    structured_output(api, GOOD)
    chosen = engine()
    result = chosen.ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert result.output == SelfTestReply(**GOOD) and result.engine == "claude-code"
    calls = api.calls()
    assert len(calls) == 1  # no title request, no second turn
    body = calls[0].body
    prompt = load_prompt(PROMPT).render({"word": "legion"})
    assert body["stream"] is True and body["max_tokens"] == 4096
    assert body["system"][-1]["text"] == prompt.system  # ours, after the CLI's one-line preamble
    (message,) = [m for m in body["messages"] if m["role"] == "user"]  # 2.1.3xx adds a "system" one
    assert message["content"][-1]["text"] == prompt.user  # stdin, as the last user block
    assert "MARKER-FROM" not in json.dumps(body)  # no CLAUDE.md, MCP tool, hook or output style
    spy = logged_in.parent / "spy"
    assert not (spy / "mcp-started").exists() and not (spy / "hook-ran").exists()
    assert "cache_control" not in json.dumps(body)  # DISABLE_PROMPT_CACHING: no 2x cache write
    (tool,) = [t for t in body["tools"] if not t.get("defer_loading")]  # 2.1.3xx: a placeholder
    assert tool["name"] == "StructuredOutput" and tool["input_schema"]["required"] == [
        "echo",
        "length",
    ]
    assert body["output_config"]["effort"] == "low"
    assert calls[0].headers["authorization"] == "Bearer oauth-dummy-token-for-tests"
    assert "x-api-key" not in calls[0].headers
    billed = api.total_usage()
    assert (
        result.usage.input_tokens
        == billed["input_tokens"]
        + billed["cache_read_input_tokens"]
        + billed["cache_creation_input_tokens"]
    )
    assert result.usage.output_tokens == billed["output_tokens"]
    assert result.usage.calls == 1 and result.usage.estimated_cost_usd > 0


def test_the_real_budget_stop(logged_in: Path, api: FakeMessagesAPI) -> None:
    api.responder = lambda request: Reply.tool(
        GOOD, name="StructuredOutput", usage={"input_tokens": 2_000_000, "output_tokens": 10}
    )
    chosen = engine(LEGION_LLM_MAX_COST="0.5")
    with pytest.raises(
        BudgetExceededError, match=r"Claude Code stopped at its --max-budget-usd of \$0.5000"
    ):
        chosen.ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert chosen.meter.total.estimated_cost_usd > 0.1  # what the CLI spent is reported


def test_a_model_that_never_fills_the_schema_costs_one_re_ask(
    logged_in: Path, api: FakeMessagesAPI
) -> None:
    structured_output(api, {"echo": "legion", "length": "six"})  # never the schema's integer
    chosen = bare()
    with pytest.raises(InvalidOutputError, match=r"gave up on output matching the schema"):
        chosen.ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert len(api.calls()) == 2  # the CLI's own default is 5 paid attempts
    assert chosen.meter.total.calls == 1 and chosen.meter.total.output_tokens > 0  # recorded


@pytest.mark.parametrize(
    ("status", "expected"),
    [(529, r"overloaded \(HTTP 529\)"), (429, r"rate-limited \(HTTP 429\)")],
)  # fmt: skip
def test_real_api_errors(logged_in: Path, api: FakeMessagesAPI, status: int, expected: str) -> None:
    api.responder = lambda request: Reply.error(status)
    with pytest.raises(ClaudeCodeError, match=expected):
        engine(LEGION_LLM_MAX_ATTEMPTS="1").ask(SelfTestReply, PROMPT, {"word": "legion"})


def test_a_real_refusal_is_a_refusal(logged_in: Path, api: FakeMessagesAPI) -> None:
    api.responder = lambda request: Reply.text("I can't help with that.", stop_reason="refusal")
    with pytest.raises(RefusalError, match=r"^Claude Code's model refused prompt 'selftest'"):
        bare(LEGION_LLM_MAX_ATTEMPTS="1").ask(SelfTestReply, PROMPT, {"word": "legion"})


def test_real_refused_login(logged_in: Path, api: FakeMessagesAPI) -> None:
    api.responder = lambda request: Reply.error(401, message="invalid bearer token")
    with pytest.raises(ClaudeCodeNotLoggedInError, match="login was refused"):
        engine(LEGION_LLM_MAX_ATTEMPTS="1").ask(SelfTestReply, PROMPT, {"word": "legion"})


def test_compact_on_the_demo_with_only_claude_code(
    logged_in: Path, api: FakeMessagesAPI, demo_project: Path, cli: Any
) -> None:
    phase = find_phase(demo_project, "3")
    prep = prepare(phase)
    digest = offline_digest(prep, header_for(prep, date(2026, 6, 15)))
    structured_output(api, digest.model_dump())
    result = cli("compact", "3", "--root", demo_project, "--today", "2026-06-15", "--json")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["engine"] == "claude-code" and data["written"] is True and not data["fell_back"]
    assert data["usage"]["engine"] == "claude-code" and data["usage"]["estimated_cost_usd"] > 0
    assert (demo_project / data["path"]).is_file()
    assert "ANTHROPIC_API_KEY" not in os.environ and len(api.calls()) >= 1
