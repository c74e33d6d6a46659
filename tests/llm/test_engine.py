"""The seam without HTTP: engine selection, the offline engine, the fallback rules, the fake."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from legion_llm.errors import UsageError
from legion_llm.llm.budget import Usage
from legion_llm.llm.cancel import CallCancelled, stoppable
from legion_llm.llm.engine import FallbackEngine, Notices, OfflineEngine
from legion_llm.llm.errors import (
    BudgetExceededError,
    InvalidOutputError,
    LLMError,
    LLMUnavailableError,
    OfflineStepMissingError,
    PromptError,
    TokenBudgetError,
)
from legion_llm.llm.factory import NO_KEY_NOTICE, select_engine
from legion_llm.llm.offline import OfflineCall, OfflineRegistry, offline_step
from legion_llm.llm.pricing import DEFAULT_MODEL
from legion_llm.llm.prompts import load_prompt
from legion_llm.llm.selftest import PROMPT, SelfTestReply, selftest_offline
from legion_llm.llm.testing import FakeEngine


class Other(BaseModel):
    value: int


def reply(word: str = "legion") -> SelfTestReply:
    return SelfTestReply(echo=word, length=len(word))


def offline(registry: OfflineRegistry, notices: Notices) -> OfflineEngine:
    return OfflineEngine(registry, notices=notices)


def test_auto_without_a_key_is_offline_with_one_notice(
    registry: OfflineRegistry, capsys: pytest.CaptureFixture[str]
) -> None:
    notices = Notices()  # the default sink is stderr
    engine = select_engine("auto", env={}, registry=registry, notices=notices)
    select_engine("auto", env={}, registry=registry, notices=notices)
    assert engine.name == "offline"
    answer = engine.ask(SelfTestReply, PROMPT, {"word": "abc"})
    assert answer.output == reply("abc") and answer.engine == "offline" and answer.model is None
    reason = "no `claude` on PATH (set LEGION_LLM_CLAUDE)"
    assert capsys.readouterr().err == NO_KEY_NOTICE.format(reason=reason) + "\n"


def test_offline_choice_never_uses_claude_even_with_a_key(registry: OfflineRegistry) -> None:
    engine = select_engine("offline", env={"ANTHROPIC_API_KEY": "k"}, registry=registry)
    assert isinstance(engine, OfflineEngine) and not engine.notices.messages


def test_auto_with_a_key_wraps_claude_with_the_offline_fallback(registry: OfflineRegistry) -> None:
    engine = select_engine("auto", env={"ANTHROPIC_AUTH_TOKEN": "t"}, registry=registry)
    assert isinstance(engine, FallbackEngine)
    assert engine.name == "anthropic" and engine.model == DEFAULT_MODEL
    assert engine.explicit is False


def test_unknown_engine_is_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match="--engine must be one of auto, anthropic, claude-code, sampling, offline"
    ):
        select_engine("gpt", env={})


def test_offline_engine_costs_nothing_and_counts_its_answers(
    registry: OfflineRegistry, collected: Notices
) -> None:
    engine = offline(registry, collected)
    answer = engine.ask(SelfTestReply, PROMPT, {"word": "x"})
    assert answer.usage == Usage(offline_calls=1)
    assert engine.meter.as_dict("offline") == {
        "calls": 0, "offline_calls": 1, "input_tokens": 0, "output_tokens": 0,
        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
        "input_tokens_estimated": 0, "input_tokens_counted": None,
        "estimated_cost_usd": 0.0, "avoided_cost_usd": 0.0,
        "avoided": {"by_cache_usd": 0.0, "by_cap_usd": 0.0, "calls_refused_by_cap": 0},
        "max_cost_usd": None, "engine": "offline", "model": None,
    }  # fmt: skip
    assert answer.prompt_sha256 == load_prompt(PROMPT).sha256


def test_offline_step_gets_variables_and_context(collected: Notices) -> None:
    seen: list[OfflineCall] = []
    registry = OfflineRegistry()

    @offline_step(PROMPT, registry)
    def step(call: OfflineCall) -> SelfTestReply:
        seen.append(call)
        return reply(call.context["word"])

    answer = OfflineEngine(registry).ask(
        SelfTestReply, PROMPT, {"word": "a"}, context={"word": "ctx"}
    )
    assert answer.output.echo == "ctx"
    assert seen[0].variables == {"word": "a"} and seen[0].schema is SelfTestReply


def test_offline_step_must_exist_and_return_the_schema(collected: Notices) -> None:
    with pytest.raises(OfflineStepMissingError, match="no step for prompt 'selftest'"):
        OfflineEngine(OfflineRegistry()).ask(SelfTestReply, PROMPT, {"word": "a"})
    registry = OfflineRegistry()
    registry.register(PROMPT, lambda call: Other(value=1))
    with pytest.raises(LLMError, match="returned Other, not SelfTestReply"):
        OfflineEngine(registry).ask(SelfTestReply, PROMPT, {"word": "a"})


def test_registering_twice_is_refused() -> None:
    registry = OfflineRegistry()
    registry.register(PROMPT, selftest_offline)
    registry.register(PROMPT, selftest_offline)  # the same step again is harmless
    with pytest.raises(ValueError, match="already registered"):
        registry.register(PROMPT, lambda call: reply())


def test_fake_engine_queue() -> None:
    fake = FakeEngine().enqueue(reply("one"), LLMUnavailableError("down"), reply("three"))
    assert fake.ask(SelfTestReply, PROMPT, {"word": "w"}).output.echo == "one"
    with pytest.raises(LLMUnavailableError):
        fake.ask(SelfTestReply, PROMPT, {"word": "w"})
    third = fake.ask(SelfTestReply, PROMPT, {"word": "w"})
    assert third.engine == "fake" and third.usage.calls == 1
    assert [r.prompt.user.endswith("w") for r in fake.requests] == [True, True, True]
    with pytest.raises(AssertionError, match="nothing queued"):
        fake.ask(SelfTestReply, PROMPT, {"word": "w"})


def test_fake_engine_checks_the_schema_and_the_prompt_variables() -> None:
    fake = FakeEngine().enqueue(Other(value=1))
    with pytest.raises(AssertionError, match="queued Other, but ask\\(\\) wanted SelfTestReply"):
        fake.ask(SelfTestReply, PROMPT, {"word": "w"})
    with pytest.raises(PromptError, match="missing word"):
        FakeEngine().enqueue(reply()).ask(SelfTestReply, PROMPT, {})


def test_unavailable_falls_back_for_the_rest_of_the_run(
    registry: OfflineRegistry, collected: Notices
) -> None:
    fake = FakeEngine(notices=collected).enqueue(LLMUnavailableError("HTTP 503"), reply("unused"))
    engine = FallbackEngine(fake, OfflineEngine(registry, meter=fake.meter, notices=collected))
    first = engine.ask(SelfTestReply, PROMPT, {"word": "a"})
    second = engine.ask(SelfTestReply, PROMPT, {"word": "b"})
    assert (first.engine, second.engine) == ("offline", "offline")
    assert first.fallback_reason == second.fallback_reason == "HTTP 503"
    assert fake.pending == 1 and engine.name == "offline"
    assert collected.messages == [
        "notice: Claude is unavailable (HTTP 503); the offline engine answers the rest of this run"
    ]


def test_unusable_answer_falls_back_for_that_answer(
    registry: OfflineRegistry, collected: Notices
) -> None:
    fake = FakeEngine(notices=collected).enqueue(InvalidOutputError("bad twice"), reply("claude"))
    engine = FallbackEngine(fake, OfflineEngine(registry, meter=fake.meter, notices=collected))
    assert engine.ask(SelfTestReply, PROMPT, {"word": "a"}).engine == "offline"
    assert engine.ask(SelfTestReply, PROMPT, {"word": "a"}).output.echo == "claude"
    assert engine.meter.as_dict()["engine"] == "offline+fake"


@pytest.mark.parametrize("error", [BudgetExceededError("cap"), TokenBudgetError("too big")])
def test_budget_errors_never_fall_back(registry: OfflineRegistry, error: LLMError) -> None:
    fake = FakeEngine().enqueue(error)
    engine = FallbackEngine(fake, OfflineEngine(registry, meter=fake.meter))
    with pytest.raises(type(error)):
        engine.ask(SelfTestReply, PROMPT, {"word": "a"})


def test_without_an_offline_step_the_claude_error_stands() -> None:
    fake = FakeEngine().enqueue(LLMUnavailableError("down"))
    engine = FallbackEngine(fake, OfflineEngine(OfflineRegistry(), meter=fake.meter))
    with pytest.raises(LLMUnavailableError, match="down"):
        engine.ask(SelfTestReply, PROMPT, {"word": "a"})


def test_answer_usage_is_per_ask_and_provenance_names_the_prompt() -> None:
    fake = FakeEngine(usage=Usage(calls=1, input_tokens=10, estimated_cost_usd=0.5))
    fake.enqueue(reply(), reply())
    fake.ask(SelfTestReply, PROMPT, {"word": "a"})
    second = fake.ask(SelfTestReply, PROMPT, {"word": "a"})
    assert second.usage.input_tokens == 10 and fake.meter.total.input_tokens == 20
    record = second.provenance()
    assert record["prompt"] == "selftest" and len(record["prompt_sha256"]) == 64
    assert record["engine"] == "fake" and record["usage"]["estimated_cost_usd"] == 0.5


def test_prompts_dir_can_be_swapped(tmp_path: Path) -> None:
    (tmp_path / "selftest.md").write_text("# system\nS\n# user\nsay {{word}}\n", encoding="utf-8")
    fake = FakeEngine(prompts_dir=tmp_path).enqueue(reply())
    fake.ask(SelfTestReply, PROMPT, {"word": "hi"})
    assert fake.requests[0].prompt.user == "say hi" and fake.requests[0].prompt.system == "S"


def test_a_cancelled_call_asks_no_engine_and_falls_back_to_none(
    registry: OfflineRegistry, collected: Notices
) -> None:
    """Once the caller cancelled (llm/cancel.py), an ask raises CallCancelled before anything is
    sent, and the fallback does not answer in the cancelled engine's place."""
    fake = FakeEngine().enqueue(reply("one"))
    engine = FallbackEngine(fake, OfflineEngine(registry, meter=fake.meter, notices=collected))
    stop = threading.Event()
    with stoppable(stop):
        assert engine.ask(SelfTestReply, PROMPT, {"word": "w"}).output.echo == "one"
        stop.set()
        with pytest.raises(CallCancelled):
            engine.ask(SelfTestReply, PROMPT, {"word": "w"})
    assert len(fake.requests) == 1 and not collected.messages
    fake.enqueue(reply("two"))  # outside the call, the event is not this thread's any more
    assert engine.ask(SelfTestReply, PROMPT, {"word": "w"}).output.echo == "two"
