"""The Anthropic adapter: ClaudeEngine answers a Request through the SDK.

- The key is checked before the client exists (select_engine), and passed explicitly, so the SDK
  never falls back to profiles on disk and never raises its TypeError for a missing key.
- Exactly one retry layer: the SDK client has `max_retries=0`; tenacity retries 408, 409, 429,
  5xx (529 included) and connection errors/timeouts, honours `x-should-retry`, waits with
  exponential backoff and jitter or for `retry-after-ms` / `retry-after`, never longer than
  `max_retry_sleep_s` per wait and never past `deadline_s` for the whole call (each attempt's
  HTTP timeout is cut to the time left).
- Before every request (the re-ask included) the input is estimated with tiktoken and checked
  against the model's input budget and against `--max-cost`; after it, usage is recorded.
- Base URL: ANTHROPIC_BASE_URL, else settings `base_url`, else the API's; resolved in config.py
  and passed explicitly (a path prefix such as http://gateway/anthropic is kept).
anthropic and tenacity are imported inside the functions that use them.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel

from legion_llm.llm.budget import Usage, call_usage, check_fits, input_budget
from legion_llm.llm.claude_api.structured import ask_structured, build_request, request_text
from legion_llm.llm.config import Credential, LLMConfig
from legion_llm.llm.engine import Answer, EngineBase, Request
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.llm.pricing import StructuredMode, model_info
from legion_llm.llm.tokens import count_tokens, with_safety

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message
    from tenacity import RetryCallState

T = TypeVar("T", bound=BaseModel)
RETRY_STATUSES = (408, 409, 429)
TOOL_OVERHEAD_TOKENS = 400  # the API's own tool-use system text, not visible to the estimate


class ClaudeEngine(EngineBase):
    name = "anthropic"

    def __init__(
        self,
        config: LLMConfig,
        credential: Credential,
        *,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.http = ClaudeHTTP(
            config, credential, sleep=sleep or _sleep, clock=clock or time.monotonic
        )

    def __repr__(self) -> str:
        return f"ClaudeEngine(model={self.config.model!r}, base_url={self.config.effective_base_url!r})"

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def mode(self) -> StructuredMode:
        chosen = self.config.structured_output
        return model_info(self.model).structured if chosen == "auto" else chosen  # type: ignore[return-value]

    def input_budget(self, max_tokens: int | None = None) -> int:
        limit = max_tokens or self.config.max_tokens
        return input_budget(self.model, limit, self.config.max_input_tokens)

    def answer(self, request: Request[T]) -> Answer[T]:
        max_tokens = request.max_tokens or self.config.max_tokens
        kwargs = build_request(
            request.schema, request.prompt, model=self.model, max_tokens=max_tokens, mode=self.mode
        )
        output = ask_structured(self._send, kwargs, request.schema, request.prompt.name)
        prompt = request.prompt
        return Answer(output, Usage(), prompt.name, prompt.sha256, self.name, self.model)

    def estimate_input_tokens(self, kwargs: dict[str, Any]) -> int:
        """cl100k estimate of the request, scaled by tokens.SAFETY_FACTOR."""
        overhead = TOOL_OVERHEAD_TOKENS if "tools" in kwargs else 0
        return with_safety(count_tokens(request_text(kwargs)) + overhead)

    def _send(self, kwargs: dict[str, Any]) -> Message:
        """One logical call: budget checks, the HTTP request with retries, usage recorded."""
        estimate = self.estimate_input_tokens(kwargs)
        budget = self.input_budget(kwargs["max_tokens"])
        check_fits(estimate, budget, f"the request for this prompt (model {self.model})")
        self.meter.check_cost(self.model, input_tokens=estimate, max_tokens=kwargs["max_tokens"])
        message = self._create_quietly(kwargs)
        usage = message.usage
        self.meter.record(
            call_usage(
                self.model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
            ),
            self.name,
        )
        return message

    def _create_quietly(self, kwargs: dict[str, Any]) -> Message:
        """The SDK's DeprecationWarning for an old model name becomes one notice."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            message = self.http.create(kwargs)
        for warning in caught:
            first_line = str(warning.message).splitlines()[0]
            self.notices.add(f"notice: {first_line} (set memory.llm.model or LEGION_LLM_MODEL)")
        return message


def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up at call time, so tests can forbid real sleeps


class ClaudeHTTP:
    """The SDK client (built on first use) and the one retry policy around `messages.create`."""

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
                timeout=self.config.timeout_s,
            )
        return self._client

    def create(self, kwargs: dict[str, Any]) -> Message:
        """`messages.create` under the retry policy; failures become LLMUnavailableError."""
        import anthropic
        from tenacity import Retrying, retry_if_exception

        client = self.client()
        start = self._clock()
        self.attempts = 0
        deadline_hit: list[bool] = []

        def attempt() -> Message:
            self.attempts += 1
            remaining = self.config.deadline_s - (self._clock() - start)
            timeout = max(0.001, min(self.config.timeout_s, remaining))
            return cast("Message", client.messages.create(**kwargs, timeout=timeout))

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number >= self.config.max_attempts:
                return True
            elapsed = self._clock() - start
            if elapsed + state.upcoming_sleep >= self.config.deadline_s:
                deadline_hit.append(True)
                return True
            return False

        retrying = Retrying(
            retry=retry_if_exception(is_retryable),
            stop=stop,
            wait=self._wait,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            message: Message = retrying(attempt)
        except anthropic.APIError as exc:
            raise self._unavailable(exc, bool(deadline_hit)) from exc
        except json.JSONDecodeError as exc:  # a 200 labelled JSON whose body is not
            raise self._not_an_answer(exc.doc) from exc
        return self._answer_or_unavailable(message)

    def _answer_or_unavailable(self, message: object) -> Message:
        """A 200 whose body is not a Messages API answer (a broken proxy or gateway: an HTML page,
        other JSON) is LLMUnavailableError, like a 5xx, not an AttributeError further on."""
        from anthropic.types import Message, Usage

        usage, content = getattr(message, "usage", None), getattr(message, "content", None)
        if isinstance(message, Message) and isinstance(usage, Usage) and isinstance(content, list):
            return message
        shown = message if isinstance(message, str) else json.dumps(message, default=repr)
        raise self._not_an_answer(shown)

    def _not_an_answer(self, body: str) -> LLMUnavailableError:
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        text = (
            f"Claude API answered HTTP 200 with a body that is not a Messages API answer "
            f"({_snippet(body) or 'empty'}) after {tries}; is a proxy or gateway in the way?"
        )
        return LLMUnavailableError(text, status=200, attempts=self.attempts)

    def _wait(self, state: RetryCallState) -> float:
        """retry-after(-ms) when the server sent one, else 0.5 s * 2^n (max 8 s) with jitter; capped."""
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_seconds(exc)
        if asked is None:
            asked = min(0.5 * 2 ** (state.attempt_number - 1), 8.0) * random.uniform(0.75, 1.0)
        return max(0.0, min(asked, self.config.max_retry_sleep_s))

    def _unavailable(self, exc: Exception, deadline_hit: bool) -> LLMUnavailableError:
        import anthropic

        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        why = f" (deadline of {self.config.deadline_s:g} s reached)" if deadline_hit else ""
        if isinstance(exc, anthropic.APIStatusError):
            detail = f"{exc.type or 'error'}: {exc.api_message}" if exc.api_message else exc.type
            detail = detail or _snippet(exc.response.text) or "no error body"
            text = f"Claude API returned HTTP {exc.status_code} ({detail}) after {tries}{why}"
            return LLMUnavailableError(text, status=exc.status_code, attempts=self.attempts)
        if isinstance(exc, anthropic.APITimeoutError):
            text = f"Claude API timed out after {tries}{why}"
        else:
            host = self.config.effective_base_url
            text = f"could not connect to the Claude API at {host} after {tries}{why}"
        return LLMUnavailableError(text, attempts=self.attempts)


def _snippet(body: str, limit: int = 160) -> str:
    """The start of a body as one short line (a proxy's error page, a broken answer)."""
    line = " ".join(body.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def is_retryable(exc: BaseException) -> bool:
    """Connection errors and timeouts; HTTP 408/409/429/5xx unless the server says x-should-retry."""
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):
        return True
    if not isinstance(exc, anthropic.APIStatusError):
        return False
    header = exc.response.headers.get("x-should-retry")
    if header in ("true", "false"):
        return header == "true"
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
