"""Anthropic's Message Batches API through the SDK: create, retrieve, results, and the batch engine.

- `BatchAPI` wraps `client.messages.batches.create / retrieve` and reads the results
  file (JSON Lines from `results_url`, through `with_raw_response`, so a malformed line is one
  bad result, not a crash) under the same single retry layer as a direct call: the SDK client
  has `max_retries=0`; 408/409/429/5xx and connection errors are retried with backoff (or the
  server's retry-after), at most `max_attempts` times. Failures become LLMUnavailableError.
- `BatchEngine` is the Claude engine with one step changed, where a request would be sent:
  in plan mode it records the request in the ledger (llm/batch.py) and raises Deferred; in
  replay mode it answers from the batch's result (billed at the batch price) and sends directly
  what the batch did not answer. Requests are built by ClaudeEngine itself, so a batch request's
  `params` are exactly what the direct path sends.
anthropic and tenacity are imported inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel

from legion_llm.llm.batch import (
    BATCH_ID,
    BatchLedger,
    Deferred,
    Slot,
    StoredResult,
    results_from_lines,
)
from legion_llm.llm.budget import UsageMeter, call_usage, check_fits
from legion_llm.llm.claude_api.client import ClaudeEngine
from legion_llm.llm.claude_api.http import describe_failure, is_retryable
from legion_llm.llm.config import LLMConfig, find_credential
from legion_llm.llm.engine import (
    Answer,
    Engine,
    EngineBase,
    FallbackEngine,
    Notices,
    OfflineEngine,
    Request,
    SizedByPrimary,
)
from legion_llm.llm.errors import LLMUnavailableError, NoApiKeyError, StructuredOutputError
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.scrub import scrub
from legion_llm.memory.redact import Redactor, excerpt
from legion_llm.memory.untrusted import load_json

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

T = TypeVar("T")
A = TypeVar("A", bound=BaseModel)
STATUSES = ("in_progress", "canceling", "ended")


def check_batch_id(batch_id: str) -> str:
    """A batch id as the API makes them; anything else (a path, say) is refused."""
    if not BATCH_ID.fullmatch(batch_id):
        raise LLMUnavailableError(
            f"the Message Batches API returned an unusable batch id {batch_id!r}"
        )
    return batch_id


@dataclass(frozen=True)
class BatchStatus:
    id: str
    processing_status: str
    counts: dict[str, int]
    created_at: str | None = None
    ended_at: str | None = None
    expires_at: str | None = None

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return self.total - self.counts.get("processing", 0)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "processing_status": self.processing_status,
                "request_counts": dict(self.counts), "created_at": self.created_at,
                "ended_at": self.ended_at, "expires_at": self.expires_at}  # fmt: skip


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


class BatchAPI:
    """The Message Batches endpoints of one engine's client, under one retry policy."""

    def __init__(self, engine: ClaudeEngine) -> None:
        self.http = engine.http
        self.config = engine.config

    def create(self, requests: list[dict[str, Any]]) -> BatchStatus:
        sent = cast("list[Any]", requests)  # MessageCreateParams as ClaudeEngine builds them
        batch = self._call("create", lambda c: c.messages.batches.create(requests=sent))
        return self._status(batch)

    def retrieve(self, batch_id: str) -> BatchStatus:
        return self._status(self._call("retrieve", lambda c: c.messages.batches.retrieve(batch_id)))

    def results(self, batch_id: str) -> dict[str, StoredResult]:
        """Every result line by custom id (any order; a line that is not JSON is skipped)."""
        raw = self._call(
            "results", lambda c: c.messages.batches.with_raw_response.results(batch_id)
        )
        lines = []
        for text in raw.text().splitlines():
            try:
                lines.append(load_json(text))
            except ValueError:  # not JSON, or refused (nested too deeply): one bad result
                continue
        return results_from_lines(line for line in lines if isinstance(line, dict))

    def _status(self, batch: Any) -> BatchStatus:
        """The SDK's MessageBatch as a BatchStatus; a body that is not one (a proxy's page, other
        JSON) is LLMUnavailableError, not a crash further on."""
        try:
            if batch.type != "message_batch" or batch.processing_status not in STATUSES:
                raise ValueError(batch)
            counts = batch.request_counts
            return BatchStatus(
                check_batch_id(str(batch.id)),
                str(batch.processing_status),
                {k: int(getattr(counts, k, 0) or 0) for k in
                 ("processing", "succeeded", "errored", "canceled", "expired")},
                _iso(batch.created_at), _iso(batch.ended_at), _iso(batch.expires_at),
            )  # fmt: skip
        except (AttributeError, TypeError, ValueError):
            shown = excerpt(str(batch), 160)
            raise LLMUnavailableError(
                f"the Message Batches API answered with something that is not a batch ({shown}); "
                "is a proxy or gateway in the way?"
            ) from None

    def _call(self, what: str, call: Callable[[anthropic.Anthropic], T]) -> T:
        import anthropic
        import httpx2
        from tenacity import Retrying, retry_if_exception, stop_after_attempt

        client = self.http.client().with_options(timeout=self.config.timeout_s)
        # the direct path's policy: its retryable errors, its backoff and retry-after handling
        retrying = Retrying(retry=retry_if_exception(is_retryable),
                            stop=stop_after_attempt(self.config.max_attempts), wait=self.http._wait,
                            sleep=self.http._sleep, reraise=True)  # fmt: skip
        try:
            return retrying(call, client)
        except (anthropic.APIError, httpx2.HTTPError) as exc:
            text, status = describe_failure(exc, self.config.effective_base_url)
            raise LLMUnavailableError(
                scrub(f"Message Batches {what}: {text}"), status=status
            ) from exc
        except ValueError as exc:  # a 200 labelled JSON whose body is not
            raise LLMUnavailableError(
                f"Message Batches {what}: the answer is not JSON; is a proxy or gateway in the way?"
            ) from exc
        except anthropic.AnthropicError as exc:  # e.g. results asked for before the end
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LLMUnavailableError(scrub(f"Message Batches {what}: {first}")) from exc


class BatchEngine(ClaudeEngine):
    """The Claude engine whose requests go into (plan) or come from (replay) one batch."""

    def __init__(self, *args: Any, ledger: BatchLedger, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ledger = ledger
        self.direct_down: str | None = None  # why direct calls stopped (batch answers still count)

    def _send(self, kwargs: dict[str, Any], *rest: Any) -> Message:
        slot = self.ledger.slot(kwargs)
        if self.ledger.mode == "plan":
            self._plan(slot, kwargs, rest)
            raise Deferred(slot.key)
        message = self._from_batch(slot) or self._from_journal(slot)
        if message is not None:
            return message
        if self.direct_down is not None:
            raise LLMUnavailableError(self.direct_down)
        spent = self.meter.total.estimated_cost_usd
        try:
            message = super()._send(kwargs, *rest)
        except LLMUnavailableError as exc:
            self.direct_down = exc.message
            raise
        self.ledger.journal[slot.key] = {"message": message.model_dump(mode="json")}
        stats = self.ledger.current()
        stats.direct += 1
        stats.direct_cost_usd += self.meter.total.estimated_cost_usd - spent
        return message

    def _plan(self, slot: Slot, kwargs: dict[str, Any], rest: tuple[Any, ...]) -> None:
        estimate = self.estimate_input_tokens(kwargs)
        max_tokens = int(kwargs["max_tokens"])
        check_fits(
            estimate,
            self.input_budget(max_tokens),
            f"the request for this prompt (model {self.model})",
        )
        expected = int(rest[0]) if rest else max_tokens  # ClaudeEngine.answer's expected output
        self.ledger.plan(slot, dict(kwargs), input_tokens=estimate, max_tokens=max_tokens,
                         expected_output=min(expected, max_tokens))  # fmt: skip

    def _from_batch(self, slot: Slot) -> Message | None:
        found = self.ledger.batch_result(slot)
        if found is None:
            if slot.key not in self.ledger.journal:
                self.ledger.note("answered directly: a request the batch did not hold (a re-ask, "
                                 "or one built from an earlier answer)")  # fmt: skip
            return None
        custom_id, result = found
        if result.kind != "succeeded" or result.message is None:
            why = f" ({result.error})" if result.error else ""
            self.ledger.note(f"{custom_id} {result.kind} in the batch{why}; sent directly")
            return None
        message = _as_message(result.message)
        if message is None:
            self.ledger.note(
                f"{custom_id}: the batch answer is not a Messages API answer; sent directly"
            )
            return None
        cost = self._record(message, batch=True)
        self.ledger.used.add(custom_id)
        stats = self.ledger.current()
        stats.from_batch += 1
        stats.batch_cost_usd += cost
        return message

    def bill_unused(self, custom_ids: list[str]) -> None:
        """The batch bills every request that succeeded, asked for again or not: record those
        the replay never used (its request changed after an earlier answer) at the batch price."""
        stats = self.ledger.current()
        for custom_id in custom_ids:
            result = self.ledger.results.get(custom_id)
            if custom_id in self.ledger.used or result is None or result.kind != "succeeded":
                continue
            message = _as_message(result.message)
            if message is None:
                continue
            self.ledger.used.add(custom_id)  # billed once, however often this is called
            stats.unused += 1
            stats.batch_cost_usd += self._record(message, batch=True)
        if stats.unused:
            self.ledger.note(f"{stats.unused} batch answer(s) unused (the request had changed "
                             "after an earlier answer); billed at the batch price all the same")  # fmt: skip

    def _from_journal(self, slot: Slot) -> Message | None:
        entry = self.ledger.journal.get(slot.key)
        message = _as_message(entry.get("message")) if entry else None
        if message is None:
            return None
        stats = self.ledger.current()
        stats.direct += 1
        stats.direct_cost_usd += self._record(message, batch=False)
        return message

    def _record(self, message: Message, *, batch: bool) -> float:
        """Record a stored answer's usage (at the batch price when it came from the batch)."""
        usage = message.usage
        billed = call_usage(self.info, input_tokens=usage.input_tokens,
                            output_tokens=usage.output_tokens,
                            cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                            cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
                            batch=batch)  # fmt: skip
        self.meter.record(billed, self.name)
        return billed.estimated_cost_usd


def _as_message(data: Any) -> Message | None:
    """A stored message as the SDK's Message, or None when it is not one."""
    from anthropic.types import Message, Usage
    from pydantic import ValidationError

    if not isinstance(data, dict):
        return None
    try:
        message = Message.model_validate(data)
    except ValidationError:
        return None
    return (
        message if isinstance(message.usage, Usage) and isinstance(message.content, list) else None
    )


class ReplayEngine(FallbackEngine):
    """Replay mode: the batch engine answers; when one answer cannot be had (a direct call fails,
    an answer is unusable) the offline step answers that one, with a notice. Unlike a plain
    fallback it never stops asking the batch engine: the batch's answers need no network."""

    def answer(self, request: Request[A]) -> Answer[A]:
        try:
            return self.primary.answer(request)
        except (LLMUnavailableError, StructuredOutputError) as exc:
            explicit = self.explicit and isinstance(exc, LLMUnavailableError)
            if explicit or not self.fallback.registry.has(request.prompt.name):
                raise  # --engine anthropic: a failing direct call is the case's failure
            self.notices.add(
                f"notice: an answer to prompt {request.prompt.name!r} could not be had from the "
                f"batch or directly ({exc.message}); the offline engine answered it"
            )
            return replace(self.fallback.answer(request), fallback_reason=exc.message)


class PlanningEngine(SizedByPrimary, EngineBase):
    """Plan mode: the batch engine records each request, and the offline step answers it for now
    (so the pipeline reaches its next request). Nothing is sent, nothing is billed."""

    def __init__(self, primary: BatchEngine, fallback: OfflineEngine) -> None:
        super().__init__(meter=fallback.meter, notices=fallback.notices,
                         prompts_dir=fallback.prompts_dir, redactor=fallback.redactor)  # fmt: skip
        self.primary = primary
        self.fallback = fallback

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.primary.name

    @property
    def model(self) -> str | None:
        return self.primary.model

    def answer(self, request: Request[A]) -> Answer[A]:
        try:
            return self.primary.answer(request)
        except Deferred:
            return self.fallback.answer(request)


@dataclass
class BatchEngines:
    """The engines of one batch run, sharing one meter: `batch` (the Claude side), `pipeline`
    (what the pipeline is given: the planning engine, or the batch engine with the offline
    fallback), and `api` for the batch endpoints."""

    batch: BatchEngine
    pipeline: Engine
    api: BatchAPI


def batch_engines(
    config: LLMConfig,
    ledger: BatchLedger,
    *,
    env: Mapping[str, str] | None = None,
    registry: OfflineRegistry | None = None,
    notices: Notices | None = None,
    redactor: Redactor | None = None,
    claude_options: Mapping[str, Any] | None = None,
    explicit: bool = False,
) -> BatchEngines:
    """The engines for a batch run. The Message Batches API is Claude's: without a key or token
    this is NoApiKeyError, whatever --engine says."""
    credential = find_credential(env)
    if credential is None:
        raise NoApiKeyError(
            "--batch uses the Message Batches API: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
        )
    meter = UsageMeter(model=config.model, max_cost_usd=config.max_cost_usd)
    shared: dict[str, Any] = {"meter": meter, "notices": notices or Notices(), "redactor": redactor}
    offline = OfflineEngine(registry, **shared)
    batch = BatchEngine(config, credential, ledger=ledger, **shared, **(claude_options or {}))
    pipeline: Engine = (
        PlanningEngine(batch, offline)
        if ledger.mode == "plan"
        else ReplayEngine(batch, offline, explicit=explicit)
    )
    return BatchEngines(batch, pipeline, BatchAPI(batch))
