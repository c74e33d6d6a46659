"""The Message Batches endpoints through the real SDK at the HTTP layer (respx on httpcore2): the
retry policy of a direct call, in-progress then ended, JSON Lines results of every kind in any
order, a refused batch id, and the batch engine answering from a result at the batch price."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.batch import BatchLedger, Slot, StoredResult
from legion_llm.llm.claude_api.batches import BatchEngines, batch_engines
from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.llm.pricing import DEFAULT_MODEL, estimate_cost, model_info
from tests.llm.conftest import TEST_KEY, FakeTime, error_reply, message

BATCHES = "/v1/messages/batches"


def batch(
    status: str = "in_progress", batch_id: str = "msgbatch_01", **counts: int
) -> dict[str, Any]:
    done = status == "ended"
    return {"id": batch_id, "type": "message_batch", "processing_status": status,
            "request_counts": {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0,
                               "expired": 0, **counts},
            "created_at": "2026-11-30T10:00:00Z", "expires_at": "2026-12-01T10:00:00Z",
            "ended_at": "2026-11-30T10:40:00Z" if done else None, "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com{BATCHES}/{batch_id}/results" if done else None}  # fmt: skip


def engines(fake_time: FakeTime, mode: str = "replay") -> BatchEngines:
    env = {"ANTHROPIC_API_KEY": TEST_KEY}
    config = resolve_llm_config({}, env=env)
    return batch_engines(config, BatchLedger(mode), env=env,  # type: ignore[arg-type]
                         claude_options={"sleep": fake_time.sleep, "clock": fake_time.clock})  # fmt: skip


def test_create_is_retried_like_a_direct_call(api: respx.MockRouter, fake_time: FakeTime) -> None:
    route = api.post(BATCHES).mock(side_effect=[error_reply(529),
                                                httpx.Response(200, json=batch(processing=2))])  # fmt: skip
    status = engines(fake_time).api.create([{"custom_id": "a", "params": {}}])

    assert route.call_count == 2 and len(fake_time.sleeps) == 1
    assert status.id == "msgbatch_01" and status.counts["processing"] == 2 and not status.ended


def test_a_refused_create_is_one_line(api: respx.MockRouter, fake_time: FakeTime) -> None:
    api.post(BATCHES).mock(return_value=error_reply(400))
    with pytest.raises(LLMUnavailableError, match=r"Message Batches create: .*HTTP 400"):
        engines(fake_time).api.create([{"custom_id": "a", "params": {}}])


def test_retrieve_in_progress_then_ended(api: respx.MockRouter, fake_time: FakeTime) -> None:
    api.get(f"{BATCHES}/msgbatch_01").mock(side_effect=[
        httpx.Response(200, json=batch(processing=3, succeeded=1)),
        httpx.Response(200, json=batch("ended", succeeded=2, errored=1, expired=1)),
    ])  # fmt: skip
    first, second = (engines(fake_time).api.retrieve("msgbatch_01") for _ in range(2))

    assert first.processing_status == "in_progress" and (first.done, first.total) == (1, 4)
    assert second.ended and (second.done, second.total) == (4, 4)


def test_results_of_every_kind_in_any_order(api: respx.MockRouter, fake_time: FakeTime) -> None:
    ok = message([{"type": "text", "text": "{}"}], stop_reason="end_turn")
    lines = [
        {"custom_id": "d", "result": {"type": "canceled"}},
        {"custom_id": "b", "result": {"type": "errored", "error": {"type": "error", "error": {
            "type": "invalid_request_error", "message": "max_tokens: too large"}}}},
        {"custom_id": "a", "result": {"type": "succeeded", "message": ok}},
        {"custom_id": "c", "result": {"type": "expired"}},
    ]  # fmt: skip
    api.get(f"{BATCHES}/msgbatch_01").mock(return_value=httpx.Response(200, json=batch("ended")))
    body = "\n".join(json.dumps(line) for line in lines) + "\nnot json\n"
    api.get(f"{BATCHES}/msgbatch_01/results").mock(return_value=httpx.Response(200, text=body))

    results = engines(fake_time).api.results("msgbatch_01")

    assert {k: r.kind for k, r in results.items()} == {"a": "succeeded", "b": "errored",
                                                       "c": "expired", "d": "canceled"}  # fmt: skip
    assert results["b"].error == "invalid_request_error: max_tokens: too large"
    assert results["a"].message is not None and results["a"].message["id"] == "msg_test"


def test_a_batch_id_that_is_not_one_is_refused(api: respx.MockRouter, fake_time: FakeTime) -> None:
    api.post(BATCHES).mock(return_value=httpx.Response(200, json=batch(batch_id="../../x")))
    with pytest.raises(LLMUnavailableError, match="unusable batch id"):
        engines(fake_time).api.create([{"custom_id": "a", "params": {}}])


def test_a_batch_answer_is_billed_at_the_batch_price(fake_time: FakeTime) -> None:
    usage = {"input_tokens": 10_000, "output_tokens": 2_000, "cache_read_input_tokens": 4_000,
             "cache_creation_input_tokens": 0}  # fmt: skip
    made = engines(fake_time)
    ledger = made.batch.ledger
    params = {"model": DEFAULT_MODEL, "max_tokens": 10, "messages": []}
    ledger.begin("3")
    slot: Slot = ledger.slot(params)
    ledger.index[slot.key] = "phase-3-chunk-1"
    answer = message([{"type": "text", "text": "{}"}], usage=usage)
    ledger.results["phase-3-chunk-1"] = StoredResult("succeeded", answer)
    ledger.begin("3")  # the replay asks again from the start of the case

    answered = made.batch._send(params, 10)

    info = model_info(DEFAULT_MODEL)
    assert answered.id == "msg_test"
    assert made.batch.meter.total.estimated_cost_usd == pytest.approx(
        estimate_cost(info, **usage) * info.batch_factor
    )
    assert ledger.current().from_batch == 1 and ledger.used == {"phase-3-chunk-1"}


@pytest.mark.parametrize(
    "reply",
    [httpx.Response(200, text="<html>gateway</html>", headers={"content-type": "text/html"}),
     httpx.Response(200, json={"hello": "proxy"}),
     httpx.Response(200, text="{not json", headers={"content-type": "application/json"})],
)  # fmt: skip
def test_a_broken_proxy_is_one_line_not_a_crash(
    api: respx.MockRouter, fake_time: FakeTime, reply: httpx.Response
) -> None:
    api.get(f"{BATCHES}/msgbatch_01").mock(return_value=reply)
    with pytest.raises(LLMUnavailableError, match="proxy or gateway"):
        engines(fake_time).api.retrieve("msgbatch_01")
