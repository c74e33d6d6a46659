"""The seam every LLM step calls: `engine.ask(Schema, "prompt-name", {variables})` -> Answer.

Engines: "anthropic" (Claude through the SDK, in claude_api/), "claude-code" (the user's own
`claude` CLI, in claude_code/), "offline" (the deterministic step each pipeline registers in
offline.py), and the FallbackEngine that puts a model engine and the offline one together: when
one answer is unusable (invalid twice, cut at max_tokens, refused) the offline step answers that
one, with a notice; when the model is unreachable or refuses the request, `auto` says so once
and the offline engine answers the rest of the run, while an explicit `--engine anthropic`
stops with that one line (exit 2 for a refused key, model or setting, else 4).
`llm/factory.py`'s `select_engine` turns `--engine auto|anthropic|claude-code|offline` into one
of these (the factory sits above the engines it builds, which import this module).

Every request is built by `EngineBase.request`, which redacts secrets from the rendered prompt
(legion_llm/memory/redact/), so no engine, present or future, sends one.

Nothing here imports anthropic, tiktoken or tenacity; client.py and tokens.py do, lazily.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from legion_llm.llm.budget import Usage, UsageMeter
from legion_llm.llm.cancel import raise_if_cancelled
from legion_llm.llm.errors import (
    LLMError,
    LLMUnavailableError,
    StructuredOutputError,
)
from legion_llm.llm.offline import REGISTRY, OfflineCall, OfflineRegistry
from legion_llm.llm.prompts import RenderedPrompt, load_prompt
from legion_llm.llm.tokens import count_tokens, with_safety
from legion_llm.memory.redact import Redactor

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Request(Generic[T]):
    schema: type[T]
    prompt: RenderedPrompt
    variables: Mapping[str, Any]
    context: Any = None
    max_tokens: int | None = None
    expected_output_tokens: int | None = None  # the answer's likely length, for the cost cap


@dataclass(frozen=True)
class Answer(Generic[T]):
    """A validated result and where it came from. `usage` covers this ask only (re-asks and a
    failed Claude attempt before a fallback included)."""

    output: T
    usage: Usage
    prompt_name: str
    prompt_sha256: str
    engine: str
    model: str | None
    fallback_reason: str | None = None

    def provenance(self) -> dict[str, Any]:
        """What a result or eval log records next to the output."""
        return {
            "prompt": self.prompt_name,
            "prompt_sha256": self.prompt_sha256,
            "engine": self.engine,
            "model": self.model,
            "fallback_reason": self.fallback_reason,
            "usage": {k: v for k, v in vars(self.usage).items()},
        }


def stderr_notice(text: str) -> None:
    """The default sink: a notice may quote an API error body, so it is scrubbed on its way out."""
    from legion_llm.llm.scrub import scrub

    print(scrub(text), file=sys.stderr, flush=True)


@dataclass
class Notices:
    """One-line notices for the user; each distinct text is passed to `sink` once."""

    sink: Callable[[str], None] | None = stderr_notice
    messages: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        if text in self.messages:
            return
        self.messages.append(text)
        if self.sink is not None:
            self.sink(text)


class Engine(Protocol):
    """What pipelines hold. `name` is the engine answering now ("anthropic", "offline", "fake")."""

    meter: UsageMeter
    notices: Notices

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    def ask(
        self,
        schema: type[T],
        prompt_name: str,
        variables: Mapping[str, Any],
        *,
        context: Any = None,
        max_tokens: int | None = None,
        expected_output_tokens: int | None = None,
    ) -> Answer[T]: ...

    def answer(self, request: Request[T]) -> Answer[T]: ...

    def input_budget(self, max_tokens: int | None = None) -> int | None: ...

    def estimate_tokens(self, text: str) -> int: ...

    def measure(
        self, schema: type[BaseModel], prompt_name: str, variables: Mapping[str, Any]
    ) -> int: ...


class EngineBase:
    """Shared `ask`: load and render the prompt strictly, answer, and report this ask's usage."""

    name = "base"

    def __init__(
        self,
        *,
        meter: UsageMeter | None = None,
        notices: Notices | None = None,
        prompts_dir: Path | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.meter = meter or UsageMeter()
        self.notices = notices or Notices()
        self.prompts_dir = prompts_dir
        self.redactor = redactor or Redactor()

    @property
    def model(self) -> str | None:
        return None

    def ask(
        self,
        schema: type[T],
        prompt_name: str,
        variables: Mapping[str, Any],
        *,
        context: Any = None,
        max_tokens: int | None = None,
        expected_output_tokens: int | None = None,
    ) -> Answer[T]:
        raise_if_cancelled()  # a re-ask or the next step of a call its caller gave up on
        before = self.meter.total.copy()
        request = self.request(schema, prompt_name, variables, context, max_tokens,
                               expected_output_tokens)  # fmt: skip
        try:
            answer = self.answer(request)
        except LLMError as exc:  # what the run spent before it failed is part of the answer
            exc.data.setdefault("usage", self.meter.as_dict(self.name))
            raise
        return replace(answer, usage=self.meter.total.minus(before))

    def request(
        self,
        schema: type[T],
        prompt_name: str,
        variables: Mapping[str, Any],
        context: Any = None,
        max_tokens: int | None = None,
        expected_output_tokens: int | None = None,
    ) -> Request[T]:
        """The one place a request is built (an ask, a batch): every secret in the variables
        replaced by its marker, then the prompt rendered strictly from them, with one notice
        saying which kinds. Variables are strings (render refuses any other) and fill the whole
        sent text but the prompt file's own, so each secret is found once, where it was given,
        not again in the rendered text and in the variables."""
        prompt = load_prompt(prompt_name, self.prompts_dir)
        clean, hits = self.redactor.values(
            {k: v for k, v in variables.items() if isinstance(v, str)}
        )
        rendered = prompt.render({**variables, **clean})
        kinds = list(dict.fromkeys(hit.kind for hit in hits))
        if kinds and self.name != "offline":  # the offline engine sends nothing: no notice
            self.notices.add(_redaction_notice(prompt_name, kinds, self.redactor.enabled))
        return Request(schema, rendered, {**variables, **clean}, context, max_tokens,
                       expected_output_tokens)  # fmt: skip

    def answer(self, request: Request[T]) -> Answer[T]:
        raise NotImplementedError

    def input_budget(self, max_tokens: int | None = None) -> int | None:
        """Estimated input tokens one call may carry (None: no limit)."""
        return None

    def estimate_tokens(self, text: str) -> int:
        """This engine's offline estimate of `text` as input, in the unit of `input_budget`."""
        return with_safety(count_tokens(text))

    def measure(
        self, schema: type[BaseModel], prompt_name: str, variables: Mapping[str, Any]
    ) -> int:
        """The estimate this engine checks against `input_budget` before it sends this ask: a
        pipeline that splits its input (compaction) plans with it, so every part it plans is one
        the engine accepts."""
        return self.request_tokens(self.request(schema, prompt_name, variables))

    def request_tokens(self, request: Request[Any]) -> int:
        prompt = request.prompt
        return self.estimate_tokens("\n".join((prompt.system, prompt.context, prompt.user)))

    def usage_dict(self) -> dict[str, Any]:
        return self.meter.as_dict(self.name)


def _redaction_notice(prompt_name: str, kinds: list[str], enabled: bool) -> str:
    if enabled:
        return f"notice: redacted secrets ({', '.join(kinds)}) from the {prompt_name!r} prompt before sending it"
    return (
        f"notice: the {prompt_name!r} prompt holds secrets ({', '.join(kinds)}) and is sent as "
        "given: settings.json memory.redact.enabled is false"
    )


class OfflineEngine(EngineBase):
    """Deterministic steps registered per prompt name: no network, no key, zero cost."""

    name = "offline"

    def __init__(self, registry: OfflineRegistry | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.registry = registry if registry is not None else REGISTRY

    def answer(self, request: Request[T]) -> Answer[T]:
        step = self.registry.get(request.prompt.name)
        call = OfflineCall(request.prompt.name, request.variables, request.context, request.schema)
        result = step(call)
        if not isinstance(result, request.schema):
            raise LLMError(
                f"offline step for {request.prompt.name!r} returned {type(result).__name__}, "
                f"not {request.schema.__name__}"
            )
        output = request.schema.model_validate(result.model_dump())
        self.meter.record(Usage(offline_calls=1), self.name)
        return Answer(output, Usage(), request.prompt.name, request.prompt.sha256, self.name, None)


class SizedByPrimary:
    """For an engine that wraps `primary`: what one call may carry, and how big a request is,
    are the primary's (the pipeline that splits its input asks the wrapper)."""

    primary: Engine

    def input_budget(self, max_tokens: int | None = None) -> int | None:
        return self.primary.input_budget(max_tokens)

    def estimate_tokens(self, text: str) -> int:
        return self.primary.estimate_tokens(text)

    def measure(
        self, schema: type[BaseModel], prompt_name: str, variables: Mapping[str, Any]
    ) -> int:
        return self.primary.measure(schema, prompt_name, variables)


class FallbackEngine(SizedByPrimary, EngineBase):
    """Claude first; the offline step when one answer is unusable (for that answer), and, unless
    the engine was asked for explicitly, when Claude is unavailable (for the rest of the run).
    Each reason is one notice."""

    def __init__(
        self, primary: Engine, fallback: OfflineEngine, *, explicit: bool = False,
        who: str = "Claude",
    ) -> None:  # fmt: skip
        super().__init__(
            meter=primary.meter,
            notices=primary.notices,
            prompts_dir=fallback.prompts_dir,
            redactor=getattr(primary, "redactor", None),
        )
        self.primary = primary
        self.fallback = fallback
        self.explicit = explicit
        self.who = who  # the notices' name for the primary's model
        self.down: str | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.fallback.name if self.down else self.primary.name

    @property
    def model(self) -> str | None:
        return self.primary.model

    def answer(self, request: Request[T]) -> Answer[T]:
        if self.down is not None:
            return replace(self.fallback.answer(request), fallback_reason=self.down)
        try:
            return self.primary.answer(request)
        except (LLMUnavailableError, StructuredOutputError) as exc:
            if not self.fallback.registry.has(request.prompt.name):
                raise
            if self.explicit and isinstance(exc, LLMUnavailableError):
                raise  # --engine anthropic: a failing engine is the command's failure
            reason = exc.message
            if isinstance(exc, LLMUnavailableError):
                self.down = reason
                self.notices.add(
                    f"notice: {self.who} is unavailable ({reason}); "
                    "the offline engine answers the rest of this run"
                )
            else:
                self.notices.add(
                    f"notice: {self.who}'s answer to prompt {request.prompt.name!r} was unusable "
                    f"({reason}); the offline engine answered it"
                )
            return replace(self.fallback.answer(request), fallback_reason=reason)

    def usage_dict(self) -> dict[str, Any]:
        return self.meter.as_dict(self.primary.name)
