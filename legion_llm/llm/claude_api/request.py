"""The shape of every Messages request: stable prefix first, cache markers only where they pay,
effort and thinking chosen per step and per model.

Order (the API caches prefixes in the order tools, system, messages):
  tools or output schema -> system prompt -> the prompt's `# context` (large input that stays the
  same across a re-ask) -> the per-call `# user` text -> (on a re-ask) the answer and the errors.

Cache markers: the system block is marked when the prefix up to it (schema or tool, the API's
tool-use prompt, the system text) reaches the model's minimum cacheable length; the context block
when the prefix up to it does. A prefix below the minimum is never marked: the API would not
cache it anyway, and an unmarked block keeps the request honest about what is cached. Sizes
are offline estimates scaled for the model's tokenizer (an over-estimate errs towards marking,
which costs nothing when the API declines to cache).

Effort and thinking (settings `effort` overrides the per-step choice):
- every step is extraction or a judgement over text it is given, checked deterministically
  afterwards, so each runs at effort "low" (STEP_EFFORT); models without the effort parameter
  (Sonnet 4.5, Haiku 4.5) get none;
- thinking is turned off where the model allows it (Haiku 5.5 and Opus 5: `disabled`; Sonnet 5.5:
  `between_tools`; 4.x models: not asked for). Models that always think (Opus 5.5, Fable, Mythos,
  Sonnet 5) get adaptive thinking with its summary streamed (so a long think is not mistaken for
  a stall) and THINKING_ROOM more max_tokens, since thinking counts against max_tokens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from legion_llm.llm.pricing import ModelInfo, StructuredMode
from legion_llm.llm.prompts import RenderedPrompt
from legion_llm.llm.tokens import count_tokens

CACHE_CONTROL = {"type": "ephemeral"}
STEP_EFFORT = {
    "compact-phase": "low",
    "distill-patterns": "low",
    "extract-learnings": "low",
    "error-match": "low",
    "selftest": "low",
}
DEFAULT_EFFORT = "low"
THINKING_ROOM = 2048  # output tokens kept for adaptive thinking at low effort
EXPECTED_THINKING = 512  # what the cost cap reserves for it
TOOL_SYSTEM_TOKENS = 313  # the API's own tool-use system prompt with a forced tool


def tool_name(schema: type[BaseModel]) -> str:
    """`PhaseDigest` -> `record_phase_digest` (the API allows [a-zA-Z0-9_-], 64 characters)."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", schema.__name__).lower()
    return ("record_" + re.sub(r"[^a-z0-9_]", "_", snake))[:64]


_VALUES = ("default", "examples", "const", "enum")


def without_titles(node: Any, *, in_properties: bool = False) -> Any:
    """A JSON schema without its `title` annotations (pydantic adds one per field: tokens the
    model does not need). A *property* named "title" is kept."""
    if isinstance(node, list):
        return [without_titles(item) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and not in_properties and isinstance(value, str):
            continue
        if key in _VALUES and not in_properties:
            out[key] = value  # data, not schema: kept as written
            continue
        nested = key in ("properties", "$defs", "definitions", "patternProperties")
        if in_properties or nested:
            out[key] = without_titles(value, in_properties=not in_properties and nested)
        else:
            out[key] = without_titles(value)
    return out


def output_schema(schema: type[BaseModel]) -> dict[str, Any]:
    from anthropic import transform_schema

    result: dict[str, Any] = without_titles(transform_schema(schema))
    return result


def step_effort(prompt_name: str, setting: str) -> str:
    return STEP_EFFORT.get(prompt_name, DEFAULT_EFFORT) if setting == "auto" else setting


def build_request(
    schema: type[BaseModel],
    prompt: RenderedPrompt,
    *,
    info: ModelInfo,
    max_tokens: int,
    mode: StructuredMode,
    effort: str = "auto",
) -> dict[str, Any]:
    """Keyword arguments for `client.messages.stream` (and `create`)."""
    input_schema = output_schema(schema)
    request: dict[str, Any] = {"model": info.name}
    prefix = _answer_shape(request, schema, input_schema, mode)
    prefix += count_tokens(prompt.system)
    system: dict[str, Any] = {"type": "text", "text": prompt.system}
    if info.scale(prefix) >= info.cache_min_tokens:
        system["cache_control"] = CACHE_CONTROL
    request["system"] = [system]
    content: list[dict[str, Any]] = []
    if prompt.context:
        block: dict[str, Any] = {"type": "text", "text": prompt.context}
        if info.scale(prefix + count_tokens(prompt.context)) >= info.cache_min_tokens:
            block["cache_control"] = CACHE_CONTROL
        content.append(block)
    content.append({"type": "text", "text": prompt.user})
    request["messages"] = [{"role": "user", "content": content}]
    _effort_and_thinking(request, info, step_effort(prompt.name, effort))
    room = THINKING_ROOM if info.thinking == "always" else 0
    request["max_tokens"] = min(info.max_output_tokens, max_tokens + room)
    return request


def _answer_shape(
    request: dict[str, Any], schema: type[BaseModel], input_schema: dict[str, Any], mode: str
) -> int:
    """Add the forced tool or the output format; return its estimated prompt tokens."""
    if mode == "tool":
        name = tool_name(schema)
        description = (schema.__doc__ or "").strip() or f"Record the answer as {schema.__name__}."
        tool = {"name": name, "description": description, "input_schema": input_schema,
                "strict": True}  # fmt: skip
        request["tools"] = [tool]
        request["tool_choice"] = {"type": "tool", "name": name, "disable_parallel_tool_use": True}
        return TOOL_SYSTEM_TOKENS + count_tokens(json.dumps(tool))
    output_format = {"type": "json_schema", "schema": input_schema}
    request["output_config"] = {"format": output_format}
    return count_tokens(json.dumps(output_format))


def _effort_and_thinking(request: dict[str, Any], info: ModelInfo, effort: str) -> None:
    if info.effort:
        request.setdefault("output_config", {})["effort"] = effort
    if info.thinking == "disable":
        request["thinking"] = {"type": "disabled"}
    elif info.thinking == "between_tools":
        request["thinking"] = {"type": "between_tools"}
    elif info.thinking == "always":
        request["thinking"] = {"type": "adaptive", "display": "summarized"}


def expected_output(info: ModelInfo, answer_tokens: int) -> int:
    """Output tokens the cost cap reserves for an answer of about `answer_tokens`."""
    thinking = EXPECTED_THINKING if info.thinking == "always" else 0
    return info.scale(answer_tokens) + thinking


def request_text(request: Mapping[str, Any]) -> str:
    """Everything a request sends as input, as text, for a token estimate."""
    parts = [block["text"] for block in request["system"]]
    parts.append(json.dumps(request["messages"], ensure_ascii=False))
    for key in ("tools", "output_config"):
        if key in request:
            parts.append(json.dumps(request[key], ensure_ascii=False))
    return "\n".join(parts)
