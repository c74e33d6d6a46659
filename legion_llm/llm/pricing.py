"""The table of every model the installed SDK knows: prices, limits, and how each is asked.

Prices are USD per million tokens on the standard API: base input, 5-minute cache write, cache
read, output. The Message Batches API halves every one of them (`batch_factor`). A model with a
long-context tier bills the whole request at the tier's rates when its prompt (input plus cache
reads and writes) passes the tier's threshold. Costs here are estimates for `--max-cost` and the
`usage` report, never a bill.

Sources (read 2026-11; re-check when the SDK's model list changes, tests/llm/test_pricing.py
fails when it does):
- platform.claude.com/docs/en/about-claude/pricing, "Model pricing": Fable 5.1, Mythos 5.1,
  Fable 5, Mythos 5, Opus 5 and Opus 4.8-4.5 rows; 1h writes are 2x input (not used here).
- the model overview pages platform.claude.com/docs/en/models/<model>/overview: Opus 5.5
  ($4/$20, writes $5, reads $0.20), Sonnet 5.5 and Sonnet 5 ($2/$10, writes $2.50), Haiku 5.5
  ("from $0.10/$0.50"), Sonnet 4.6 and Opus 4.6 (1M context, 128K output), Sonnet 4.5 and
  Haiku 4.5 (200K context, 64K output), "Batch API: 50% discount on input and output".
- Sonnet 5.5 cache reads were cut to $0.10 on 2026-10-07, and Haiku 5.5's prompt-length tiers
  (up to 100K prompt tokens $0.10/$0.50, writes $0.125, reads $0.01; above, every token of the
  request at 5x) are as pricing trackers read them off the live pricing page (kurofune/claudit
  v1.9.2, TheKrush/PromptFuel v1.0.23, 2026-10).
- Fable 5.2 ($8/$40, writes $10, reads $0.20) as reported by archid21/rightsize v0.10.2 and the
  docs' lineup table; Mythos shares Fable's specifications and pricing (docs, "Fable vs.
  Mythos"), so Mythos 5.2 takes Fable 5.2's row. Mythos Preview: $25/$125 as reported at its
  announcement; its cache rates assume the usual 1.25x and 0.1x.
- Minimum cacheable prefix (docs, prompt caching, "Cache limitations"): 512 for Opus 5, Fable 5
  and Mythos 5; 1,024 for Opus 4.8, Sonnet 5, Sonnet 4.6 and 4.5; 2,048 for Opus 4.7 and Mythos
  Preview; 4,096 for Opus 4.6, Opus 4.5 and Haiku 4.5. Not found for the 5.1, 5.2 and 5.5 models:
  each takes its predecessor's value (`cache_min_published=False`).
- Thinking and effort: Opus 5.5, Fable and Mythos (all versions) think always (adaptive only;
  `disabled` is a 400); Sonnet 5.5 turns up-front thinking off with `between_tools`; Haiku 5.5
  and Opus 5 accept `disabled` at effort high or lower; Sonnet 5 is treated as always thinking
  (only "manual extended thinking is a 400" is documented). Sonnet 4.5 and Haiku 4.5 take no
  effort. Forced tool use is an error on Sonnet 5.5, Opus 5.5 and Fable 5.1 (their overview
  pages), and on any model that thinks, so the 5.x generation and Mythos Preview are asked
  through `output_config.format` (a JSON schema).
- Models from Opus 4.7 on use a newer tokenizer that counts about 30% more tokens for the same
  text than Claude 4.5's (Haiku 5.5 overview), so their offline estimates are scaled further.

A model missing from the table is refused (`UnknownModelError`) unless prices are given with
`--price IN/OUT`, `LEGION_LLM_PRICE` or settings `memory.llm.price`: guessing low could let a run
pass `--max-cost`, and guessing high refuses calls that fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from legion_llm.llm.errors import UnknownModelError

StructuredMode = Literal["tool", "json_schema"]
# off: no thinking unless asked (the request omits `thinking`); disable: thinking is on by
# default and {"type": "disabled"} turns it off; between_tools: {"type": "between_tools"} turns
# up-front thinking off; always: it cannot be turned off (budget output room for it)
ThinkingMode = Literal["off", "disable", "between_tools", "always"]

# Haiku 5.5: the cheapest current model, built for extraction and classification. Every LLM
# step here is extraction or a judgement over text it is given, and every answer is verified
# and repaired deterministically, so a stronger model buys little; Sonnet 5.5 costs 20x more.
DEFAULT_MODEL = "claude-haiku-5-5"
CLASSIC_TOKEN_FACTOR = 1.25  # Claude's tokenizer vs cl100k (Claude 4.5 generation)
NEW_TOKEN_FACTOR = 1.6  # the tokenizer of Opus 4.7 and later: about 30% more again


@dataclass(frozen=True)
class Rates:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def scaled(self, factor: float) -> Rates:
        return Rates(*(factor * v for v in (self.input, self.output, self.cache_write,
                                            self.cache_read)))  # fmt: skip


@dataclass(frozen=True)
class ModelInfo:
    name: str
    rates: Rates
    context_tokens: int
    max_output_tokens: int
    structured: StructuredMode
    cache_min_tokens: int
    thinking: ThinkingMode
    effort: bool
    new_tokenizer: bool
    long_context: tuple[int, Rates] | None = None  # (prompt tokens above which, rates)
    batch_factor: float = 0.5
    cache_min_published: bool = True
    known: bool = True

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The rates of a request whose prompt (input + cache reads + writes) is this long."""
        if self.long_context is not None and prompt_tokens > self.long_context[0]:
            return self.long_context[1]
        return self.rates

    @property
    def token_factor(self) -> float:
        """Scale for a cl100k count to this model's tokens (an over-estimate, for budgets)."""
        return NEW_TOKEN_FACTOR if self.new_tokenizer else CLASSIC_TOKEN_FACTOR

    def scale(self, cl100k_tokens: int) -> int:
        return math.ceil(cl100k_tokens * self.token_factor)


_M = 1_000_000
_K200 = 200_000
OPUS_4 = Rates(5.0, 25.0, 6.25, 0.50)
SONNET_4 = Rates(3.0, 15.0, 3.75, 0.30)
FABLE_5 = Rates(10.0, 50.0, 12.50, 1.00)
FABLE_5_1 = Rates(10.0, 50.0, 12.50, 0.25)
FABLE_5_2 = Rates(8.0, 40.0, 10.0, 0.20)
HAIKU_5_5 = Rates(0.10, 0.50, 0.125, 0.01)
HAIKU_5_5_LONG = (100_000, Rates(0.50, 2.50, 0.625, 0.05))


def _row(name: str, rates: Rates, context: int, output: int, cache_min: int,
         thinking: ThinkingMode, *, effort: bool = True, new: bool = True,
         mode: StructuredMode = "json_schema", published: bool = True,
         long: tuple[int, Rates] | None = None) -> ModelInfo:  # fmt: skip
    return ModelInfo(name, rates, context, output, mode, cache_min, thinking, effort, new, long,
                     cache_min_published=published)  # fmt: skip


_ROWS = (
    # current generation
    _row("claude-haiku-5-5", HAIKU_5_5, _M, 128_000, 4096, "disable", published=False,
         long=HAIKU_5_5_LONG),
    _row("claude-sonnet-5-5", Rates(2.0, 10.0, 2.50, 0.10), _M, 128_000, 1024, "between_tools",
         published=False),
    _row("claude-opus-5-5", Rates(4.0, 20.0, 5.0, 0.20), _M, 128_000, 512, "always",
         published=False),
    _row("claude-fable-5-2", FABLE_5_2, _M, 128_000, 512, "always", published=False),
    _row("claude-mythos-5-2", FABLE_5_2, _M, 128_000, 512, "always", published=False),
    _row("claude-fable-5-1", FABLE_5_1, _M, 128_000, 512, "always", published=False),
    _row("claude-mythos-5-1", FABLE_5_1, _M, 128_000, 512, "always", published=False),
    # legacy 5.0
    _row("claude-sonnet-5", Rates(2.0, 10.0, 2.50, 0.20), _M, 128_000, 1024, "always"),
    _row("claude-opus-5", OPUS_4, _M, 128_000, 512, "disable"),
    _row("claude-fable-5", FABLE_5, _M, 128_000, 512, "always"),
    _row("claude-mythos-5", FABLE_5, _M, 128_000, 512, "always"),
    _row("claude-mythos-preview", Rates(25.0, 125.0, 31.25, 2.50), _M, 128_000, 2048, "always"),
    # 4.x: thinking only when asked; a forced tool call is the structured answer
    _row("claude-opus-4-8", OPUS_4, _M, 128_000, 1024, "off", mode="tool"),
    _row("claude-opus-4-7", OPUS_4, _M, 128_000, 2048, "off", mode="tool"),
    _row("claude-opus-4-6", OPUS_4, _M, 128_000, 4096, "off", new=False, mode="tool"),
    _row("claude-sonnet-4-6", SONNET_4, _M, 128_000, 1024, "off", new=False, mode="tool"),
    _row("claude-opus-4-5", OPUS_4, _K200, 64_000, 4096, "off", new=False, mode="tool"),
    _row("claude-opus-4-5-20251101", OPUS_4, _K200, 64_000, 4096, "off", new=False, mode="tool"),
    _row("claude-sonnet-4-5", SONNET_4, _K200, 64_000, 1024, "off", effort=False, new=False,
         mode="tool"),
    _row("claude-sonnet-4-5-20250929", SONNET_4, _K200, 64_000, 1024, "off", effort=False,
         new=False, mode="tool"),
    _row("claude-haiku-4-5", Rates(1.0, 5.0, 1.25, 0.10), _K200, 64_000, 4096, "off",
         effort=False, new=False, mode="tool"),
    _row("claude-haiku-4-5-20251001", Rates(1.0, 5.0, 1.25, 0.10), _K200, 64_000, 4096, "off",
         effort=False, new=False, mode="tool"),
)  # fmt: skip
MODELS: dict[str, ModelInfo] = {row.name: row for row in _ROWS}


def parse_price(text: str) -> tuple[float, float]:
    """`"3/15"` -> (3.0, 15.0): USD per million input and output tokens; ValueError otherwise."""
    parts = text.replace(",", "/").split("/")
    try:
        if len(parts) != 2:
            raise ValueError
        price = (float(parts[0]), float(parts[1]))
    except ValueError:
        raise ValueError(
            "must be IN/OUT, USD per million input and output tokens (e.g. 3/15)"
        ) from None
    if not all(math.isfinite(p) and p >= 0 for p in price):
        raise ValueError("must be two non-negative numbers IN/OUT (e.g. 3/15)")
    return price


def model_info(name: str, price: tuple[float, float] | None = None) -> ModelInfo:
    """The table row for `name`; with `price`, a known row's prices replaced, or a row for a
    model the table lacks (cache at the usual 1.25x and 0.1x, a 200K window, JSON-schema
    output, no effort or thinking parameters sent). Unknown without a price: UnknownModelError."""
    row = MODELS.get(name)
    if price is not None:
        rates = Rates(price[0], price[1], price[0] * 1.25, price[0] * 0.1)
        if row is not None:
            return replace(row, rates=rates, long_context=None)
        return ModelInfo(name, rates, _K200, 32_000, "json_schema", 1024, "off", False, True,
                         known=False, cache_min_published=False)  # fmt: skip
    if row is None:
        raise UnknownModelError(
            f"model {name!r} is not in the price table (legion_llm/llm/pricing.py); give its "
            "prices with --price IN/OUT (USD per million input/output tokens), LEGION_LLM_PRICE "
            "or settings memory.llm.price, or use a known model such as "
            f"{DEFAULT_MODEL} or claude-sonnet-5-5",
            data={"model": name, "known_models": sorted(MODELS)},
        )
    return row


def row_or_dearest(name: str, price: tuple[float, float] | None = None) -> ModelInfo:
    """The row for `name` (or `price`), else the dearest row's rates under this name: for an
    engine that bills by its own account (Claude Code) and only needs a bound."""
    try:
        return model_info(name, price)
    except UnknownModelError:
        dearest = max(MODELS.values(), key=lambda row: row.rates.output)
        return replace(dearest, name=name, known=False, long_context=None)


def estimate_cost(
    info: ModelInfo,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    batch: bool = False,
) -> float:
    """Estimated USD for one call's counts (`input_tokens` excludes cached tokens, as in the API)."""
    prompt = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    rates = info.rates_for(prompt)
    if batch:
        rates = rates.scaled(info.batch_factor)
    total = (
        input_tokens * rates.input
        + output_tokens * rates.output
        + cache_read_input_tokens * rates.cache_read
        + cache_creation_input_tokens * rates.cache_write
    )
    return total / 1_000_000


def cache_savings(info: ModelInfo, *, read: int, written: int, prompt_tokens: int) -> float:
    """USD that caching saved on one call: reads below the input price, less the write premium."""
    rates = info.rates_for(prompt_tokens)
    saved = read * (rates.input - rates.cache_read) - written * (rates.cache_write - rates.input)
    return saved / 1_000_000


def call_cost_bound(info: ModelInfo, *, input_tokens: int, output_tokens: int) -> float:
    """The most a call could cost with this much output: every input token at the dearer of the
    input and cache-write rates, at the long-context tier when the prompt reaches it."""
    rates = info.rates_for(input_tokens)
    per_input = max(rates.input, rates.cache_write)
    return (input_tokens * per_input + output_tokens * rates.output) / 1_000_000


def affordable_output(info: ModelInfo, *, input_tokens: int, usd: float) -> int:
    """The most output tokens a call with this input can generate within `usd` (0 if none)."""
    rates = info.rates_for(input_tokens)
    left = usd - input_tokens * max(rates.input, rates.cache_write) / 1_000_000
    if left <= 0 or rates.output <= 0:
        return 0 if left <= 0 else info.max_output_tokens
    return int(left * 1_000_000 / rates.output)
