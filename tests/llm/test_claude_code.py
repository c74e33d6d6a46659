"""The claude-code engine against a stub `claude` that follows the real CLI's contract."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.claude_code.envelope import (
    ClaudeCodeError,
    ClaudeCodeNotLoggedInError,
    ClaudeCodeSetupError,
    ClaudeCodeTooOldError,
)
from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import Engine, FallbackEngine, Notices, OfflineEngine
from legion_llm.llm.errors import (
    BudgetExceededError,
    InvalidOutputError,
    NoToolCallError,
    RefusalError,
)
from legion_llm.llm.factory import select_engine
from legion_llm.llm.pricing import DEFAULT_MODEL, estimate_cost, model_info
from legion_llm.llm.prompts import load_prompt
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from tests.llm.claude_stub import StubClaude, answer, option, reply

pytestmark = pytest.mark.subprocess

GOOD = {"echo": "legion", "length": 6}
FUTURE = "claude-future-9"  # a model pricing.py does not know: the CLI's own cost stands


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubClaude:
    made = StubClaude(tmp_path / "bin")
    monkeypatch.setenv("PATH", made.on_path())
    return made


def engine(choice: str = "claude-code", **env: str) -> Engine:
    config = resolve_llm_config({}, env={**os.environ, **env})
    return select_engine(choice, config, env={**os.environ, **env}, notices=Notices(sink=None))


def bare(**env: str) -> Engine:
    """The ClaudeCodeEngine itself: `--engine claude-code` wraps it so that an unusable answer
    is the offline engine's (tests/llm/test_claude_code_cli.py); here its own errors are seen."""
    chosen = engine(**env)
    assert isinstance(chosen, FallbackEngine) and chosen.explicit
    return chosen.primary


def ask(chosen: Engine, word: str = "legion") -> Any:
    return chosen.ask(SelfTestReply, PROMPT, {"word": word})


def test_a_success_follows_the_real_argv_and_reports_the_cost(stub: StubClaude) -> None:
    stub.script(answer(GOOD, cost=0.0123, **{"in": 1200, "out": 80, "cache_read": 300}))
    chosen = engine()
    result = ask(chosen)
    assert result.output == SelfTestReply(**GOOD) and result.engine == "claude-code"
    ours = estimate_cost(model_info(DEFAULT_MODEL), input_tokens=1200, output_tokens=80,
                         cache_read_input_tokens=300)  # fmt: skip
    assert result.usage.estimated_cost_usd == pytest.approx(ours)  # our table knows the model
    assert (result.usage.calls, result.usage.input_tokens, result.usage.output_tokens) == (
        1,
        1200,
        80,
    )
    assert result.usage.cache_read_input_tokens == 300
    call = stub.print_calls()[0]
    argv = call["argv"]
    assert argv[:4] == ["-p", "--output-format", "json", "--json-schema"]
    assert option(argv, "--model") == DEFAULT_MODEL and option(argv, "--tools") == ""
    assert "--no-session-persistence" in argv and "--max-budget-usd" not in argv
    # the user's MCP servers, hooks and output style stay out (the real CLI: test_claude_code_real)
    assert "--strict-mcp-config" in argv and "--mcp-config" not in argv
    assert json.loads(option(argv, "--settings")) == {"disableAllHooks": True,
                                                      "outputStyle": "default"}  # fmt: skip
    prompt = load_prompt(PROMPT).render({"word": "legion"})
    assert option(argv, "--system-prompt") == prompt.system  # ours replaces the default
    assert call["stdin"] == prompt.user  # the prompt goes on stdin, not in argv
    schema = json.loads(option(argv, "--json-schema"))
    assert schema["required"] == ["echo", "length"] and "title" not in json.dumps(schema)
    assert call["env"] == {**call["env"], "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
                           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                           "CLAUDE_CODE_MAX_RETRIES": "3", "CLAUDE_CODE_EFFORT_LEVEL": "low",
                           "DISABLE_PROMPT_CACHING": "1",
                           "MAX_STRUCTURED_OUTPUT_RETRIES": "2"}  # fmt: skip
    assert "ANTHROPIC_API_KEY" not in call["env"] and "ANTHROPIC_AUTH_TOKEN" not in call["env"]
    assert chosen.meter.as_dict(chosen.name)["estimated_cost_usd"] == pytest.approx(ours, abs=1e-6)


def test_a_model_our_table_lacks_is_priced_by_the_cli(stub: StubClaude) -> None:
    stub.script(answer(GOOD, cost=0.0123))
    result = ask(engine(LEGION_LLM_MODEL=FUTURE))
    assert result.usage.estimated_cost_usd == pytest.approx(0.0123)
    assert option(stub.print_calls()[0]["argv"], "--model") == FUTURE


def test_max_budget_is_what_is_left_of_max_cost(stub: StubClaude) -> None:
    stub.script(answer(GOOD, cost=0.25))
    chosen = engine(LEGION_LLM_MAX_COST="1", LEGION_LLM_MODEL=FUTURE)
    ask(chosen)
    ask(chosen)
    budgets = [float(option(c["argv"], "--max-budget-usd")) for c in stub.print_calls()]
    assert budgets == [pytest.approx(1.0), pytest.approx(0.75)]


def test_budget_exceeded_records_what_was_spent(stub: StubClaude) -> None:
    stub.script(reply("budget", cost=0.004))
    chosen = engine(LEGION_LLM_MAX_COST="0.5", LEGION_LLM_MODEL=FUTURE)
    with pytest.raises(
        BudgetExceededError, match=r"--max-budget-usd of \$0.5000 after spending \$0.0040"
    ):
        ask(chosen)
    assert chosen.meter.total.estimated_cost_usd == pytest.approx(0.004)


def test_a_spent_allowance_stops_before_the_cli_runs(stub: StubClaude) -> None:
    stub.script(answer(GOOD, cost=0.5))
    chosen = engine(LEGION_LLM_MAX_COST="0.5", LEGION_LLM_MODEL=FUTURE)
    ask(chosen)
    with pytest.raises(BudgetExceededError, match=r"stopped before a call .* \$0.5000 spent"):
        ask(chosen)
    assert len(stub.print_calls()) == 1


@pytest.mark.parametrize(
    ("scripted", "error", "message"),
    [
        (reply("not_logged_in"), ClaudeCodeNotLoggedInError, r"not logged in .*claude auth login"),
        (reply("api_error", status=401, message="Failed to authenticate. API Error: 401"),
         ClaudeCodeNotLoggedInError, "login was refused"),
        (reply("api_error", status=429, message="API Error: Request rejected (429)"),
         ClaudeCodeError, r"rate-limited \(HTTP 429\)"),
        (reply("api_error", status=529, message="API Error: 529 overloaded_error"),
         ClaudeCodeError, r"overloaded \(HTTP 529\)"),
        (reply("garbage", stdout="<html>proxy error</html>", code=0), ClaudeCodeError,
         r"printed no JSON result \(<html>proxy error</html>\)"),
        (reply("garbage", stdout='{"type": "assistant"}\n', code=1), ClaudeCodeError,
         "exited with 1 and printed no JSON result"),
        (reply("structured_retries"), InvalidOutputError, "gave up on output matching the schema"),
        (reply("text", text="I cannot do that."), NoToolCallError, "has no structured output"),
        (reply("refusal"), RefusalError, r"^Claude Code's model refused prompt 'selftest' "
         r"\(stop_reason refusal\): API Error: Claude Code is unable"),
        (reply("error_text", message="API Error: API returned an empty or malformed response "
               "(HTTP 200)"), ClaudeCodeError,
         r"^Claude Code failed: API Error: API returned an empty or malformed response"),
    ],
)  # fmt: skip
def test_each_failure_is_one_typed_line(
    stub: StubClaude, scripted: dict[str, Any], error: type[Exception], message: str
) -> None:
    stub.script(scripted)
    with pytest.raises(error, match=message) as caught:
        ask(bare())
    assert "\n" not in str(caught.value)


def test_a_cli_too_old_for_json_schema(stub: StubClaude) -> None:
    stub.script(answer(GOOD), old=True, version="1.0.128")
    with pytest.raises(ClaudeCodeSetupError, match=r"claude 1.0.128 is too old for --json-schema"):
        engine()
    assert not any("auth" in call for call in stub.calls())  # `auth status` would be a paid prompt
    chosen = engine("auto")
    assert isinstance(chosen, OfflineEngine)
    assert "too old for --json-schema" in chosen.notices.messages[0]


def test_an_unknown_option_at_run_time_is_too_old(stub: StubClaude, tmp_path: Path) -> None:
    chosen = engine()
    stub.script(answer(GOOD), old=True, version="1.0.128")  # replaced after the probe
    with pytest.raises(ClaudeCodeTooOldError, match=r"claude 2.1.197 is too old for --json-schema"):
        ask(chosen)


def test_a_timeout_kills_the_cli(stub: StubClaude) -> None:
    stub.script(reply("sleep", seconds=30))
    with pytest.raises(ClaudeCodeError, match=r"no answer within 1 s \(deadline_s\)"):
        ask(engine(LEGION_LLM_DEADLINE="1"))
    pid = stub.print_calls()[0]["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_timeout_lets_the_cli_clean_up_first(stub: StubClaude) -> None:
    """SIGTERM first: the real CLI then removes its session file (measured: SIGKILL leaves
    ~/.claude/sessions/<pid>.json behind); SIGKILL only for what is still running after."""
    stub.script(reply("sleep", seconds=30, on_term="cleanup"))
    with pytest.raises(ClaudeCodeError, match=r"no answer within 1 s"):
        ask(engine(LEGION_LLM_DEADLINE="1"))
    pid = stub.print_calls()[0]["pid"]
    assert {"terminated": True, "pid": pid} in stub.calls()


def test_a_cli_that_ignores_sigterm_is_killed(
    stub: StubClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("legion_llm.llm.claude_code.cli.TERM_GRACE_S", 0.5)
    stub.script(reply("sleep", seconds=30, on_term="ignore"))
    with pytest.raises(ClaudeCodeError, match=r"no answer within 1 s"):
        ask(engine(LEGION_LLM_DEADLINE="1"))
    with pytest.raises(ProcessLookupError):
        os.kill(stub.print_calls()[0]["pid"], 0)


def test_an_invalid_answer_is_asked_again_once(stub: StubClaude) -> None:
    stub.script(answer({"echo": "legion", "length": -1}), answer(GOOD))
    result = ask(engine())
    assert result.output == SelfTestReply(**GOOD) and result.usage.calls == 2
    again = stub.print_calls()[1]["stdin"]
    assert "did not match the schema" in again and "length: Input should be greater" in again


def test_invalid_twice_is_invalid_output(stub: StubClaude) -> None:
    stub.script(answer({"echo": "legion"}))
    with pytest.raises(InvalidOutputError, match="after one re-ask: length: Field required"):
        ask(bare())
    assert len(stub.print_calls()) == 2


def test_auto_uses_a_logged_in_claude_code_only_without_a_key(stub: StubClaude) -> None:
    stub.script(answer(GOOD))
    chosen = engine("auto")
    assert isinstance(chosen, FallbackEngine) and chosen.name == "claude-code"
    assert ask(chosen).engine == "claude-code"
    with_key = engine("auto", ANTHROPIC_API_KEY="sk-test")
    assert with_key.name == "anthropic"
    assert len(stub.print_calls()) == 1


def test_auto_falls_back_once_when_claude_code_fails(stub: StubClaude) -> None:
    stub.script(reply("api_error", status=529, message="API Error: 529 overloaded_error"))
    chosen = engine("auto")
    assert ask(chosen).engine == "offline" and ask(chosen).engine == "offline"
    assert len(stub.print_calls()) == 1  # down for the rest of the run
    assert "overloaded (HTTP 529)" in chosen.notices.messages[0]


def test_logged_out_auto_is_offline_and_explicit_fails(stub: StubClaude) -> None:
    stub.script(answer(GOOD), logged_in=False, auth_method="none")
    chosen = engine("auto")
    assert isinstance(chosen, OfflineEngine)
    assert chosen.notices.messages == [
        "notice: no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is set and Claude Code cannot "
        "answer (Claude Code is not logged in (run `claude auth login`)); using the offline engine"
    ]
    with pytest.raises(
        ClaudeCodeSetupError, match="--engine claude-code: Claude Code is not logged in"
    ) as caught:
        engine()
    assert caught.value.exit_code == 2
    assert stub.print_calls() == []


def test_the_cli_can_be_named_by_a_setting(
    stub: StubClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    stub.script(answer(GOOD))
    assert ask(engine(LEGION_LLM_CLAUDE=str(stub.path))).engine == "claude-code"
    with pytest.raises(ClaudeCodeSetupError, match="LEGION_LLM_CLAUDE names '/no/claude'"):
        engine(LEGION_LLM_CLAUDE="/no/claude")


def test_an_answer_nested_past_the_decoders_limit_has_no_structured_output(
    stub: StubClaude,
) -> None:
    """A broken model's JSON, deeper than json can decode: a typed failure, not a crash."""
    stub.script(reply("text", text='{"a": ' * 5000 + "1" + "}" * 5000))
    with pytest.raises(NoToolCallError, match="has no structured output"):
        ask(bare())
