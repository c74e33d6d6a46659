"""Structured output from Claude: read the answer, re-ask once, then fail loudly.

Two request shapes (request.py), chosen per model in pricing.py (or by `structured_output`):
- "tool": one tool whose input schema is the pydantic model, forced with
  `tool_choice={"type": "tool", "name": ...}`; the answer is the tool_use block, picked by type.
- "json_schema": `output_config.format` with the JSON schema; the answer is the text block
  (thinking blocks, if any, are skipped).

An answer that does not validate is sent back once with the validation errors, after the
unchanged prefix (so a cached prefix is read, not resent at full price); a second failure is
InvalidOutputError. `stop_reason` "max_tokens" (or a full context window), "refusal", and an
answer with no tool block are typed errors too. None of these ever turns into an empty result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from legion_llm.llm.errors import (
    InvalidOutputError,
    NoToolCallError,
    OutputTruncatedError,
    RefusalError,
    TokenBudgetError,
)

if TYPE_CHECKING:
    from anthropic.types import Message

T = TypeVar("T", bound=BaseModel)
Send = Callable[[dict[str, Any]], "Message"]
_MAX_ERRORS = 20


def ask_structured(send: Send, request: dict[str, Any], schema: type[T], prompt_name: str) -> T:
    """Send, validate, re-ask once with the validation errors, then raise InvalidOutputError."""
    message = send(request)
    output, error, reask = _read(message, request, schema, prompt_name)
    if output is not None:
        return output
    retry = {**request, "messages": [*request["messages"], *reask]}
    try:
        message = send(retry)
    except TokenBudgetError as exc:  # the answer sent back makes the re-ask too large
        raise InvalidOutputError(
            f"Claude's answer to prompt {prompt_name!r} did not match {schema.__name__} "
            f"({error}) and the re-ask with it would not fit: {exc.message}",
            data={"prompt": prompt_name, "validation_errors": error},
        ) from None
    output, error, _ = _read(message, retry, schema, prompt_name)
    if output is not None:
        return output
    raise InvalidOutputError(
        f"Claude's answer to prompt {prompt_name!r} did not match {schema.__name__} "
        f"after one re-ask: {error}",
        data={"prompt": prompt_name, "validation_errors": error},
    )


def _read(
    message: Message, request: dict[str, Any], schema: type[T], prompt_name: str
) -> tuple[T | None, str, list[dict[str, Any]]]:
    """(output, "", []) when valid, else (None, error text, the two re-ask messages)."""
    _check_stop(message, prompt_name)
    if "tools" in request:
        name = request["tool_choice"]["name"]
        block = next((b for b in message.content if b.type == "tool_use" and b.name == name), None)
        if block is None:
            raise NoToolCallError(
                f"Claude's answer to prompt {prompt_name!r} has no {name} tool call"
            )
        try:
            return schema.model_validate(block.input), "", []
        except ValidationError as exc:
            error = describe(exc)
        call = {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
        result = {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                  "content": f"The input does not match the schema:\n{error}\n"
                             f"Call {name} again with corrected input."}  # fmt: skip
        return (
            None,
            error,
            [
                {"role": "assistant", "content": [call]},
                {"role": "user", "content": [result]},
            ],
        )
    text = "".join(b.text for b in message.content if b.type == "text")
    if not text.strip():
        raise NoToolCallError(f"Claude's answer to prompt {prompt_name!r} has no JSON text")
    try:
        return schema.model_validate_json(text), "", []
    except ValidationError as exc:
        error = describe(exc)
    again = f"That JSON does not match the schema:\n{error}\nAnswer again with corrected JSON only."
    return (
        None,
        error,
        [
            {"role": "assistant", "content": [{"type": "text", "text": text}]},
            {"role": "user", "content": again},
        ],
    )


def _check_stop(message: Message, prompt_name: str) -> None:
    reason = message.stop_reason
    if reason == "refusal":
        raise RefusalError(f"Claude refused to answer prompt {prompt_name!r}")
    if reason in ("max_tokens", "model_context_window_exceeded"):
        raise OutputTruncatedError(
            f"Claude's answer to prompt {prompt_name!r} was cut off ({reason}); "
            "raise max_tokens or send less",
            data={"stop_reason": reason, "output_tokens": message.usage.output_tokens},
        )


def describe(exc: ValidationError) -> str:
    """Validation errors as short `field.path: message` lines (no input values echoed)."""
    lines = []
    for error in exc.errors(include_url=False, include_input=False)[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        lines.append(f"{where}: {error['msg']}")
    return "; ".join(lines)
