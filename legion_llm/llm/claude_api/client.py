"""The Anthropic adapter: ClaudeEngine answers a Request through the SDK.

- The model must be in the price table (pricing.py) or have prices (`--price IN/OUT`): an
  unknown model is refused before anything is sent.
- The key is checked before the client exists (select_engine), and passed explicitly, so the SDK
  never falls back to profiles on disk and never raises its TypeError for a missing key.
- Before every request (the re-ask included) its input is estimated offline (cl100k, scaled for
  the model's tokenizer) and, when the API answers count_tokens, counted exactly; the exact
  count where there is one is checked against the model's input budget, and the cost cap reserves the
  step's *expected* output (not max_tokens), cutting max_tokens to what the money left pays for.
- The request is streamed (http.py); usage is recorded from the final message, and from the
  start of an attempt that broke off (it may have been billed: the most its unseen output could
  have cost is held against the cap, which is checked again before each retry).
- Base URL: ANTHROPIC_BASE_URL, else settings `base_url`, else the API's; resolved in config.py
  and passed explicitly (a path prefix such as http://gateway/anthropic is kept).
anthropic and tenacity are imported inside the functions that use them.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from legion_llm.llm.budget import Usage, call_usage, check_fits, input_budget
from legion_llm.llm.claude_api.http import ClaudeHTTP
from legion_llm.llm.claude_api.request import build_request, expected_output, request_text
from legion_llm.llm.claude_api.structured import ask_structured
from legion_llm.llm.config import Credential, LLMConfig
from legion_llm.llm.engine import Answer, EngineBase, Request
from legion_llm.llm.pricing import ModelInfo, StructuredMode, call_cost_bound, model_info
from legion_llm.llm.tokens import count_tokens

if TYPE_CHECKING:
    from anthropic.types import Message
    from anthropic.types import Usage as ApiUsage

T = TypeVar("T", bound=BaseModel)
DEFAULT_ANSWER_TOKENS = 1024  # a step that gives no estimate of its answer's length


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
        self.info: ModelInfo = model_info(config.model, config.price)
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
        return self.info.structured if chosen == "auto" else chosen  # type: ignore[return-value]

    def input_budget(self, max_tokens: int | None = None) -> int:
        limit = max_tokens or self.config.max_tokens
        return input_budget(self.info, limit, self.config.max_input_tokens)

    def answer(self, request: Request[T]) -> Answer[T]:
        max_tokens = request.max_tokens or self.config.max_tokens
        kwargs = self._kwargs(request, max_tokens)
        answer_tokens = request.expected_output_tokens or min(max_tokens, DEFAULT_ANSWER_TOKENS)
        expected = expected_output(self.info, answer_tokens)

        def send(call: dict[str, Any]) -> Message:
            return self._send(call, expected)

        output = ask_structured(send, kwargs, request.schema, request.prompt.name)
        prompt = request.prompt
        return Answer(output, Usage(), prompt.name, prompt.sha256, self.name, self.model)

    def _kwargs(self, request: Request[Any], max_tokens: int) -> dict[str, Any]:
        return build_request(request.schema, request.prompt, info=self.info,
                             max_tokens=max_tokens, mode=self.mode, effort=self.config.effort)  # fmt: skip

    def estimate_tokens(self, text: str) -> int:
        """Offline estimate of `text` as input, scaled for the model's tokenizer."""
        return self.info.scale(count_tokens(text))

    def request_tokens(self, request: Request[Any]) -> int:
        return self.estimate_input_tokens(self._kwargs(request, self.config.max_tokens))

    def estimate_input_tokens(self, kwargs: dict[str, Any]) -> int:
        """Offline estimate of the request, the one its size check and the chunker use."""
        return self.estimate_tokens(request_text(kwargs))

    def _send(self, kwargs: dict[str, Any], expected: int) -> Message:
        """One logical call: counts, budget and cap (again before each retry), the streamed
        request, usage recorded."""
        estimate = self.estimate_input_tokens(kwargs)
        counted = self.http.count_input_tokens(kwargs)
        tokens = counted if counted is not None else estimate
        check_fits(tokens, self.input_budget(kwargs["max_tokens"]),
                   f"the request for this prompt (model {self.model})")  # fmt: skip

        def reserve() -> dict[str, Any]:
            allowed = self.meter.reserve(self.info, input_tokens=tokens, expected_output=expected,
                                         max_tokens=kwargs["max_tokens"])  # fmt: skip
            return {**kwargs, "max_tokens": allowed}

        counts = Usage(input_tokens_estimated=estimate, input_tokens_counted=counted or 0,
                       counted_calls=int(counted is not None))  # fmt: skip
        message = self._create_quietly(reserve)
        self.meter.record(self._usage(message.usage, counts), self.name)
        return message

    def _usage(self, usage: ApiUsage, counts: Usage) -> Usage:
        billed = call_usage(
            self.info,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens or 0,
            cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        )
        billed.add(counts)
        return billed

    def _create_quietly(self, reserve: Callable[[], dict[str, Any]]) -> Message:
        """The SDK's DeprecationWarning for an old model name becomes one notice; an attempt that
        broke off after the API began answering is recorded as a billed call, and the most its
        unseen output could have cost is held against the cap."""

        def partial(usage: ApiUsage, call: dict[str, Any]) -> None:
            seen = self._usage(usage, Usage())
            self.meter.record(seen, self.name)
            prompt = (usage.input_tokens + (usage.cache_read_input_tokens or 0)
                      + (usage.cache_creation_input_tokens or 0))  # fmt: skip
            bound = call_cost_bound(self.info, input_tokens=prompt,
                                    output_tokens=call["max_tokens"])  # fmt: skip
            self.meter.hold(bound - seen.estimated_cost_usd)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            message = self.http.create(reserve, partial)
        for warning in caught:
            first_line = str(warning.message).splitlines()[0]
            self.notices.add(f"notice: {first_line} (set memory.llm.model or LEGION_LLM_MODEL)")
        return message


def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up at call time, so tests can forbid real sleeps
