"""What the fake Messages API answers: a `Reply`, turned into a message or a stream of events.

A Reply is a script for one response. Most tests use a builder:

    Reply.answer({"echo": "legion", "length": 6})   # as a forced tool call or as JSON text,
                                                    # whichever shape the request asked for
    Reply.tool({"x": 1}, name="record_x")           # a tool_use block
    Reply.text("Hello")                             # a text block
    Reply.error(401, "authentication_error", "invalid x-api-key")
    Reply.raw(b"<html>502</html>", status=200, content_type="text/html")   # a broken proxy

and options that change how it is delivered: `delay_s` (before the headers), `drip_s` (between
stream events: a slow token drip), `stall_after` + `stall_s` (stop sending for a while after that
many events; then `then="continue"` or `"close"` the connection; with `ping_every_s` the stall
keeps the connection alive with `ping` events and no tokens), `stream_error` (an `error`
event after `stall_after` events, as the API sends for an overload mid-stream), `thinking`
(a thinking block first, billed as output), `stop_reason` and `usage` (overrides).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

STATUS_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Reply:
    status: int = 200
    content: tuple[Mapping[str, Any], ...] = ()
    structured: Any = None
    stop_reason: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str = "application/json"
    usage: Mapping[str, int] | None = None
    thinking: str | None = None
    delay_s: float = 0.0
    drip_s: float = 0.0
    stall_after: int | None = None
    stall_s: float = 0.0
    then: Literal["continue", "close"] = "continue"
    ping_every_s: float = 0.0
    stream_error: tuple[str, str] | None = None
    chunk_chars: int = 40

    # builders -------------------------------------------------------------------------------
    @classmethod
    def answer(cls, obj: Any, **options: Any) -> Reply:
        """A structured answer in the shape the request asked for (forced tool or JSON schema)."""
        return cls(structured=obj, **options)

    @classmethod
    def tool(cls, tool_input: Mapping[str, Any], *, name: str, **options: Any) -> Reply:
        block = {"type": "tool_use", "id": "", "name": name, "input": dict(tool_input)}
        return cls(content=(block,), **options)

    @classmethod
    def text(cls, text: str, **options: Any) -> Reply:
        return cls(content=({"type": "text", "text": text},), **options)

    @classmethod
    def error(
        cls, status: int, kind: str | None = None, message: str = "fake error", **options: Any
    ) -> Reply:
        error = {"type": kind or STATUS_TYPES.get(status, "api_error"), "message": message}
        body = json.dumps({"type": "error", "error": error}).encode()
        return cls(status=status, body=body, **options)

    @classmethod
    def raw(
        cls, body: bytes, *, status: int = 200, content_type: str = "text/html", **options: Any
    ) -> Reply:
        return cls(status=status, body=body, content_type=content_type, **options)

    def with_options(self, **options: Any) -> Reply:
        return replace(self, **options)


def resolve_content(reply: Reply, body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of the answer, with a structured answer shaped for this request."""
    blocks: list[dict[str, Any]] = []
    if reply.thinking is not None:
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "sig-fake"})
    if reply.structured is not None:
        blocks.append(_structured_block(reply.structured, body))
    blocks.extend(dict(b) for b in reply.content)
    for index, block in enumerate(blocks):
        if block.get("type") == "tool_use" and not block.get("id"):
            block["id"] = f"toolu_fake_{index:02d}"
    return blocks


def _structured_block(obj: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    choice = body.get("tool_choice")
    tools = body.get("tools") or []
    name = None
    if isinstance(choice, Mapping) and choice.get("type") == "tool":
        name = choice.get("name")
    elif len(tools) == 1 and isinstance(tools[0], Mapping):
        name = tools[0].get("name")
    if name is not None and not (body.get("output_config") or {}).get("format"):
        return {"type": "tool_use", "id": "", "name": name, "input": obj}
    return {"type": "text", "text": obj if isinstance(obj, str) else json.dumps(obj)}


def default_stop_reason(blocks: list[dict[str, Any]]) -> str:
    return "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"


def message_json(
    message_id: str, model: str, blocks: list[dict[str, Any]], stop: str, usage: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _block_events(index: int, block: dict[str, Any], size: int) -> Iterator[dict[str, Any]]:
    kind = block.get("type")
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block["text"], size)]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        raw = json.dumps(block.get("input", {}))
        deltas = [{"type": "input_json_delta", "partial_json": c} for c in _chunks(raw, size)]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": c} for c in _chunks(block["thinking"], size)
        ]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "sig")})
    else:
        start, deltas = block, []
    yield {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield {"type": "content_block_delta", "index": index, "delta": delta}
    yield {"type": "content_block_stop", "index": index}


def stream_events(message: dict[str, Any], size: int) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events the API sends for `message`, in order, as (event name, data)."""
    usage = message["usage"]
    start_usage = {**usage, "output_tokens": 1}
    shell = {**message, "content": [], "stop_reason": None, "usage": start_usage}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": shell}]
    for index, block in enumerate(message["content"]):
        block_events = list(_block_events(index, block, size))
        events.extend(block_events[:1])
        if index == 0:
            events.append({"type": "ping"})
        events.extend(block_events[1:])
    delta_usage = {k: usage[k] for k in usage if k.endswith("tokens")}
    events.append({
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": delta_usage,
    })  # fmt: skip
    events.append({"type": "message_stop"})
    return [(str(e["type"]), e) for e in events]


def sse(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
