"""Streamed calls against the loopback fake: long answers arrive, stalls and broken streams do not hang."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from legion_llm.llm.cancel import CallCancelled, stoppable
from legion_llm.llm.engine import Engine, Notices
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.llm.pricing import estimate_cost, model_info
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from tests.fakes import FakeMessagesAPI, Reply
from tests.llm.conftest import FakeTime

Make = Callable[..., Engine]
GOOD = {"echo": "legion", "length": 6}
QUICK = {"stall_timeout_s": 0.25, "fallback_offline": False}


def ask(engine: Engine) -> Any:
    return engine.ask(SelfTestReply, PROMPT, {"word": "legion"})


def test_a_long_answer_streams_past_any_fixed_attempt_timeout(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    # one character per event, 30 ms apart: over a second in all, four times the stall timeout
    fake_api.enqueue(Reply.answer(GOOD, chunk_chars=1, drip_s=0.03))
    started = time.monotonic()
    answer = ask(on_fake(**QUICK))
    elapsed = time.monotonic() - started
    assert answer.output == SelfTestReply(echo="legion", length=6)
    assert elapsed > 3 * QUICK["stall_timeout_s"]
    assert len(fake_api.calls()) == 1 and fake_api.calls()[0].streamed


def test_a_silent_stall_times_out_and_is_retried(
    fake_api: FakeMessagesAPI, on_fake: Make, fake_time: FakeTime
) -> None:
    fake_api.enqueue(Reply.answer(GOOD, stall_after=2, stall_s=10), Reply.answer(GOOD))
    started = time.monotonic()
    answer = ask(on_fake(**QUICK))
    assert answer.output.echo == "legion"
    assert len(fake_api.calls()) == 2 and len(fake_time.sleeps) == 1
    assert time.monotonic() - started < 5  # the 10 s stall was not waited out


def test_a_stall_that_only_sends_pings_is_caught_by_the_watchdog(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    stalled = Reply.answer(GOOD, stall_after=2, stall_s=10, ping_every_s=0.05)
    fake_api.enqueue(stalled, stalled)
    started = time.monotonic()
    with pytest.raises(LLMUnavailableError, match=r"timed out \(no token for 0.25 s\) after 2"):
        ask(on_fake(max_attempts=2, **QUICK))
    assert time.monotonic() - started < 5
    assert len(fake_api.calls()) == 2


def test_a_stream_still_dripping_at_the_attempt_ceiling_is_cut(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    fake_api.enqueue(Reply.answer(GOOD, chunk_chars=1, drip_s=0.05))
    with pytest.raises(
        LLMUnavailableError, match=r"timed out \(still streaming after 0.4 s\) after 1 attempt"
    ):
        ask(on_fake(timeout_s=0.4, max_attempts=1, **QUICK))


def test_an_overload_mid_stream_is_retried_and_its_start_is_counted(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    broken = Reply.answer(GOOD, stall_after=3, stream_error=("overloaded_error", "Overloaded"))
    fake_api.enqueue(broken, Reply.answer(GOOD))
    engine = on_fake(**QUICK)
    answer = ask(engine)
    assert answer.output.length == 6 and len(fake_api.calls()) == 2
    # the broken attempt had begun (message_start): its input may be billed, so it is counted
    first_input = fake_api.calls()[0].usage["input_tokens"]  # type: ignore[index]
    assert answer.usage.calls == 2
    assert answer.usage.input_tokens == first_input + fake_api.calls()[1].usage["input_tokens"]  # type: ignore[index]


def test_a_hang_up_mid_stream_is_retried(fake_api: FakeMessagesAPI, on_fake: Make) -> None:
    fake_api.enqueue(Reply.answer(GOOD, stall_after=3, then="close"), Reply.answer(GOOD))
    assert ask(on_fake(**QUICK)).output.echo == "legion"
    assert len(fake_api.calls()) == 2


def test_a_stream_that_keeps_breaking_off_is_reported_as_that_in_the_fallback_notice(
    fake_api: FakeMessagesAPI, on_fake: Make, collected: Notices
) -> None:
    # not "could not connect": the API answered, then the connection dropped mid-answer
    hang_up = Reply.answer(GOOD, stall_after=3, then="close")
    fake_api.enqueue(hang_up, hang_up)
    answer = ask(on_fake("auto", stall_timeout_s=0.25, max_attempts=2))
    assert answer.engine == "offline" and len(fake_api.calls()) == 2
    [notice] = collected.messages
    assert re.search(
        r"answer broke off \(the connection dropped after \d+ characters? of the answer\) "
        r"after 2 attempts",
        notice,
    ), notice
    assert "could not connect" not in notice


def test_a_200_that_is_not_an_event_stream_is_one_clear_failure(
    fake_api: FakeMessagesAPI, on_fake: Make, collected: Notices
) -> None:
    page = Reply.raw(b"<html><body>Bad gateway</body></html>")
    fake_api.enqueue(page)
    with pytest.raises(LLMUnavailableError, match=r"not an event stream: text/html"):
        ask(on_fake(**QUICK))
    assert len(fake_api.calls()) == 1  # not retried
    fake_api.enqueue(page)
    answer = ask(on_fake("auto", stall_timeout_s=0.25))
    assert answer.engine == "offline" and "not an event stream" in (answer.fallback_reason or "")
    assert (
        len(collected.messages) == 1 and "offline engine answers the rest" in collected.messages[0]
    )


def test_thinking_models_stream_their_thinking_and_get_room_for_it(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    fake_api.enqueue(Reply.answer(GOOD, thinking="The word has six letters. " * 20))
    engine = on_fake(model="claude-opus-5-5", max_tokens=1000, **QUICK)
    answer = ask(engine)
    assert answer.output.length == 6
    sent = fake_api.calls()[0].body
    assert sent["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert sent["max_tokens"] == 1000 + 2048 and sent["output_config"]["effort"] == "low"
    assert answer.usage.output_tokens > 100  # thinking is billed as output


def test_retries_of_a_stream_that_broke_off_stay_inside_the_cap(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    # A proxy hangs up mid-answer every time; the API bills each attempt whole (the fake bills
    # what it generated). The client cannot see how much of a broken-off answer was billed, so
    # it may retry only while even a full-length bill of every broken attempt fits the cap.
    long = {"echo": "legion " * 1000, "length": 6}
    fake_api.responder = lambda request: Reply.answer(long, stall_after=4, then="close")
    cap = 0.0012
    engine = on_fake(max_cost_usd=cap, max_attempts=4, **QUICK)
    with pytest.raises(
        LLMUnavailableError,
        match=r"answer broke off \(the connection dropped after \d+ characters of the answer\) "
        r"after 1 attempt \(a retry could pass --max-cost",
    ):
        ask(engine)
    info = model_info(engine.model or "")
    billed = sum(
        estimate_cost(info, **{k: v for k, v in (c.usage or {}).items() if k.endswith("tokens")})
        for c in fake_api.calls()
    )
    assert len(fake_api.calls()) == 1 and billed <= cap  # 4 attempts were billed 0.0020
    answer = ask(on_fake("auto", max_cost_usd=cap, stall_timeout_s=0.25))
    reason = answer.fallback_reason or ""
    assert answer.engine == "offline" and "--max-cost" in reason and "dropped after" in reason


def test_an_answer_far_past_max_tokens_is_cut_off_as_a_broken_stream(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    # a broken proxy streams 1 MB into an answer capped at a few hundred tokens: the SDK would
    # re-parse the growing JSON on every event (minutes of CPU); it is stopped at the bound
    huge = {"echo": "legion " * 150_000, "length": 6}
    fake_api.enqueue(Reply.answer(huge, chunk_chars=64))
    patient = {**QUICK, "stall_timeout_s": 10.0}  # a loaded machine's pauses are no stall here
    with pytest.raises(LLMUnavailableError, match=r"ran past max_tokens \(\d+ characters"):
        ask(on_fake(**patient))
    assert len(fake_api.calls()) == 1  # not retried: the same proxy would do it again
    fake_api.enqueue(Reply.answer(huge, chunk_chars=64))
    answer = ask(on_fake("auto", stall_timeout_s=10.0))
    assert answer.engine == "offline" and "max_tokens" in (answer.fallback_reason or "")


def test_a_cancelled_call_closes_its_stream_and_is_not_retried(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    """The caller cancels while the answer streams (llm/cancel.py): the watchdog closes the
    stream within its period, the call ends with CallCancelled, and no retry is sent."""
    fake_api.enqueue(Reply.answer(GOOD, chunk_chars=1, drip_s=0.2), Reply.answer(GOOD))
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    with stoppable(stop), pytest.raises(CallCancelled):
        ask(on_fake(max_attempts=3, **{**QUICK, "stall_timeout_s": 2.0}))
    assert time.monotonic() - started < 0.5 + 2.0  # not the whole drip, nor a stall
    assert len(fake_api.calls()) == 1
