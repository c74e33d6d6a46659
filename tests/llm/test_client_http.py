"""The Anthropic adapter at the HTTP layer, through the real SDK (respx on httpcore2)."""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from typing import Any

import httpcore2
import pytest
import respx

from legion_llm.llm.engine import Engine, FallbackEngine, Notices
from legion_llm.llm.errors import (
    BudgetExceededError,
    InvalidOutputError,
    LLMUnavailableError,
    NoApiKeyError,
    NoToolCallError,
    OutputTruncatedError,
    RefusalError,
)
from legion_llm.llm.factory import select_engine
from legion_llm.llm.pricing import DEFAULT_MODEL
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from legion_llm.resources import prompts_dir
from tests.llm.conftest import (
    TEST_KEY,
    FakeTime,
    body,
    error_reply,
    message,
    stream_reply,
    text_reply,
    tool_reply,
)

Make = Callable[..., Engine]
GOOD = {"echo": "legion", "length": 6}


def ask(engine: Engine, word: str = "legion") -> Any:
    return engine.ask(SelfTestReply, PROMPT, {"word": word})


def test_success_with_a_tool_block(api: respx.MockRouter, claude: Make) -> None:
    usage = {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 1000,
             "cache_creation_input_tokens": 50}  # fmt: skip
    # a text block first: the tool block must be picked by type, not position
    reply = message(
        [{"type": "text", "text": "Here you go."},
         {"type": "tool_use", "id": "toolu_1", "name": "record_self_test_reply", "input": GOOD}],
        usage=usage,
    )  # fmt: skip
    route = api.post("/v1/messages").mock(return_value=stream_reply(reply, chunk_chars=3))
    engine = claude(fallback_offline=False)

    answer = ask(engine)

    assert answer.output == SelfTestReply(echo="legion", length=6)
    assert route.call_count == 1
    sent = body(route.calls[0])
    assert sent["model"] == "claude-sonnet-4-6" and sent["stream"] is True
    assert sent["output_config"] == {"effort": "low"} and "thinking" not in sent
    assert sent["tool_choice"] == {
        "type": "tool", "name": "record_self_test_reply", "disable_parallel_tool_use": True
    }  # fmt: skip
    assert sent["tools"][0]["name"] == "record_self_test_reply"
    assert sent["tools"][0]["input_schema"]["required"] == ["echo", "length"]
    assert sent["tools"][0]["input_schema"]["additionalProperties"] is False
    # the prompt text is the hashed file's text; the system prompt is far below the model's
    # minimum cacheable length (1,024), so it carries no cache marker
    raw = (prompts_dir() / "selftest.md").read_text(encoding="utf-8")
    assert answer.prompt_sha256 == hashlib.sha256(raw.encode()).hexdigest()
    assert sent["system"] == [
        {"type": "text", "text": raw.split("# system\n")[1].split("\n\n# user")[0]}
    ]  # fmt: skip
    user = raw.split("# user\n")[1].strip().replace("{{word}}", "legion")
    assert sent["messages"] == [{"role": "user", "content": [{"type": "text", "text": user}]}]
    headers = route.calls[0].request.headers
    assert headers["authorization"] == f"Bearer {TEST_KEY}"
    assert headers["x-stainless-retry-count"] == "0"
    # usage: cache reads/writes reported and priced (sonnet 4.6: 3 / 15 / 0.30 / 3.75 per MTok)
    assert answer.engine == "anthropic" and answer.model == "claude-sonnet-4-6"
    assert answer.usage.calls == 1 and answer.usage.cache_read_input_tokens == 1000
    assert answer.usage.cache_creation_input_tokens == 50
    expected = (120 * 3 + 30 * 15 + 1000 * 0.30 + 50 * 3.75) / 1e6
    assert answer.usage.estimated_cost_usd == pytest.approx(expected)
    assert engine.meter.as_dict("anthropic")["cache_read_input_tokens"] == 1000


def test_529_then_success_is_two_attempts_with_one_backoff(
    api: respx.MockRouter, claude: Make, fake_time: FakeTime
) -> None:
    route = api.post("/v1/messages").mock(side_effect=[error_reply(529), tool_reply(GOOD)])
    answer = ask(claude(fallback_offline=False))
    assert answer.output.echo == "legion"
    assert route.call_count == 2
    assert len(fake_time.sleeps) == 1
    assert 0.375 <= fake_time.sleeps[0] <= 0.5  # 0.5 s backoff times a 0.75-1.0 jitter
    assert answer.usage.calls == 1  # the 529 was not billed


def test_backoff_grows_exponentially(
    api: respx.MockRouter, claude: Make, fake_time: FakeTime
) -> None:
    route = api.post("/v1/messages").mock(side_effect=[error_reply(503)] * 3 + [tool_reply(GOOD)])
    ask(claude(fallback_offline=False, max_attempts=4))
    assert route.call_count == 4
    for n, slept in enumerate(fake_time.sleeps):
        assert 0.5 * 2**n * 0.75 <= slept <= 0.5 * 2**n


@pytest.mark.parametrize(
    ("headers", "waited"),
    [({"retry-after": "2"}, 2.0), ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
     ({"retry-after": "3600"}, 5.0)],
)  # fmt: skip
def test_429_honours_retry_after_with_a_cap(
    api: respx.MockRouter, claude: Make, fake_time: FakeTime, headers: dict[str, str], waited: float
) -> None:
    route = api.post("/v1/messages").mock(side_effect=[error_reply(429, headers), tool_reply(GOOD)])
    ask(claude(fallback_offline=False, max_retry_sleep_s=5))
    assert route.call_count == 2
    assert fake_time.sleeps == [pytest.approx(waited)]


def test_500_until_the_deadline_then_offline_with_one_notice(
    api: respx.MockRouter, claude: Make, fake_time: FakeTime, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(return_value=error_reply(500, {"retry-after-ms": "1000"}))
    engine = claude("auto", deadline_s=3, max_attempts=50)
    assert isinstance(engine, FallbackEngine)

    first = ask(engine)
    # t=0, t=1, t=2 fail; one more 1 s wait would reach the 3 s deadline, so it stops there
    assert route.call_count == 3
    assert fake_time.sleeps == [1.0, 1.0]
    assert first.engine == "offline" and first.output == SelfTestReply(echo="legion", length=6)
    assert "HTTP 500" in (first.fallback_reason or "") and "deadline of 3 s" in (
        first.fallback_reason or ""
    )
    assert len(collected.messages) == 1
    assert collected.messages[0].startswith("notice: Claude is unavailable")

    second = ask(
        engine, "again"
    )  # the rest of the run stays offline: no new request, no new notice
    assert second.output.echo == "again" and second.engine == "offline"
    assert route.call_count == 3 and len(collected.messages) == 1
    assert engine.meter.as_dict()["offline_calls"] == 2


def test_each_attempt_reads_with_the_stall_timeout_not_a_fixed_one(
    api: respx.MockRouter, claude: Make, fake_time: FakeTime
) -> None:
    route = api.post("/v1/messages").mock(
        side_effect=[error_reply(500, {"retry-after": "7"}), tool_reply(GOOD)]
    )
    ask(claude(fallback_offline=False, stall_timeout_s=12, deadline_s=10, max_retry_sleep_s=8))
    timeouts = [call.request.extensions["timeout"] for call in route.calls]
    assert [t["read"] for t in timeouts] == [12, 12]  # not cut to the deadline left
    assert fake_time.sleeps == [7]


def test_timeout_is_retried_then_typed(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(side_effect=httpcore2.ReadTimeout("slow"))
    with pytest.raises(LLMUnavailableError, match="timed out after 2 attempts") as caught:
        ask(claude(fallback_offline=False, max_attempts=2))
    assert route.call_count == 2
    assert caught.value.attempts == 2


def test_connection_error_is_retried(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(
        side_effect=[httpcore2.ConnectError("refused"), tool_reply(GOOD)]
    )
    assert ask(claude(fallback_offline=False)).output.echo == "legion"
    assert route.call_count == 2


@pytest.mark.parametrize(
    ("status", "headers"), [(400, {}), (401, {}), (500, {"x-should-retry": "false"})]
)
def test_not_retried(
    api: respx.MockRouter, claude: Make, status: int, headers: dict[str, str]
) -> None:
    route = api.post("/v1/messages").mock(return_value=error_reply(status, headers))
    with pytest.raises(LLMUnavailableError, match=f"HTTP {status}") as caught:
        ask(claude(fallback_offline=False))
    assert route.call_count == 1
    assert caught.value.status == status and caught.value.attempts == 1


def test_malformed_tool_input_then_a_valid_reask(api: respx.MockRouter, claude: Make) -> None:
    bad = {"echo": "legion", "length": "six"}
    route = api.post("/v1/messages").mock(side_effect=[tool_reply(bad), tool_reply(GOOD)])
    answer = ask(claude(fallback_offline=False))
    assert answer.output.length == 6
    assert route.call_count == 2
    first, second = body(route.calls[0]), body(route.calls[1])
    assert second["system"] == first["system"] and second["tool_choice"] == first["tool_choice"]
    assert second["messages"][0] == first["messages"][0]
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "record_self_test_reply", "input": bad}
        ],
    }
    result = second["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    assert (
        result["is_error"] is True
        and "length: Input should be a valid integer" in result["content"]
    )
    assert answer.usage.calls == 2 and answer.usage.input_tokens == 200  # both calls are billed


def test_invalid_twice_is_a_typed_error(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(return_value=tool_reply({"echo": "legion"}))
    engine = claude(fallback_offline=False)
    with pytest.raises(InvalidOutputError, match="length: Field required"):
        ask(engine)
    assert route.call_count == 2  # one re-ask, no more
    assert engine.meter.total.calls == 2


def test_invalid_twice_falls_back_for_that_answer_only(
    api: respx.MockRouter, claude: Make, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(
        side_effect=[tool_reply({"echo": 1}), tool_reply({"echo": 2}), tool_reply(GOOD)]
    )
    engine = claude()
    first = ask(engine)
    assert first.engine == "offline" and first.output == SelfTestReply(echo="legion", length=6)
    assert first.usage.calls == 2 and first.usage.offline_calls == 1
    assert collected.messages == [
        f"notice: Claude's answer to prompt 'selftest' was unusable ({first.fallback_reason}); "
        "the offline engine answered it"
    ]
    second = ask(engine)  # Claude is still used for the next answer
    assert second.engine == "anthropic" and route.call_count == 3
    assert engine.meter.as_dict()["engine"] == "anthropic+offline"


def test_max_tokens_is_a_typed_error_without_reask(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(
        return_value=tool_reply({"echo": "leg"}, stop_reason="max_tokens")
    )
    with pytest.raises(OutputTruncatedError, match="cut off \\(max_tokens\\)"):
        ask(claude(fallback_offline=False))
    assert route.call_count == 1


def test_refusal_is_a_typed_error(api: respx.MockRouter, claude: Make) -> None:
    api.post("/v1/messages").mock(return_value=text_reply("", stop_reason="refusal"))
    with pytest.raises(RefusalError):
        ask(claude(fallback_offline=False))


def test_no_tool_block_is_a_typed_error(api: respx.MockRouter, claude: Make) -> None:
    api.post("/v1/messages").mock(return_value=text_reply("echo: legion"))
    with pytest.raises(NoToolCallError):
        ask(claude(fallback_offline=False))


def test_json_schema_mode_for_models_that_reject_forced_tools(
    api: respx.MockRouter, claude: Make
) -> None:
    route = api.post("/v1/messages").mock(
        side_effect=[text_reply('{"echo": "legion"}', model="claude-sonnet-5-5"),
                     text_reply('{"echo": "legion", "length": 6}', model="claude-sonnet-5-5")]
    )  # fmt: skip
    answer = ask(claude(model="claude-sonnet-5-5", fallback_offline=False))
    assert answer.output.length == 6 and answer.model == "claude-sonnet-5-5"
    sent = body(route.calls[0])
    assert "tools" not in sent and "tool_choice" not in sent
    assert sent["output_config"]["format"]["type"] == "json_schema"
    assert sent["output_config"]["format"]["schema"]["required"] == ["echo", "length"]
    reask = body(route.calls[1])["messages"]
    assert reask[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": '{"echo": "legion"}'}],
    }
    assert "length: Field required" in reask[2]["content"]


def test_no_key_with_anthropic_forced_is_a_clear_error(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(return_value=tool_reply(GOOD))
    with pytest.raises(NoApiKeyError, match="ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"):
        claude(env={})
    assert route.call_count == 0


def test_auth_token_is_sent_as_bearer(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(return_value=tool_reply(GOOD))
    ask(claude(env={"ANTHROPIC_AUTH_TOKEN": "tok-123"}, fallback_offline=False))
    assert route.calls[0].request.headers["authorization"] == "Bearer tok-123"


def test_anthropic_base_url_is_honoured(claude: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": "http://gateway.test/anthropic"}
    with respx.mock(using="httpcore2", assert_all_called=True) as router:
        route = router.post("http://gateway.test/anthropic/v1/messages").mock(
            return_value=tool_reply(GOOD)
        )
        engine = claude(env=env, fallback_offline=False)
        assert ask(engine).output.echo == "legion"
    assert route.call_count == 1
    assert engine.config.sources["base_url"] == "env ANTHROPIC_BASE_URL"  # type: ignore[attr-defined]


def test_max_cost_stops_before_the_first_call(api: respx.MockRouter, claude: Make) -> None:
    route = api.post("/v1/messages").mock(return_value=tool_reply(GOOD))
    with pytest.raises(BudgetExceededError, match="--max-cost") as caught:
        ask(claude(max_cost_usd=0.0001, fallback_offline=False))
    assert route.call_count == 0
    assert caught.value.data["spent_usd"] == 0


def test_max_cost_stops_before_the_reask(api: respx.MockRouter, claude: Make) -> None:
    pricey = {"input_tokens": 1000, "output_tokens": 1000}  # $0.018 on sonnet 4.6
    route = api.post("/v1/messages").mock(return_value=tool_reply({"echo": 1}, usage=pricey))
    # $0.001 left: not even 100 output tokens after the input (100 counted, at the write rate)
    engine = claude(max_cost_usd=0.019, max_tokens=100, fallback_offline=True)
    with pytest.raises(BudgetExceededError):  # never turned into an offline fallback
        ask(engine)
    assert route.call_count == 1
    assert engine.meter.total.estimated_cost_usd == pytest.approx(0.018)


def test_deprecated_model_becomes_one_notice(
    api: respx.MockRouter, claude: Make, collected: Notices, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anthropic._data

    # the SDK's own list decides which models warn (2.15 dropped Sonnet 4.5 after its end of
    # life); the test is about our handling of that warning, so it names the model itself
    monkeypatch.setitem(
        anthropic._data.DEPRECATED_MODELS, "claude-sonnet-4-5", "November 30th, 2026"
    )
    api.post("/v1/messages").mock(return_value=tool_reply(GOOD, model="claude-sonnet-4-5"))
    engine = claude(model="claude-sonnet-4-5", fallback_offline=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ask(engine)
        ask(engine)
    assert len(collected.messages) == 1
    assert "claude-sonnet-4-5' is deprecated" in collected.messages[0]


def test_the_key_never_shows(api: respx.MockRouter, claude: Make) -> None:
    api.post("/v1/messages").mock(return_value=error_reply(401))
    engine = claude(fallback_offline=False)
    with pytest.raises(LLMUnavailableError) as caught:
        ask(engine)
    shown = [str(caught.value), repr(caught.value), repr(caught.value.data), repr(engine),
             repr(engine.http), repr(engine.http._credential)]  # type: ignore[attr-defined]  # fmt: skip
    assert not any(TEST_KEY in text for text in shown)


def test_auto_with_a_key_uses_claude_on_the_default_model(
    api: respx.MockRouter, registry: Any
) -> None:
    route = api.post("/v1/messages").mock(return_value=text_reply(json.dumps(GOOD)))
    engine = select_engine("auto", env={"ANTHROPIC_API_KEY": TEST_KEY}, registry=registry)
    assert engine.name == "anthropic"
    assert ask(engine).engine == "anthropic"
    sent = body(route.calls[0])  # Haiku 5.5: JSON schema, low effort, thinking off
    assert sent["model"] == DEFAULT_MODEL and "tools" not in sent
    assert sent["output_config"]["effort"] == "low" and sent["thinking"] == {"type": "disabled"}
    assert "title" not in json.dumps(sent["output_config"]["format"]["schema"])
