"""The Message Batches endpoints on the loopback fake, answered the way the API answers them.

    with FakeMessagesAPI() as api:
        batches = FakeBatches(api, polls_to_end=2, order="shuffle")
        batches.outcome["phase-03-chunk-1"] = "errored"      # or "expired", "canceled", a Reply
        ...  # the product creates a batch, polls it, downloads the results

Routes (added to the fake with `add_route`):

| route | what it does |
|---|---|
| `POST /v1/messages/batches` | checks the body as the API does (1..100,000 requests, each `custom_id` unique and 1-64 characters of `[a-zA-Z0-9_-]`, `params` with model, max_tokens and messages, no `stream`), then a `message_batch` object, `in_progress` |
| `GET /v1/messages/batches/{id}` | one poll: the batch moves on (`polls_to_end` polls finish it, the requests in even shares), `request_counts` show the progress, `results_url` appears when it has ended |
| `GET /v1/messages/batches/{id}/results` | the results as JSON Lines, in `order` ("shuffle" (seeded), "reverse" or "given"); 404 before the batch has ended |
| `POST /v1/messages/batches/{id}/cancel` | `canceling`; the requests not yet processed end `canceled` at the next poll |

Each request is answered like `POST /v1/messages`: the fake's responder and queue give the Reply
(a responder sees a RecordedRequest whose path is `BATCH_ITEM_PATH` and whose body is the
request's `params`), the body is billed with the same prompt cache, and the message carries
`service_tier: "batch"`. `outcome[custom_id]` overrides one request: "errored" (or
`("errored", type, message)`), "expired", "canceled", "missing" (no line at all: a careless
stand-in), "malformed" (a succeeded line whose message is not a Message), or a Reply.
`items` records every processed request with what it was billed (`total_usage()` sums them);
`results_page` (bytes) answers the results file with that instead, as a broken proxy would.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.messages_api import FakeMessagesAPI, RecordedRequest, Response, api_error
from tests.fakes.replies import Reply

BATCH_ITEM_PATH = "/v1/messages/batches/item"
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MAX_REQUESTS = 100_000
RESULT_KINDS = ("succeeded", "errored", "canceled", "expired")
_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
               "output_tokens")  # fmt: skip


@dataclass
class BatchItem:
    """One request of a batch: its params, and once processed, its result line."""

    custom_id: str
    params: dict[str, Any]
    result: dict[str, Any] | None = None
    usage: dict[str, Any] | None = None


@dataclass
class FakeBatch:
    id: str
    items: list[BatchItem]
    created_at: datetime
    status: str = "in_progress"
    polls: int = 0
    cancel_at: datetime | None = None
    ended_at: datetime | None = None

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("processing", *RESULT_KINDS), 0)
        for item in self.items:
            kind = item.result["type"] if item.result else "processing"
            counts["succeeded" if kind == "missing" else kind] += 1
        return counts


@dataclass
class FakeBatches:
    api: FakeMessagesAPI
    polls_to_end: int = 1
    order: str = "shuffle"
    seed: int = 16
    outcome: dict[str, Any] = field(default_factory=dict)
    results_page: bytes | None = None  # answer the results file with this (a proxy's page)
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    items: list[BatchItem] = field(default_factory=list)
    results_downloads: int = 0

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        base = r"/v1/messages/batches"
        self.api.add_route("POST", base, lambda api, r: self._create(r))
        self.api.add_route("GET", base + r"/([A-Za-z0-9_]+)", lambda api, r: self._retrieve(r))
        self.api.add_route(
            "GET", base + r"/([A-Za-z0-9_]+)/results", lambda api, r: self._results(r)
        )
        self.api.add_route(
            "POST", base + r"/([A-Za-z0-9_]+)/cancel", lambda api, r: self._cancel(r)
        )

    # what was billed ------------------------------------------------------------------------
    def total_usage(self) -> dict[str, int]:
        total = dict.fromkeys(_USAGE_KEYS, 0)
        for item in self.items:
            for key in _USAGE_KEYS:
                total[key] += int((item.usage or {}).get(key, 0))
        return total

    def creates(self) -> list[RecordedRequest]:
        return [
            r for r in self.api.requests if r.method == "POST" and r.path == "/v1/messages/batches"
        ]

    # routes ---------------------------------------------------------------------------------
    def _create(self, request: RecordedRequest) -> Response:
        keys = self.api.api_keys
        if keys is not None and request.api_key not in keys:
            return api_error(401, "authentication_error", "invalid x-api-key")
        problem = _check_create(request.body)
        if problem:
            return api_error(400, "invalid_request_error", problem)
        items = [BatchItem(r["custom_id"], dict(r["params"])) for r in request.body["requests"]]
        with self._lock:
            batch = FakeBatch(f"msgbatch_fake_{next(self._ids):04d}", items, _now())
            self.batches[batch.id] = batch
        return Response.json(200, self._batch_json(batch))

    def _retrieve(self, request: RecordedRequest) -> Response:
        batch = self._find(request.path.split("/")[4])
        if batch is None:
            return api_error(404, "not_found_error", "message batch not found")
        with self._lock:
            self._advance(batch)
        return Response.json(200, self._batch_json(batch))

    def _cancel(self, request: RecordedRequest) -> Response:
        batch = self._find(request.path.split("/")[4])
        if batch is None:
            return api_error(404, "not_found_error", "message batch not found")
        with self._lock:
            if batch.status == "in_progress":
                batch.status, batch.cancel_at = "canceling", _now()
        return Response.json(200, self._batch_json(batch))

    def _results(self, request: RecordedRequest) -> Response:
        batch = self._find(request.path.split("/")[4])
        if batch is None:
            return api_error(404, "not_found_error", "message batch not found")
        if batch.status != "ended":
            return api_error(404, "not_found_error", "results are available once processing ends")
        lines = [
            i for i in batch.items if i.result is not None and i.result.get("type") != "missing"
        ]
        if self.order == "reverse":
            lines.reverse()
        elif self.order == "shuffle":
            random.Random(self.seed).shuffle(lines)
        self.results_downloads += 1
        if self.results_page is not None:
            return Response(200, self.results_page, content_type="text/html")
        body = "".join(
            json.dumps({"custom_id": i.custom_id, "result": i.result}) + "\n" for i in lines
        )
        return Response(200, body.encode(), content_type="application/x-jsonl")

    # processing -----------------------------------------------------------------------------
    def _find(self, batch_id: str) -> FakeBatch | None:
        return self.batches.get(batch_id)

    def _advance(self, batch: FakeBatch) -> None:
        if batch.status == "ended":
            return
        batch.polls += 1
        waiting = [i for i in batch.items if i.result is None]
        if batch.status == "canceling":
            for item in waiting:
                item.result = {"type": "canceled"}
            waiting = []
        left = max(1, self.polls_to_end - batch.polls + 1)
        share = len(waiting) if batch.polls >= self.polls_to_end else -(-len(waiting) // left)
        for item in waiting[:share]:
            self._process(item)
        if all(i.result is not None for i in batch.items):
            batch.status, batch.ended_at = "ended", _now()

    def _process(self, item: BatchItem) -> None:
        planned = self.outcome.get(item.custom_id)
        kind = planned[0] if isinstance(planned, tuple) else planned
        if kind in ("expired", "canceled", "missing"):
            item.result = {"type": kind}
        elif kind == "errored":
            error_type, message = (
                planned[1:] if isinstance(planned, tuple) else ("api_error", "fake batch error")
            )
            item.result = {
                "type": "errored",
                "error": {"type": "error", "error": {"type": error_type, "message": message}},
            }
        elif kind == "malformed":
            item.result = {
                "type": "succeeded",
                "message": {"id": "msg_broken", "content": "not a list"},
            }
        else:
            reply = planned if isinstance(planned, Reply) else self._reply(item)
            self._succeed(item, reply)
        self.items.append(item)

    def _reply(self, item: BatchItem) -> Reply | None:
        recorded = RecordedRequest("POST", BATCH_ITEM_PATH, "", {}, b"", item.params, 0.0)
        return self.api.next_reply(recorded)

    def _succeed(self, item: BatchItem, reply: Reply | None) -> None:
        if reply is None:
            message = f"nothing scripted for batch request {item.custom_id}"
            item.result = {
                "type": "errored",
                "error": {"type": "error", "error": {"type": "api_error", "message": message}},
            }
            return
        if reply.status != 200:
            error = json.loads(reply.body or b"{}").get("error") or {
                "type": "api_error",
                "message": "error",
            }
            item.result = {"type": "errored", "error": {"type": "error", "error": error}}
            return
        message = self.api.complete(item.params, reply)
        message["usage"]["service_tier"] = "batch"
        item.usage = message["usage"]
        item.result = {"type": "succeeded", "message": message}

    def _batch_json(self, batch: FakeBatch) -> dict[str, Any]:
        ended = batch.status == "ended"
        host, port = self.api._server.server_address[:2] if self.api._server else ("127.0.0.1", 0)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": batch.counts(),
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + timedelta(hours=24)),
            "ended_at": _iso(batch.ended_at) if batch.ended_at else None,
            "archived_at": None,
            "cancel_initiated_at": _iso(batch.cancel_at) if batch.cancel_at else None,
            "results_url": f"http://{host!s}:{port}/v1/messages/batches/{batch.id}/results"
            if ended
            else None,
        }


def _check_create(body: Any) -> str | None:
    """What the API would refuse in a create body, or None."""
    requests = body.get("requests") if isinstance(body, Mapping) else None
    if not isinstance(requests, list) or not requests:
        return "requests: at least one request is required"
    if len(requests) > MAX_REQUESTS:
        return f"requests: at most {MAX_REQUESTS} requests per batch"
    seen: set[str] = set()
    for index, entry in enumerate(requests):
        custom_id = entry.get("custom_id") if isinstance(entry, Mapping) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            return (
                f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        if custom_id in seen:
            return f"requests.{index}.custom_id: duplicate custom_id {custom_id!r}"
        seen.add(custom_id)
        params = entry.get("params")
        if not isinstance(params, Mapping):
            return f"requests.{index}.params: Field required"
        for key in ("model", "max_tokens", "messages"):
            if key not in params:
                return f"requests.{index}.params.{key}: Field required"
        if params.get("stream"):
            return f"requests.{index}.params.stream: streaming is not supported in batches"
    return None


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
