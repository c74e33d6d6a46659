"""Usage accounting, the `--max-cost` check, and the input-budget helpers (split or stop, never truncate)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from legion_llm.llm.errors import BudgetExceededError, TokenBudgetError
from legion_llm.llm.pricing import estimate_cost, model_info, worst_case_cost


@dataclass
class Usage:
    """Token counts and estimated cost. `calls` counts billed Claude requests (a re-ask is one more);
    `offline_calls` counts answers from the offline engine, which cost nothing."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    estimated_cost_usd: float = 0.0
    offline_calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.estimated_cost_usd += other.estimated_cost_usd
        self.offline_calls += other.offline_calls

    def copy(self) -> Usage:
        total = Usage()
        total.add(self)
        return total


def call_usage(
    model: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
) -> Usage:
    """The usage of one billed call, priced from the table in pricing.py."""
    counts = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
    }
    return Usage(calls=1, **counts, estimated_cost_usd=estimate_cost(model, **counts))


@dataclass
class UsageMeter:
    """The running total of one command, shared by every engine it uses, with the cost cap."""

    model: str | None = None
    max_cost_usd: float | None = None
    total: Usage = field(default_factory=Usage)
    engines: list[str] = field(default_factory=list)

    def record(self, usage: Usage, engine: str) -> None:
        self.total.add(usage)
        if engine not in self.engines:
            self.engines.append(engine)

    def check_cost(self, model: str, *, input_tokens: int, max_tokens: int) -> None:
        """Raise BudgetExceededError when the next call, at its worst, could pass the cap."""
        if self.max_cost_usd is None:
            return
        next_call = worst_case_cost(model, input_tokens=input_tokens, max_tokens=max_tokens)
        spent = self.total.estimated_cost_usd
        if spent + next_call > self.max_cost_usd:
            raise BudgetExceededError(
                f"stopped before a call that could cost up to ${next_call:.4f}: "
                f"${spent:.4f} spent of --max-cost ${self.max_cost_usd:.4f}",
                data={
                    "max_cost_usd": self.max_cost_usd,
                    "spent_usd": round(spent, 6),
                    "next_call_max_usd": round(next_call, 6),
                    "usage": self.as_dict(),
                },
            )

    def engine_label(self, default: str) -> str:
        return "+".join(self.engines) if self.engines else default

    def as_dict(self, engine: str | None = None) -> dict[str, Any]:
        """The `usage` object every LLM command puts in its --json data."""
        total = self.total
        return {
            "calls": total.calls,
            "offline_calls": total.offline_calls,
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "cache_read_input_tokens": total.cache_read_input_tokens,
            "cache_creation_input_tokens": total.cache_creation_input_tokens,
            "estimated_cost_usd": round(total.estimated_cost_usd, 6),
            "engine": self.engine_label(engine or "none"),
            "model": self.model,
        }


def input_budget(model: str, max_tokens: int, cap: int | None = None) -> int:
    """Estimated input tokens a call may carry: the context window less the output, and at most `cap`.
    Compare it with `tokens.with_safety(count)`, not the raw cl100k count."""
    budget = model_info(model).context_tokens - max_tokens
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
