"""The fake's Message Batches endpoints through the real SDK (so the product's batch tests can trust it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.fakes import FakeMessagesAPI, Reply
from tests.fakes.batches import BATCH_ITEM_PATH, FakeBatches

MODEL = "claude-sonnet-5-5"


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as fake:
        yield fake


def client(api: FakeMessagesAPI) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-fake", base_url=api.base_url, max_retries=0)


def request(custom_id: str, text: str = "Summarise.") -> dict[str, Any]:
    params = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": text}]}
    return {"custom_id": custom_id, "params": params}


def test_create_poll_in_progress_then_ended_and_results_out_of_order(api: FakeMessagesAPI) -> None:
    batches = FakeBatches(api, polls_to_end=2, order="reverse")
    batches.outcome.update({"b": "errored", "c": "expired", "d": "canceled"})
    api.responder = lambda r: Reply.text("done") if r.path == BATCH_ITEM_PATH else None
    sdk = client(api)

    created = sdk.messages.batches.create(requests=[request(x) for x in "abcde"])
    first = sdk.messages.batches.retrieve(created.id)
    second = sdk.messages.batches.retrieve(created.id)
    results = list(sdk.messages.batches.results(created.id))

    assert created.processing_status == "in_progress"
    assert created.request_counts.processing == 5
    assert first.processing_status == "in_progress" and first.results_url is None
    assert 0 < first.request_counts.processing < 5
    assert second.processing_status == "ended" and second.results_url
    assert second.request_counts.succeeded == 2 and second.request_counts.errored == 1
    kinds = {r.custom_id: r.result.type for r in results}
    assert kinds == {"a": "succeeded", "b": "errored", "c": "expired", "d": "canceled",
                     "e": "succeeded"}  # fmt: skip
    assert [r.custom_id for r in results] != sorted(kinds)  # not in request order
    done = next(r for r in results if r.custom_id == "a").result
    assert done.type == "succeeded" and done.message.content[0].text == "done"
    assert done.message.usage.service_tier == "batch"
    assert batches.total_usage()["input_tokens"] > 0


def test_results_before_the_end_are_refused(api: FakeMessagesAPI) -> None:
    FakeBatches(api, polls_to_end=4)
    api.responder = lambda r: Reply.text("ok")
    sdk = client(api)
    created = sdk.messages.batches.create(requests=[request(x) for x in "abcd"])

    with pytest.raises(anthropic.AnthropicError, match="results_url"):
        list(sdk.messages.batches.results(created.id))


@pytest.mark.parametrize(
    ("custom_id", "problem"),
    [("has space", "pattern"), ("x" * 65, "pattern"), ("", "pattern")],
)
def test_create_checks_custom_ids_as_the_api_does(
    api: FakeMessagesAPI, custom_id: str, problem: str
) -> None:
    FakeBatches(api)
    with pytest.raises(anthropic.BadRequestError, match=problem):
        client(api).messages.batches.create(requests=[request(custom_id)])


def test_create_refuses_duplicate_ids_and_streaming(api: FakeMessagesAPI) -> None:
    FakeBatches(api)
    sdk = client(api)
    with pytest.raises(anthropic.BadRequestError, match="duplicate"):
        sdk.messages.batches.create(requests=[request("a"), request("a")])
    streamed = request("s")
    streamed["params"]["stream"] = True
    with pytest.raises(anthropic.BadRequestError, match="stream"):
        sdk.messages.batches.create(requests=[streamed])


def test_cancel_leaves_unprocessed_requests_canceled(api: FakeMessagesAPI) -> None:
    FakeBatches(api, polls_to_end=4)
    api.responder = lambda r: Reply.text("ok")
    sdk = client(api)
    created = sdk.messages.batches.create(requests=[request(x) for x in "abcd"])
    sdk.messages.batches.retrieve(created.id)  # one of four processed
    sdk.messages.batches.cancel(created.id)
    ended = sdk.messages.batches.retrieve(created.id)

    assert ended.processing_status == "ended"
    assert ended.request_counts.succeeded == 1 and ended.request_counts.canceled == 3


def test_batch_requests_share_the_prompt_cache(api: FakeMessagesAPI) -> None:
    FakeBatches(api)
    api.responder = lambda r: Reply.text("ok")
    system = [{"type": "text", "text": "rule " * 1500, "cache_control": {"type": "ephemeral"}}]
    requests = [request(x) for x in "ab"]
    for entry in requests:
        entry["params"]["system"] = system
    sdk = client(api)
    created = sdk.messages.batches.create(requests=requests)
    sdk.messages.batches.retrieve(created.id)
    usage = {r.custom_id: r.result.message.usage for r in sdk.messages.batches.results(created.id)}

    assert usage["a"].cache_creation_input_tokens > 0
    assert usage["b"].cache_read_input_tokens == usage["a"].cache_creation_input_tokens
