"""The one table of models this project knows: prices, context window, structured-output mode.

Prices are USD per million tokens from Anthropic's published price list (standard API, not
batch): base input, 5-minute cache write, cache read, output. Costs computed here are estimates
for `--max-cost` and the `usage` report, never a bill. A model missing from the table is priced
at the table's highest rates (so a budget errs on the safe side) and reported as unknown.

`structured` says how a model is asked for structured output. "tool" forces a tool call
(`tool_choice` naming the tool); the 5.x generation rejects forced tool use, so it is asked with
`output_config.format` (a JSON schema) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StructuredMode = Literal["tool", "json_schema"]

DEFAULT_MODEL = "claude-sonnet-4-6"


@dataclass(frozen=True)
class ModelInfo:
    name: str
    input_per_mtok: float
    output_per_mtok: float
    cache_write_per_mtok: float
    cache_read_per_mtok: float
    context_tokens: int
    structured: StructuredMode
    known: bool = True


def _row(
    name: str, prices: tuple[float, float, float, float], context: int, mode: StructuredMode
) -> ModelInfo:
    return ModelInfo(name, *prices, context_tokens=context, structured=mode)


_4X_CONTEXT = 200_000
_5X_CONTEXT = 1_000_000
_OPUS_4 = (5.0, 25.0, 6.25, 0.50)

MODELS: dict[str, ModelInfo] = {
    row.name: row
    for row in (
        _row("claude-sonnet-4-6", (3.0, 15.0, 3.75, 0.30), _4X_CONTEXT, "tool"),
        _row("claude-haiku-4-5", (1.0, 5.0, 1.25, 0.10), _4X_CONTEXT, "tool"),
        _row("claude-haiku-4-5-20251001", (1.0, 5.0, 1.25, 0.10), _4X_CONTEXT, "tool"),
        _row("claude-opus-4-6", _OPUS_4, _4X_CONTEXT, "tool"),
        _row("claude-opus-4-7", _OPUS_4, _4X_CONTEXT, "tool"),
        _row("claude-opus-4-8", _OPUS_4, _4X_CONTEXT, "tool"),
        _row("claude-opus-5", (5.0, 25.0, 6.25, 0.50), _5X_CONTEXT, "json_schema"),
        _row("claude-sonnet-5", (2.0, 10.0, 2.50, 0.20), _5X_CONTEXT, "json_schema"),
        _row("claude-sonnet-5-5", (2.0, 10.0, 2.50, 0.10), _5X_CONTEXT, "json_schema"),
        _row("claude-opus-5-5", (4.0, 20.0, 5.00, 0.20), _5X_CONTEXT, "json_schema"),
    )
}


def model_info(name: str) -> ModelInfo:
    """The table row for `name`; an unknown model gets the highest prices and a 200k window."""
    if name in MODELS:
        return MODELS[name]
    rows = MODELS.values()
    return ModelInfo(
        name,
        input_per_mtok=max(r.input_per_mtok for r in rows),
        output_per_mtok=max(r.output_per_mtok for r in rows),
        cache_write_per_mtok=max(r.cache_write_per_mtok for r in rows),
        cache_read_per_mtok=max(r.cache_read_per_mtok for r in rows),
        context_tokens=_4X_CONTEXT,
        structured="tool",
        known=False,
    )


def estimate_cost(
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
) -> float:
    """Estimated USD for one call's token counts (`input_tokens` excludes cached tokens, as in the API)."""
    info = model_info(model)
    total = (
        input_tokens * info.input_per_mtok
        + output_tokens * info.output_per_mtok
        + cache_read_input_tokens * info.cache_read_per_mtok
        + cache_creation_input_tokens * info.cache_write_per_mtok
    )
    return total / 1_000_000


def worst_case_cost(model: str, *, input_tokens: int, max_tokens: int) -> float:
    """The most a call could cost: every input token at the dearer of base and cache-write price,
    and a full `max_tokens` of output."""
    info = model_info(model)
    per_input = max(info.input_per_mtok, info.cache_write_per_mtok)
    return (input_tokens * per_input + max_tokens * info.output_per_mtok) / 1_000_000
