"""The loopback fake itself, through the real SDK and through raw HTTP (so other tests can trust it)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from legion_llm.llm.claude_api.http import transport_failure
from legion_llm.llm.tokens import count_tokens
from tests.fakes import FakeMessagesAPI, RecordedRequest, Reply, Response
from tests.fakes.billing import TOOL_SYSTEM_TOKENS

MODEL = "claude-sonnet-5-5"  # minimum cacheable prefix 1,024 in the fake's table
USER = [{"role": "user", "content": "Summarise."}]


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as fake:
        yield fake


def client(api: FakeMessagesAPI, **kwargs: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-fake", base_url=api.base_url, max_retries=0, **kwargs)


def system(words: int, marked: bool = True) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": "word " * words}
    if marked:
        block["cache_control"] = {"type": "ephemeral"}
    return [block]


def raw_stream(api: FakeMessagesAPI, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    request = urllib.request.Request(
        api.base_url + "/v1/messages?beta=true", data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json", "x-api-key": "sk-raw"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.headers["content-type"] == "text/event-stream"
        text = response.read().decode()
    events = []
    for chunk in text.strip().split("\n\n"):
        name, data = chunk.split("\n", 1)
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_stream_sends_the_api_event_sequence(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.tool({"echo": "legion"}, name="record", thinking="hmm", chunk_chars=5))
    body = {"model": MODEL, "max_tokens": 50, "messages": USER, "stream": True}

    events = raw_stream(api, body)

    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names[1:3] == ["content_block_start", "ping"]
    deltas = [d["delta"]["type"] for n, d in events if n == "content_block_delta"]
    assert "thinking_delta" in deltas and "signature_delta" in deltas
    json_parts = [d["delta"]["partial_json"] for n, d in events
                  if n == "content_block_delta" and d["delta"]["type"] == "input_json_delta"]  # fmt: skip
    assert len(json_parts) > 1 and json.loads("".join(json_parts)) == {"echo": "legion"}
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "tool_use"
    assert final["usage"]["output_tokens"] > 1
    # the request was logged with its query string, headers and body
    logged = api.requests[0]
    assert (logged.path, logged.query, logged.api_key) == ("/v1/messages", "beta=true", "sk-raw")
    assert logged.body == body and logged.streamed


def test_sdk_streaming_helper_reads_text_and_tool_answers(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.text("Hello there, long answer " * 20, chunk_chars=7))
    with client(api).messages.stream(model=MODEL, max_tokens=500, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 10
    assert final.content[0].type == "text" and final.stop_reason == "end_turn"
    assert final.usage.output_tokens == api.requests[0].usage["output_tokens"]  # type: ignore[index]


def test_answer_takes_the_shape_the_request_asked_for(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.answer({"x": 1}), Reply.answer({"x": 2}))
    c = client(api)
    tool = {"name": "record_x", "input_schema": {"type": "object"}}
    forced = c.messages.create(model=MODEL, max_tokens=50, messages=USER, tools=[tool],
                               tool_choice={"type": "tool", "name": "record_x"})  # fmt: skip
    schema = {"type": "json_schema", "schema": {"type": "object"}}
    as_json = c.messages.create(model=MODEL, max_tokens=50, messages=USER,
                                output_config={"format": schema})  # fmt: skip
    assert forced.content[0].type == "tool_use" and forced.content[0].input == {"x": 1}
    assert as_json.content[0].type == "text" and json.loads(as_json.content[0].text) == {"x": 2}
    # the tool-use system prompt is billed as input, as the API does
    assert api.requests[0].usage["input_tokens"] > TOOL_SYSTEM_TOKENS["tool"]  # type: ignore[index]


def test_cache_is_written_then_read_for_the_same_prefix(api: FakeMessagesAPI) -> None:
    api.enqueue(*[Reply.text("ok")] * 3)
    c = client(api)
    first = c.messages.create(model=MODEL, max_tokens=10, system=system(1500), messages=USER)
    second = c.messages.create(model=MODEL, max_tokens=10, system=system(1500), messages=USER)
    other_model = c.messages.create(model="claude-opus-5", max_tokens=10, system=system(1500),
                                    messages=USER)  # fmt: skip
    prefix = count_tokens(system(1500)[0]["text"])
    assert first.usage.cache_creation_input_tokens == prefix
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == prefix
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == first.usage.input_tokens  # the uncached suffix
    assert other_model.usage.cache_read_input_tokens == 0  # caches are per model


def test_prefix_below_the_minimum_is_never_cached(api: FakeMessagesAPI) -> None:
    api.enqueue(*[Reply.text("ok")] * 2)
    c = client(api)
    for _ in range(2):
        usage = c.messages.create(model=MODEL, max_tokens=10, system=system(900),
                                  messages=USER).usage  # fmt: skip
        assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0
        assert usage.input_tokens >= 900


def test_changed_suffix_reads_the_prefix_and_writes_the_rest() -> None:
    now = [0.0]
    with FakeMessagesAPI(clock=lambda: now[0]) as api:
        api.enqueue(*[Reply.text("ok")] * 4)
        c = client(api)
        docs = {"type": "text", "text": "doc " * 1200, "cache_control": {"type": "ephemeral"}}

        def ask(feedback: str) -> Any:
            content = [docs, {"type": "text", "text": feedback}]
            return c.messages.create(model=MODEL, max_tokens=10, system=system(100, False),
                                     messages=[{"role": "user", "content": content}]).usage  # fmt: skip

        first, second = ask("first"), ask("second, with feedback")
        assert first.cache_creation_input_tokens > 1200 and second.cache_read_input_tokens > 1200
        now[0] += 301  # past the 5-minute lifetime: written again
        third = ask("third")
        assert third.cache_read_input_tokens == 0 and third.cache_creation_input_tokens > 1200


def test_automatic_caching_marks_the_last_block(api: FakeMessagesAPI) -> None:
    api.enqueue(*[Reply.text("ok")] * 2)
    c = client(api)
    for expected_read in (0, 1):
        usage = c.messages.create(model=MODEL, max_tokens=10, cache_control={"type": "ephemeral"},
                                  system=system(1500, marked=False), messages=USER).usage  # fmt: skip
        assert (usage.cache_read_input_tokens > 0) == bool(expected_read)


def test_count_tokens_counts_without_caching(api: FakeMessagesAPI) -> None:
    counted = client(api).messages.count_tokens(model=MODEL, system=system(1500), messages=USER)
    assert counted.input_tokens >= 1500
    assert api.calls("/v1/messages/count_tokens")[0].usage == {"input_tokens": counted.input_tokens}


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply.error(401), anthropic.AuthenticationError),
        (Reply.error(400, message="bad"), anthropic.BadRequestError),
        (Reply.error(404), anthropic.NotFoundError),
        (Reply.error(429, headers={"retry-after": "1"}), anthropic.RateLimitError),
        (Reply.error(529), anthropic.OverloadedError),
    ],
)
def test_scripted_errors_reach_the_sdk_typed(
    api: FakeMessagesAPI, reply: Reply, error: type[Exception]
) -> None:
    api.enqueue(reply)
    with pytest.raises(error):
        client(api).messages.create(model=MODEL, max_tokens=10, messages=USER)


def test_the_fake_refuses_like_the_api() -> None:
    with FakeMessagesAPI(api_keys={"sk-good"}, models={MODEL}) as api:
        api.enqueue(Reply.text("ok"))
        bad_key = anthropic.Anthropic(api_key="sk-bad", base_url=api.base_url, max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            bad_key.messages.create(model=MODEL, max_tokens=10, messages=USER)
        with pytest.raises(anthropic.NotFoundError, match="claude-nope"):
            client(api, default_headers={"x-api-key": "sk-good"}).messages.create(
                model="claude-nope", max_tokens=10, messages=USER
            )
        five = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 5
        with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
            client(api, default_headers={"x-api-key": "sk-good"}).messages.create(
                model=MODEL, max_tokens=10, system=five, messages=USER
            )
        assert api.pending == 1  # no refused request consumed the script


def test_nothing_scripted_is_a_500_naming_the_request(api: FakeMessagesAPI) -> None:
    with pytest.raises(anthropic.InternalServerError, match="no reply scripted"):
        client(api).messages.create(model=MODEL, max_tokens=10, messages=USER)


def test_a_responder_sees_each_request_and_can_defer_to_the_queue(api: FakeMessagesAPI) -> None:
    seen: list[RecordedRequest] = []

    def responder(request: RecordedRequest) -> Reply | None:
        seen.append(request)
        return Reply.text("from responder") if "hello" in json.dumps(request.body) else None

    api.responder = responder
    api.enqueue(Reply.text("from queue"))
    c = client(api)
    greet = c.messages.create(
        model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "hello"}]
    )
    other = c.messages.create(model=MODEL, max_tokens=10, messages=USER)
    assert greet.content[0].text == "from responder"  # type: ignore[union-attr]
    assert other.content[0].text == "from queue"  # type: ignore[union-attr]
    assert len(seen) == 2


def test_stall_mid_stream_trips_a_read_timeout(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.text("slow " * 50, stall_after=4, stall_s=5))
    with (
        pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)) as caught,
        client(api).messages.stream(
            model=MODEL, max_tokens=100, messages=USER, timeout=httpx2.Timeout(5, read=0.3)
        ) as stream,  # fmt: skip
    ):
        stream.until_done()
    assert isinstance(transport_failure(caught.value), httpx2.ReadTimeout)


def test_error_event_and_hang_up_mid_stream(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.text("a" * 200, stall_after=3, stream_error=("overloaded_error", "Overloaded")),
                Reply.text("b" * 200, stall_after=3, then="close"))  # fmt: skip
    c = client(api)
    with (
        pytest.raises(anthropic.APIStatusError, match="overloaded_error"),
        c.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream,
    ):
        stream.until_done()
    # the hang-up surfaces raw (anthropic < 2.17) or wrapped in APIConnectionError (2.17 on)
    with (
        pytest.raises((httpx2.RemoteProtocolError, anthropic.APIConnectionError)) as caught,
        c.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream,
    ):
        stream.until_done()
    failure = transport_failure(caught.value)
    assert isinstance(failure, httpx2.RemoteProtocolError)
    assert "incomplete chunked read" in str(failure)


def test_non_json_200_and_unknown_routes(api: FakeMessagesAPI) -> None:
    api.enqueue(Reply.raw(b"<html>gateway</html>"))
    with urllib.request.urlopen(
        urllib.request.Request(api.base_url + "/v1/messages", data=b'{"model": "m"}'),
        timeout=5,
    ) as response:
        assert response.read() == b"<html>gateway</html>"
    with pytest.raises(anthropic.NotFoundError, match="GET /v1/models"):
        client(api).models.list()


def test_add_route_extends_the_fake(api: FakeMessagesAPI) -> None:
    def batches(fake: FakeMessagesAPI, request: RecordedRequest) -> Response:
        body = request.body
        results = [fake.complete(r["params"], Reply.text("done")) for r in body["requests"]]
        return Response.json(200, {"id": "msgbatch_1", "n": len(results)})

    api.add_route("POST", r"/v1/messages/batches", batches)
    batch = client(api).messages.batches.create(
        requests=[{"custom_id": "a", "params": {"model": MODEL, "max_tokens": 5, "messages": USER}}]
    )
    assert batch.id == "msgbatch_1"
    assert api.requests[-1].path == "/v1/messages/batches"
