"""The `sampling` engine: inside `legion-llm mcp`, the MCP client's own model answers.

When the client declares the sampling capability, each ask becomes one `sampling/createMessage`:
our system prompt with the JSON schema appended (sampling has no tools or structured output), the
rendered prompt as the user message, max_tokens, and model preferences naming the configured
model. The reply's text is parsed as JSON (a code fence, or text before and after the first
object, braces included, is tolerated), validated, asked again once with the validation errors,
and then goes through the step's usual verification. The client pays for the call; what we
record is our token estimate, at no cost.

This module does not import mcp: the server hands in a `Sampler` (mcp/sampling.py) that makes the
request on the client's session. `select_mcp_engine` is the server's engine order: an API key ->
anthropic; else sampling when the client offers it; else offline, with one notice pointing to the
host route (engine=host: the agent can write the semantic part itself). Claude Code's CLI is used there only
when asked for (`engine: "claude-code"`). An explicit `sampling`, like every explicit engine,
ends the command when the client cannot answer, and leaves an unusable answer to the offline one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from legion_llm.errors import LegionError
from legion_llm.llm.budget import Usage
from legion_llm.llm.claude_api.structured import describe
from legion_llm.llm.config import LLMConfig, find_credential
from legion_llm.llm.engine import (
    Answer,
    Engine,
    EngineBase,
    FallbackEngine,
    Notices,
    OfflineEngine,
    Request,
)
from legion_llm.llm.errors import (
    InvalidOutputError,
    LLMUnavailableError,
    NoToolCallError,
    OutputTruncatedError,
)
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.memory.redact import Redactor
from legion_llm.memory.untrusted import UntrustedInputError, decode_first

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*?)\n```\s*$", re.DOTALL)
HOST_NOTICE = (
    "notice: no API key is set and this MCP client does not offer sampling; the offline engine "
    "answered. To write the semantic step of phase_compact, memory_distill_patterns or "
    "memory_extract_learnings yourself, call it with engine=host, answer its request, and call it "
    "again with the ticket, your proposal and apply=true (verified like any model's answer)"
)


@dataclass(frozen=True)
class SampleRequest:
    system: str
    messages: tuple[tuple[str, str], ...]  # (role, text): user, assistant, user, ...
    max_tokens: int
    model: str
    timeout_s: float


@dataclass(frozen=True)
class SampleReply:
    text: str
    model: str | None = None
    stop_reason: str | None = None


Sampler = Callable[[SampleRequest], SampleReply]


class SamplingUnavailableError(LLMUnavailableError):
    """The client has no sampling, refused the request, or did not answer in time."""


def schema_instruction(schema: type[BaseModel]) -> str:
    from legion_llm.llm.claude_code.engine import json_schema

    return (
        "Answer with exactly one JSON object and nothing else (no prose, no code fence). It must "
        "match this JSON Schema:\n" + json.dumps(json_schema(schema), ensure_ascii=False)
    )


class SamplingEngine(EngineBase):
    name = "sampling"

    def __init__(self, config: LLMConfig, sampler: Sampler, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.sampler = sampler
        self.client_model: str | None = None

    @property
    def model(self) -> str | None:
        return self.client_model

    def answer(self, request: Request[T]) -> Answer[T]:
        system = f"{request.prompt.system}\n\n{schema_instruction(request.schema)}"
        messages: tuple[tuple[str, str], ...] = (("user", request.prompt.full_user),)
        max_tokens = request.max_tokens or self.config.max_tokens
        name = request.prompt.name
        for _attempt in (1, 2):
            ask = SampleRequest(system, messages, max_tokens, self.config.model,
                                self.config.deadline_s)  # fmt: skip
            reply = self._sample(ask)
            if reply.stop_reason in ("maxTokens", "max_tokens"):
                raise OutputTruncatedError(
                    f"the MCP client's answer to prompt {name!r} was cut off at {max_tokens} tokens"
                )
            output, error = parse_reply(reply.text, request.schema, name)
            if output is not None:
                prompt = request.prompt
                return Answer(output, Usage(), prompt.name, prompt.sha256, self.name, self.model)
            again = f"That answer does not match the schema: {error}. Answer again with JSON only."
            messages = (*messages, ("assistant", reply.text), ("user", again))
        raise InvalidOutputError(
            f"the MCP client's answer to prompt {name!r} did not match "
            f"{request.schema.__name__} after one re-ask: {error}",
            data={"prompt": name, "validation_errors": error},
        )

    def _sample(self, request: SampleRequest) -> SampleReply:
        from legion_llm.llm.tokens import count_tokens

        try:
            reply = self.sampler(request)
        except LegionError:
            raise
        except Exception as exc:  # a reply the client's schema does not allow (`"text": null`)
            raise SamplingUnavailableError(
                f"the MCP client's sampling reply could not be read ({type(exc).__name__})"
            ) from None
        if not isinstance(reply.text, str):
            raise SamplingUnavailableError("the MCP client's sampling reply holds no text")
        self.client_model = reply.model or self.client_model
        sent = "\n".join([request.system, *(text for _, text in request.messages)])
        usage = Usage(
            calls=1, input_tokens=count_tokens(sent), output_tokens=count_tokens(reply.text)
        )
        self.meter.record(usage, self.name)
        return reply


def parse_reply(text: str, schema: type[T], prompt: str) -> tuple[T | None, str]:
    """(the validated object, "") or (None, what is wrong); no JSON at all is NoToolCallError."""
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    start = candidate.find("{")
    if start < 0 or candidate.rfind("}") < start:
        raise NoToolCallError(f"the MCP client's answer to prompt {prompt!r} holds no JSON object")
    try:  # the first object; prose after it (braces and all) is not part of the answer
        data, _ = decode_first(candidate, start)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    except UntrustedInputError as exc:  # a broken model's answer, nested too deeply
        return None, f"not usable JSON (it {exc})"
    try:
        return schema.model_validate(data), ""
    except ValidationError as exc:
        return None, describe(exc)


def select_mcp_engine(
    choice: str | None,
    config: LLMConfig,
    *,
    sampler: Sampler | None,
    env: Mapping[str, str] | None = None,
    registry: OfflineRegistry | None = None,
    notices: Notices | None = None,
    redactor: Redactor | None = None,
) -> Engine:
    """The MCP server's order: key -> anthropic; sampling; offline with the host-tools notice."""
    from legion_llm.llm.factory import select_engine  # above the engines it builds: on a call

    chosen = (choice or config.engine).lower()
    auto_without_key = chosen == "auto" and find_credential(env) is None
    shared: dict[str, Any] = {"env": env, "registry": registry, "notices": notices,
                              "redactor": redactor}  # fmt: skip
    if chosen not in ("sampling",) and not auto_without_key:
        return select_engine(chosen, config, **shared)
    offline = select_engine("offline", config, **shared)
    assert isinstance(offline, OfflineEngine)
    if sampler is None:
        if chosen == "sampling":
            raise SamplingUnavailableError(
                "--engine sampling: this MCP client does not declare the sampling capability"
            )
        offline.notices.add(HOST_NOTICE)
        return offline
    engine = SamplingEngine(config, sampler, meter=offline.meter, notices=offline.notices,
                            redactor=offline.redactor)  # fmt: skip
    if not config.fallback_offline:
        return engine
    return FallbackEngine(
        engine, offline, explicit=chosen == "sampling", who="the MCP client's model"
    )
