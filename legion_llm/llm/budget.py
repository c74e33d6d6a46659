"""Usage accounting, the `--max-cost` cap, and the input-budget helpers (split or stop, never truncate).

The cap is never passed and never over-reserves: before a call the meter reserves the call's
*expected* output (the step's estimate, not max_tokens) and cuts the call's max_tokens to what
the money left can pay for, so even a full-length answer stays inside the cap. A call whose
expected answer no longer fits is refused with BudgetExceededError before anything is sent;
its expected cost is reported as avoided. An attempt that broke off after the API began answering
may have been billed for more output than arrived: the most it could have cost beyond what was
recorded is held against the cap (`hold`), so its retries never pass the cap either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from legion_llm.llm.errors import BudgetExceededError, TokenBudgetError
from legion_llm.llm.pricing import (
    ModelInfo,
    affordable_output,
    cache_savings,
    call_cost_bound,
    estimate_cost,
)


@dataclass
class Usage:
    """Token counts and estimated cost. `calls` counts billed Claude requests (a re-ask is one more);
    `offline_calls` counts answers from the offline engine, which cost nothing.

    `input_tokens_estimated` sums the offline (cl100k, scaled) estimate of each call's input and
    `input_tokens_counted` the exact count from the API's count_tokens endpoint where it answered
    (`counted_calls` of them); the billed counts are `input_tokens` + the cache columns."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    estimated_cost_usd: float = 0.0
    offline_calls: int = 0
    input_tokens_estimated: int = 0
    input_tokens_counted: int = 0
    counted_calls: int = 0
    avoided_by_cache_usd: float = 0.0
    avoided_by_cap_usd: float = 0.0
    calls_refused_by_cap: int = 0

    def add(self, other: Usage) -> None:
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def minus(self, other: Usage) -> Usage:
        return Usage(
            **{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)}
        )

    def copy(self) -> Usage:
        total = Usage()
        total.add(self)
        return total


def call_usage(
    info: ModelInfo,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    batch: bool = False,
) -> Usage:
    """The usage of one billed call, priced from the table in pricing.py (`batch`: at the
    Message Batches price)."""
    counts = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
    }
    prompt = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    saved = cache_savings(info, read=cache_read_input_tokens, written=cache_creation_input_tokens,
                          prompt_tokens=prompt) * (info.batch_factor if batch else 1.0)  # fmt: skip
    cost = estimate_cost(info, input_tokens=input_tokens, output_tokens=output_tokens,
                         cache_read_input_tokens=cache_read_input_tokens,
                         cache_creation_input_tokens=cache_creation_input_tokens,
                         batch=batch)  # fmt: skip
    return Usage(calls=1, **counts, estimated_cost_usd=cost, avoided_by_cache_usd=saved)


@dataclass
class UsageMeter:
    """The running total of one command, shared by every engine it uses, with the cost cap."""

    model: str | None = None
    max_cost_usd: float | None = None
    total: Usage = field(default_factory=Usage)
    engines: list[str] = field(default_factory=list)
    held_usd: float = 0.0

    def record(self, usage: Usage, engine: str) -> None:
        self.total.add(usage)
        if engine not in self.engines:
            self.engines.append(engine)

    @property
    def spent_usd(self) -> float:
        return self.total.estimated_cost_usd

    def hold(self, usd: float) -> None:
        """Count `usd` against the cap without reporting it as spent (an unknown bill's bound)."""
        self.held_usd += max(0.0, usd)

    def reserve(
        self, info: ModelInfo, *, input_tokens: int, expected_output: int, max_tokens: int
    ) -> int:
        """The max_tokens the next call may use: `max_tokens`, cut to what the money left under
        the cap pays for. BudgetExceededError (nothing sent) when not even the expected output
        fits; that call's expected cost is then counted as avoided."""
        if self.max_cost_usd is None:
            return max_tokens
        left = self.max_cost_usd - self.spent_usd - self.held_usd
        allowed = affordable_output(info, input_tokens=input_tokens, usd=left)
        if allowed >= min(expected_output, max_tokens):
            return min(max_tokens, allowed)
        expected = call_cost_bound(info, input_tokens=input_tokens, output_tokens=expected_output)
        self.total.avoided_by_cap_usd += expected
        self.total.calls_refused_by_cap += 1
        held = f" (up to ${self.held_usd:.4f} more if broken-off attempts were billed whole)"
        raise BudgetExceededError(
            f"stopped before a call expected to cost about ${expected:.4f}: "
            f"${self.spent_usd:.4f}{held if self.held_usd else ''} spent of --max-cost "
            f"${self.max_cost_usd:.4f}",
            data={
                "max_cost_usd": self.max_cost_usd,
                "spent_usd": round(self.spent_usd, 6),
                "next_call_expected_usd": round(expected, 6),
                "usage": self.as_dict(),
            },
        )

    def engine_label(self, default: str) -> str:
        return "+".join(self.engines) if self.engines else default

    def as_dict(self, engine: str | None = None) -> dict[str, Any]:
        """The `usage` object every LLM command puts in its --json data."""
        total = self.total
        avoided = total.avoided_by_cache_usd + total.avoided_by_cap_usd
        return {
            "calls": total.calls,
            "offline_calls": total.offline_calls,
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "cache_read_input_tokens": total.cache_read_input_tokens,
            "cache_creation_input_tokens": total.cache_creation_input_tokens,
            "input_tokens_estimated": total.input_tokens_estimated,
            "input_tokens_counted": total.input_tokens_counted if total.counted_calls else None,
            "estimated_cost_usd": round(total.estimated_cost_usd, 6),
            "avoided_cost_usd": round(avoided, 6),
            "avoided": {
                "by_cache_usd": round(total.avoided_by_cache_usd, 6),
                "by_cap_usd": round(total.avoided_by_cap_usd, 6),
                "calls_refused_by_cap": total.calls_refused_by_cap,
            },
            "max_cost_usd": self.max_cost_usd,
            "engine": self.engine_label(engine or "none"),
            "model": self.model,
        }


def input_budget(info: ModelInfo, max_tokens: int, cap: int | None = None) -> int:
    """Input tokens a call may carry: the context window less the output, and at most `cap`.
    Compare it with a scaled estimate (`info.scale(count)`), not the raw cl100k count."""
    budget = info.context_tokens - max_tokens
    return max(0, min(budget, cap) if cap is not None else budget)


def check_fits(tokens: int, budget: int, what: str) -> None:
    """Stop with a clear error when `tokens` (already scaled for safety) exceed `budget`."""
    if tokens > budget:
        raise TokenBudgetError(
            f"{what} is about {tokens} tokens, over the input budget of {budget}; "
            "split it into parts (map, then reduce) - it is never truncated",
            data={"estimated_tokens": tokens, "budget_tokens": budget},
        )


def pack_chunks(
    items: Sequence[str],
    budget: int,
    count: Callable[[str], int],
    *,
    overhead: int = 0,
) -> list[list[str]]:
    """Group `items` in order into chunks whose summed `count` plus `overhead` fits `budget`.

    For the map step of map-then-reduce. An item that alone does not fit raises TokenBudgetError
    naming it: items are never cut.
    """
    chunks: list[list[str]] = []
    current: list[str] = []
    used = overhead
    for index, item in enumerate(items):
        size = count(item)
        check_fits(overhead + size, budget, f"item {index + 1} of {len(items)}")
        if current and used + size > budget:
            chunks.append(current)
            current, used = [], overhead
        current.append(item)
        used += size
    if current:
        chunks.append(current)
    return chunks
