"""The HTTP side of the Anthropic adapter: the SDK client, streamed calls, one retry policy, counts.

- Every call is streamed with the SDK's helper (`client.messages.stream`): an answer that takes
  minutes to generate is read as it arrives instead of dying at a fixed timeout. An attempt ends
  when no event arrives for `stall_timeout_s` (the socket read timeout catches silence, a
  watchdog catches a server that keeps the connection alive without sending tokens), or at
  `timeout_s` even while tokens arrive (a server that drips forever). Both are retried.
- Exactly one retry layer: the SDK client has `max_retries=0`; tenacity retries 408, 409, 429,
  5xx (529 included), an overload reported mid-stream, stalls and connection errors, honours
  `x-should-retry`, and waits with exponential backoff and jitter or for `retry-after-ms` /
  `retry-after`, never longer than `max_retry_sleep_s` per wait; no new attempt starts past
  `deadline_s`.
- A 200 whose body is not an event stream (a proxy's HTML page) is not retried: it becomes
  LLMUnavailableError at once. 400/401/402/403/404 become RequestRejectedError (the key, shown
  masked, the model or a setting must change).
- `count_input_tokens` asks the free count_tokens endpoint for the exact input of a request,
  once per distinct request (cached by a hash of its text); when the endpoint does not answer,
  counting stops for the run and callers use their offline estimate.
anthropic, httpx2 and tenacity are imported inside the functions that use them.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from legion_llm.llm.cancel import CallCancelled, current_stop
from legion_llm.llm.config import Credential, LLMConfig
from legion_llm.llm.errors import BudgetExceededError, LLMUnavailableError, RequestRejectedError
from legion_llm.llm.scrub import scrub
from legion_llm.memory.redact import excerpt

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message, Usage
    from tenacity import RetryCallState

RETRY_STATUSES = (408, 409, 429)
REJECTED_STATUSES = (400, 401, 402, 403, 404)
RETRY_STREAM_ERRORS = ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")
COUNT_TIMEOUT_S = 10.0
_COUNT_KEYS = ("model", "messages", "system", "tools", "tool_choice", "output_config", "thinking")


class StreamStalled(Exception):
    """No event for the stall timeout, or still streaming at the per-attempt ceiling."""


class NotAnEventStream(Exception):
    """A 200 answer whose body was no event stream, or a stream that ended before message_stop."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class ClaudeHTTP:
    """The SDK client (built on first use), streamed calls under the retry policy, and counts."""

    def __init__(
        self,
        config: LLMConfig,
        credential: Credential,
        *,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
    ) -> None:
        self.config = config
        self._credential = credential
        self._sleep = sleep
        self._clock = clock
        self._client: anthropic.Anthropic | None = None
        self._counts: dict[str, int] = {}
        self.counting = config.count_tokens
        self.attempts = 0

    def __repr__(self) -> str:
        return f"ClaudeHTTP(base_url={self.config.effective_base_url!r}, key=<hidden>)"

    def client(self) -> anthropic.Anthropic:
        if self._client is None:
            import anthropic

            secret = self._credential.secret.reveal()
            is_key = self._credential.kind == "api_key"
            self._client = anthropic.Anthropic(
                api_key=secret if is_key else None,
                auth_token=None if is_key else secret,
                base_url=self.config.effective_base_url,
                max_retries=0,
            )
        return self._client

    # counting -------------------------------------------------------------------------------
    def count_input_tokens(self, kwargs: dict[str, Any]) -> int | None:
        """The exact input tokens of this request from the API, or None when it cannot say."""
        params = {k: kwargs[k] for k in _COUNT_KEYS if k in kwargs}
        key = hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()
        if key in self._counts or not self.counting:
            return self._counts.get(key)
        import anthropic
        import httpx2

        timeout = min(COUNT_TIMEOUT_S, self.config.stall_timeout_s)
        try:
            client = self.client().with_options(max_retries=0, timeout=timeout)
            counted = getattr(client.messages.count_tokens(**params), "input_tokens", None)
        except (anthropic.APIError, httpx2.HTTPError, ValueError, TypeError):
            counted = None
        if not isinstance(counted, int):  # unreachable, unsupported, or a proxy's page (a str)
            self.counting = False  # estimates for the rest
            return None
        self._counts[key] = int(counted)
        return self._counts[key]

    # calls ----------------------------------------------------------------------------------
    def create(
        self,
        build: Callable[[], dict[str, Any]],
        on_partial: Callable[[Usage, dict[str, Any]], None] | None = None,
    ) -> Message:
        """One streamed call under the retry policy; failures become LLMUnavailableError.
        `build` makes each attempt's request: the cost cap is checked again before a retry, and a
        retry it refuses ends the call like the last attempt's failure. `on_partial` gets the usage
        and the request of an attempt that failed after the API began answering."""
        import anthropic
        import httpx2
        from tenacity import Retrying, retry_if_exception

        client = self.client()
        start = self._clock()
        self.attempts = 0
        deadline_hit: list[bool] = []
        capped: list[bool] = []
        calls = [build()]  # the first call's refusal by the cap is the caller's to handle

        def attempt() -> Message:
            self.attempts += 1
            return self._stream_once(client, calls[-1], on_partial)

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.config.max_attempts:
                return True
            if self._clock() - start + state.upcoming_sleep >= self.config.deadline_s:
                deadline_hit.append(True)
                return True
            try:
                calls.append(build())
            except BudgetExceededError:
                capped.append(True)
                return True
            return False

        retrying = Retrying(retry=retry_if_exception(is_retryable), stop=stop, wait=self._wait,
                            sleep=self._sleep, reraise=True)  # fmt: skip
        try:
            message: Message = retrying(attempt)
            return message
        except (anthropic.APIError, httpx2.HTTPError, StreamStalled, NotAnEventStream) as exc:
            raise self._unavailable(exc, bool(deadline_hit), bool(capped)) from exc

    def _stream_once(
        self,
        client: anthropic.Anthropic,
        kwargs: dict[str, Any],
        on_partial: Callable[[Usage, dict[str, Any]], None] | None,
    ) -> Message:
        import httpx2

        stall = self.config.stall_timeout_s
        timeout = httpx2.Timeout(stall, connect=min(10.0, stall))
        seen: dict[str, Any] = {}
        bound = int(kwargs.get("max_tokens") or 0) * CHARS_PER_TOKEN_BOUND
        received = 0
        with client.messages.stream(**kwargs, timeout=timeout) as stream:
            dog = Watchdog(stall, self.config.timeout_s, stream.close)
            try:
                with dog:
                    for event in stream:
                        dog.progress()
                        seen[event.type] = event
                        received += _delta_chars(event)
                        if bound and received > bound:
                            raise NotAnEventStream(
                                f"the answer ran past max_tokens ({received} characters for "
                                f"{kwargs['max_tokens']} tokens); is a proxy or gateway in the "
                                "way?",
                                retryable=False,
                            )
            except NotAnEventStream:
                if "message_start" in seen and on_partial is not None:
                    on_partial(seen["message_start"].message.usage, kwargs)
                raise
            except Exception as exc:
                if "message_start" in seen and on_partial is not None:
                    on_partial(seen["message_start"].message.usage, kwargs)
                if dog.cancelled:
                    raise CallCancelled() from None
                if dog.tripped:
                    raise StreamStalled(dog.tripped) from exc
                broken = _broken_off(exc, received, stall) if "message_start" in seen else None
                if broken is not None:
                    raise broken from exc
                raise
            if dog.cancelled:  # the closed stream may simply have ended
                raise CallCancelled()
            if "message_start" not in seen:
                kind = stream.response.headers.get("content-type") or "no content-type"
                raise NotAnEventStream(f"not an event stream: {kind}", retryable=False)
            if "message_stop" not in seen:
                if on_partial is not None:
                    on_partial(seen["message_start"].message.usage, kwargs)
                raise NotAnEventStream("the event stream ended before message_stop", retryable=True)
            return stream.get_final_message()

    def _wait(self, state: RetryCallState) -> float:
        """retry-after(-ms) when the server sent one, else 0.5 s * 2^n (max 8 s) with jitter; capped."""
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(exc)
        if asked is None:
            asked = min(0.5 * 2 ** (state.attempt_number - 1), 8.0) * random.uniform(0.75, 1.0)
        return max(0.0, min(asked, self.config.max_retry_sleep_s))

    def _unavailable(
        self, exc: Exception, deadline_hit: bool, capped: bool = False
    ) -> LLMUnavailableError:
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        why = f" (deadline of {self.config.deadline_s:g} s reached)" if deadline_hit else ""
        if capped:
            why = " (a retry could pass --max-cost: what broke off may have been billed whole)"
        text, status = describe_failure(exc, self.config.effective_base_url)
        if isinstance(exc, NotAnEventStream) and not exc.retryable:
            text = (f"Claude API answered HTTP 200 with a body that is not a Messages API answer "
                    f"({exc}) after {tries}; is a proxy or gateway in the way?")  # fmt: skip
            return LLMUnavailableError(scrub(text), status=200, attempts=self.attempts)
        if status in REJECTED_STATUSES:
            what = "the request"
            if status in (401, 403):
                what = f"the key in {self._credential.variable}"
            refused = f"Claude API refused {what}: {text.removeprefix('Claude API returned ')}"
            return RequestRejectedError(scrub(refused), status=status, attempts=self.attempts)
        message = scrub(f"{text} after {tries}{why}")
        return LLMUnavailableError(message, status=status, attempts=self.attempts)


# no real answer spends more characters per token than this: past it, a stream is broken
CHARS_PER_TOKEN_BOUND = 16


def _delta_chars(event: Any) -> int:
    """Characters one stream event adds to the answer (text or tool JSON)."""
    delta = getattr(event, "delta", None) if event.type == "content_block_delta" else None
    if delta is None:
        return 0
    return len(getattr(delta, "partial_json", "") or getattr(delta, "text", "") or "")


def transport_failure(exc: BaseException) -> BaseException | None:
    """The network failure behind `exc` in either shape the SDK raises it, else None.

    Up to anthropic 2.16 a read that failed in the middle of a stream let the transport's own
    error through (httpx2.RemoteProtocolError, httpx2.ReadTimeout); from 2.17 the SDK wraps it in
    APIConnectionError / APITimeoutError with the transport error as the cause. Every caller that
    asks "did the connection fail?" asks here, so both shapes mean the same thing."""
    import anthropic
    import httpx2

    if isinstance(exc, httpx2.TransportError):
        return exc
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        return cause if isinstance(cause, httpx2.TransportError) else exc
    return None


def _broken_off(exc: BaseException, received: int, stall_s: float) -> Exception | None:
    """A stream that had begun answering and then failed on the network, said as what happened:
    silence past the stall timeout, or a dropped connection, with how much of the answer came."""
    import anthropic
    import httpx2

    failure = transport_failure(exc)
    if failure is None:
        return None
    came = f"after {received} character{'s' if received != 1 else ''} of the answer"
    if isinstance(failure, httpx2.TimeoutException | anthropic.APITimeoutError):
        return StreamStalled(f"no token for {stall_s:g} s, {came}")
    return NotAnEventStream(f"the connection dropped {came}", retryable=True)


def describe_failure(exc: Exception, base_url: str) -> tuple[str, int | None]:
    """A one-line description of why a call failed, and the HTTP status if there was one."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        kind, detail = _error_fields(exc)
        where = f"HTTP {exc.status_code}" if exc.status_code != 200 else "mid-stream"
        shown = f"{kind}: {detail}" if detail else kind
        hint = " (check --model)" if exc.status_code == 404 else ""
        if exc.status_code == 200:
            return f"Claude API reported {shown} {where}", None
        return f"Claude API returned {where} ({shown}){hint}", exc.status_code
    if isinstance(exc, StreamStalled):
        return f"Claude API timed out ({exc})", None
    if isinstance(exc, NotAnEventStream):
        return f"Claude API's answer broke off ({exc})", None
    if isinstance(exc, anthropic.APITimeoutError) or "Timeout" in type(exc).__name__:
        return "Claude API timed out", None
    return f"could not connect to the Claude API at {base_url}", None


def _error_fields(exc: anthropic.APIStatusError) -> tuple[str, str]:
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    nested = body.get("error")
    error: dict[str, Any] = nested if isinstance(nested, dict) else body
    kind = str(error.get("type") or getattr(exc, "type", None) or "error")
    detail = str(error.get("message") or getattr(exc, "api_message", None) or "")
    if not detail and not body:  # not the API's error shape: a proxy's page, say
        detail = _response_text(exc)
    return kind, _snippet(detail, 300)


def _response_text(exc: anthropic.APIStatusError) -> str:
    try:
        return _snippet(exc.response.text)
    except Exception:  # a streamed body that was never read
        return ""


def _snippet(body: str, limit: int = 160) -> str:
    """The start of a body as one short redacted line (a proxy's error page, a broken answer)."""
    return excerpt(body, limit)


def is_retryable(exc: BaseException) -> bool:
    """Stalls, connection errors and timeouts; HTTP 408/409/429/5xx unless the server says
    x-should-retry; an overload reported mid-stream. Not: a body that is no event stream."""
    import anthropic

    if isinstance(exc, StreamStalled):
        return True
    if isinstance(exc, NotAnEventStream):
        return exc.retryable
    if transport_failure(exc) is not None:
        return True
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    header = exc.response.headers.get("x-should-retry")
    if header in ("true", "false"):
        return header == "true"
    if exc.status_code == 200:
        return _error_fields(exc)[0] in RETRY_STREAM_ERRORS
    return exc.status_code in RETRY_STATUSES or exc.status_code >= 500


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """Seconds the server asked for: `retry-after-ms`, else `retry-after` (seconds or HTTP date)."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    headers = response.headers
    try:
        return float(headers["retry-after-ms"]) / 1000
    except (KeyError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())


class Watchdog:
    """Closes a stream when no event came for `stall_s`, when it has run `ceiling_s`, or when the
    call's caller cancelled it (llm/cancel.py)."""

    def __init__(self, stall_s: float, ceiling_s: float, close: Callable[[], None]) -> None:
        self.stall_s = stall_s
        self.ceiling_s = ceiling_s
        self._close = close
        self.started = self.last = time.monotonic()
        self.tripped: str | None = None
        self.cancelled = False
        self._stop = current_stop()  # the call's, read from the watchdog's own thread
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="claude-stream-watchdog")
        self._thread.daemon = True

    def progress(self) -> None:
        self.last = time.monotonic()

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        period = max(0.01, min(1.0, self.stall_s / 4))
        while not self._done.wait(period):
            now = time.monotonic()
            if self._stop is not None and self._stop.is_set():
                self.cancelled = True
                self.tripped = "cancelled by its client"
            elif now - self.last > self.stall_s:
                self.tripped = f"no token for {self.stall_s:g} s"
            elif now - self.started > self.ceiling_s:
                self.tripped = f"still streaming after {self.ceiling_s:g} s"
            else:
                continue
            with contextlib.suppress(Exception):  # a stream that is already closing
                self._close()
            return
