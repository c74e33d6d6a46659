"""A loopback fake of Anthropic's Messages API that logs every request and bills like the API.

    with FakeMessagesAPI() as api:                       # 127.0.0.1, a free port, one thread
        api.enqueue(Reply.answer({"echo": "legion", "length": 6}), Reply.error(529))
        client = anthropic.Anthropic(api_key="sk-test", base_url=api.base_url)
        ...                                              # or ANTHROPIC_BASE_URL=api.base_url
        api.requests[0].body["system"]                   # every request: body, headers, usage

Endpoints: `POST /v1/messages` (JSON, or server-sent events when the body says `"stream": true`,
exactly the events the API sends) and `POST /v1/messages/count_tokens`. Query strings are
ignored (`/v1/messages?beta=true` is the same route). Anything else is a 404 in the API's error
shape, logged like the rest; `add_route` adds an endpoint (the Message Batches endpoints, say),
and `complete(body)` answers one Messages body through the same queue, responder and billing,
for such an endpoint to reuse.

Answers come from `responder(request)` when it returns a Reply, else from the queue (`enqueue`);
with neither, a 500 names the request that nothing was scripted for. Usage is billed from the
body (billing.py: input tokens, the cache simulation, output tokens of the content) unless the
Reply overrides it. `api_keys` (optional) makes every other key a 401; `models` (optional) makes
every other model a 404. Nothing here touches the network beyond 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fakes.billing import (
    MAX_BREAKPOINTS,
    Counter,
    PromptCache,
    breakpoints,
    default_counter,
    output_tokens,
    segments,
)
from tests.fakes.replies import (
    Reply,
    default_stop_reason,
    message_json,
    resolve_content,
    sse,
    stream_events,
)


@dataclass
class RecordedRequest:
    """One request as the fake saw it, and what it answered."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes
    body: Any
    at: float
    status: int | None = None
    usage: dict[str, Any] | None = None
    reply: Reply | None = None

    @property
    def streamed(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def api_key(self) -> str | None:
        """The key sent in `x-api-key` or `Authorization: Bearer`."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"

    @classmethod
    def json(cls, status: int, data: Any, headers: Mapping[str, str] | None = None) -> Response:
        return cls(status, json.dumps(data).encode(), dict(headers or {}))


Responder = Callable[[RecordedRequest], "Reply | None"]
RouteHandler = Callable[["FakeMessagesAPI", RecordedRequest], Response]


def api_error(status: int, kind: str, message: str) -> Response:
    return Response.json(status, {"type": "error", "error": {"type": kind, "message": message}})


class FakeMessagesAPI:
    def __init__(
        self,
        *,
        responder: Responder | None = None,
        token_counter: Counter | None = None,
        cache_minimum: Mapping[str, int] | None = None,
        api_keys: Iterable[str] | None = None,
        models: Iterable[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.responder = responder
        self.count = token_counter or default_counter()
        self.cache = PromptCache(cache_minimum, clock=clock)
        self.api_keys = None if api_keys is None else set(api_keys)
        self.models = None if models is None else set(models)
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._routes: list[tuple[str, re.Pattern[str], RouteHandler]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add_route("POST", r"/v1/messages", FakeMessagesAPI._messages_route)
        self.add_route("POST", r"/v1/messages/count_tokens", FakeMessagesAPI._count_route)

    # life cycle ---------------------------------------------------------------------------
    def start(self) -> FakeMessagesAPI:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-messages-api"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends every stall and drip at once
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # scripting ------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> FakeMessagesAPI:
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    def add_route(self, method: str, path: str, handler: RouteHandler) -> None:
        """Answer `method` requests whose path (without query) fully matches the regex `path`."""
        self._routes.insert(0, (method.upper(), re.compile(path), handler))

    def sleep(self, seconds: float) -> bool:
        """Wait up to `seconds`; False when the fake is stopping (end the response then)."""
        return not self._stopping.wait(seconds) if seconds > 0 else True

    # what was sent --------------------------------------------------------------------------
    def calls(self, path: str = "/v1/messages") -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]

    def total_usage(self, path: str = "/v1/messages") -> dict[str, int]:
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                "output_tokens")  # fmt: skip
        total = dict.fromkeys(keys, 0)
        for request in self.calls(path):
            for key in keys:
                total[key] += int((request.usage or {}).get(key, 0))
        return total

    # answering ------------------------------------------------------------------------------
    def next_reply(self, request: RecordedRequest) -> Reply | None:
        if self.responder is not None:
            reply = self.responder(request)
            if reply is not None:
                return reply
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def check(self, request: RecordedRequest) -> Response | None:
        """The API's own refusals: bad JSON, a wrong key, an unknown model, too many breakpoints."""
        if self.api_keys is not None and request.api_key not in self.api_keys:
            return api_error(401, "authentication_error", "invalid x-api-key")
        body = request.body
        if not isinstance(body, dict):
            return api_error(400, "invalid_request_error", "request body is not a JSON object")
        model = body.get("model")
        if not isinstance(model, str):
            return api_error(400, "invalid_request_error", "model: Field required")
        if self.models is not None and model not in self.models:
            return api_error(404, "not_found_error", f"model: {model}")
        if breakpoints(body) > MAX_BREAKPOINTS:
            message = f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided."
            return api_error(400, "invalid_request_error", message)
        return None

    def complete(self, body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
        """The message `reply` makes for `body`, billed (the cache is read and written)."""
        blocks = resolve_content(reply, body)
        model = str(body.get("model"))
        bill = self.cache.bill(model, segments(body, self.count))
        usage = bill.usage(output_tokens(blocks, self.count))
        usage.update(reply.usage or {})
        stop = reply.stop_reason or default_stop_reason(blocks)
        return message_json(f"msg_fake_{next(self._ids):04d}", model, blocks, stop, usage)

    def _messages_route(self, request: RecordedRequest) -> Response:
        refused = self.check(request)
        if refused is not None:
            return refused
        reply = self.next_reply(request)
        if reply is None:
            what = f"{request.method} {request.path} (request {len(self.requests)})"
            return api_error(500, "api_error", f"FakeMessagesAPI: no reply scripted for {what}")
        request.reply = reply
        if not self.sleep(reply.delay_s):
            return Response(503)
        if reply.body is not None or reply.status != 200:
            return Response(
                reply.status, reply.body or b"", dict(reply.headers), reply.content_type
            )
        message = self.complete(request.body, reply)
        request.usage = message["usage"]
        if request.streamed:
            return _StreamResponse(200, headers=dict(reply.headers), message=message, reply=reply)
        return Response.json(200, message, reply.headers)

    def _count_route(self, request: RecordedRequest) -> Response:
        refused = self.check(request)
        if refused is not None:
            return refused
        reply = self.responder(request) if self.responder is not None else None
        if reply is not None and (reply.status != 200 or reply.body is not None):
            return Response(
                reply.status, reply.body or b"", dict(reply.headers), reply.content_type
            )
        total = sum(s.tokens for s in segments(request.body, self.count))
        request.usage = {"input_tokens": total}
        return Response.json(200, {"input_tokens": total})

    def dispatch(self, request: RecordedRequest) -> Response:
        for method, pattern, handler in self._routes:
            if method == request.method and pattern.fullmatch(request.path):
                return handler(self, request)
        return api_error(404, "not_found_error", f"Not found: {request.method} {request.path}")


@dataclass
class _StreamResponse(Response):
    message: dict[str, Any] = field(default_factory=dict)
    reply: Reply = field(default_factory=Reply)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeMessagesAPI/1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    @property
    def fake(self) -> FakeMessagesAPI:
        return self.server.fake  # type: ignore[attr-defined,no-any-return]

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = RecordedRequest(self.command, parts.path, parts.query, headers, raw, body,
                                  time.time())  # fmt: skip
        with self.fake._lock:
            self.fake.requests.append(request)
        response = self.fake.dispatch(request)
        request.status = response.status
        try:
            if isinstance(response, _StreamResponse):
                self._stream(response)
            else:
                self._send(response)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a stall timeout, say)

    def _head(self, status: int, content_type: str, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        # one request per connection: a client never keeps a pooled socket to a fake that is
        # gone (which would surface later as an unclosed-socket ResourceWarning)
        self.send_header("connection", "close")
        self.close_connection = True
        self.send_header("request-id", f"req_fake_{len(self.fake.requests):04d}")
        for name, value in headers.items():
            self.send_header(name, value)

    def _send(self, response: Response) -> None:
        self._head(response.status, response.content_type, response.headers)
        self.send_header("content-length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def _stream(self, response: _StreamResponse) -> None:
        reply = response.reply
        self._head(200, "text/event-stream", {"cache-control": "no-cache", **response.headers})
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for sent, (name, data) in enumerate(stream_events(response.message, reply.chunk_chars)):
            if sent == reply.stall_after and not self._stall(reply):
                return
            if sent and not self.fake.sleep(reply.drip_s):
                self.close_connection = True
                return
            self._chunk(sse(name, data))
        self._chunk(b"")

    def _stall(self, reply: Reply) -> bool:
        """Stop sending for `stall_s`; then carry on, send an error event, or hang up."""
        self.wfile.flush()
        if not self._wait(reply) or reply.then == "close":
            self.close_connection = True
            return False
        if reply.stream_error is not None:
            kind, message = reply.stream_error
            self._chunk(
                sse("error", {"type": "error", "error": {"type": kind, "message": message}})
            )
            self._chunk(b"")
            return False
        return True

    def _wait(self, reply: Reply) -> bool:
        """Sit out the stall, sending a ping every `ping_every_s` if asked; False if stopping."""
        if reply.ping_every_s <= 0:
            return self.fake.sleep(reply.stall_s)
        waited = 0.0
        while waited < reply.stall_s:
            step = min(reply.ping_every_s, reply.stall_s - waited)
            if not self.fake.sleep(step):
                return False
            waited += step
            self._chunk(sse("ping", {"type": "ping"}))
        return True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()
