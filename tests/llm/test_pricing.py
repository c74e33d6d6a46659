"""The price table: a row for every model the installed SDK knows, published prices, refusals."""

from __future__ import annotations

import typing

import pytest

from legion_llm.llm.errors import UnknownModelError
from legion_llm.llm.pricing import (
    DEFAULT_MODEL,
    MODELS,
    affordable_output,
    cache_savings,
    call_cost_bound,
    estimate_cost,
    model_info,
    parse_price,
)


def sdk_models() -> set[str]:
    from anthropic.types.model_param import ModelParam

    literal = typing.get_args(ModelParam)[0]
    return set(typing.get_args(literal))


def test_every_model_id_of_the_sdk_has_a_row() -> None:
    known = sdk_models()
    assert len(known) >= 20
    assert known <= set(MODELS), f"not priced: {sorted(known - set(MODELS))}"
    for info in MODELS.values():
        rates = info.rates
        assert rates.input > 0 and rates.output > rates.input
        assert rates.cache_read < rates.input < rates.cache_write
        assert info.batch_factor == 0.5
        assert info.max_output_tokens <= info.context_tokens


def test_default_model_is_current_and_cheap() -> None:
    from anthropic._data import DEPRECATED_MODELS

    assert DEFAULT_MODEL in sdk_models() and DEFAULT_MODEL not in DEPRECATED_MODELS
    info = model_info(DEFAULT_MODEL)
    assert info.structured == "json_schema" and info.thinking == "disable" and info.effort
    cheapest = min(m.rates.output for m in MODELS.values())
    assert info.rates.output == cheapest


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-sonnet-5-5", (2.0, 10.0, 2.50, 0.10)),
        ("claude-haiku-5-5", (0.10, 0.50, 0.125, 0.01)),
        ("claude-opus-5-5", (4.0, 20.0, 5.0, 0.20)),
        ("claude-fable-5-1", (10.0, 50.0, 12.50, 0.25)),
        ("claude-fable-5-2", (8.0, 40.0, 10.0, 0.20)),
        ("claude-opus-4-5", (5.0, 25.0, 6.25, 0.50)),
        ("claude-sonnet-4-5", (3.0, 15.0, 3.75, 0.30)),
        ("claude-haiku-4-5", (1.0, 5.0, 1.25, 0.10)),
    ],
)
def test_published_prices(model: str, rates: tuple[float, ...]) -> None:
    info = model_info(model)
    assert (info.rates.input, info.rates.output, info.rates.cache_write,
            info.rates.cache_read) == rates  # fmt: skip


@pytest.mark.parametrize(
    ("model", "context", "cache_min"),
    [("claude-sonnet-4-6", 1_000_000, 1024), ("claude-opus-4-6", 1_000_000, 4096),
     ("claude-sonnet-4-5", 200_000, 1024), ("claude-haiku-4-5", 200_000, 4096),
     ("claude-opus-4-7", 1_000_000, 2048), ("claude-opus-5", 1_000_000, 512),
     ("claude-sonnet-5-5", 1_000_000, 1024)],
)  # fmt: skip
def test_context_windows_and_cache_minimums(model: str, context: int, cache_min: int) -> None:
    info = model_info(model)
    assert (info.context_tokens, info.cache_min_tokens) == (context, cache_min)


def test_structured_mode_and_thinking_per_family() -> None:
    for name, info in MODELS.items():
        generation_5 = not name.startswith(("claude-opus-4", "claude-sonnet-4", "claude-haiku-4"))
        assert info.structured == ("json_schema" if generation_5 else "tool"), name
        if info.thinking == "always":
            assert info.structured == "json_schema", name  # a thinking model cannot be forced
    assert model_info("claude-sonnet-5-5").thinking == "between_tools"
    assert model_info("claude-opus-5-5").thinking == "always"
    assert not model_info("claude-haiku-4-5").effort and model_info("claude-opus-4-5").effort


def test_haiku_5_5_long_prompts_bill_every_token_at_5x() -> None:
    info = model_info("claude-haiku-5-5")
    short = estimate_cost(info, input_tokens=100_000, output_tokens=1000)
    long = estimate_cost(info, input_tokens=90_000, cache_read_input_tokens=20_000,
                         output_tokens=1000)  # fmt: skip
    assert short == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert long == pytest.approx((90_000 * 0.50 + 20_000 * 0.05 + 1000 * 2.50) / 1e6)


def test_batch_halves_every_rate() -> None:
    info = model_info("claude-sonnet-5-5")
    counts = {"input_tokens": 1000, "output_tokens": 500, "cache_read_input_tokens": 3000,
              "cache_creation_input_tokens": 200}  # fmt: skip
    assert estimate_cost(info, **counts, batch=True) == pytest.approx(
        estimate_cost(info, **counts) / 2
    )


def test_cache_savings_and_cost_bounds() -> None:
    info = model_info("claude-sonnet-5-5")
    assert cache_savings(info, read=10_000, written=0, prompt_tokens=10_000) == pytest.approx(
        10_000 * (2.0 - 0.10) / 1e6
    )
    assert cache_savings(info, read=0, written=1000, prompt_tokens=1000) == pytest.approx(
        -1000 * 0.5 / 1e6
    )
    assert call_cost_bound(info, input_tokens=1000, output_tokens=100) == pytest.approx(
        (1000 * 2.5 + 100 * 10) / 1e6
    )
    # $0.0035 pays 1000 input tokens at the write rate and 100 output tokens
    assert affordable_output(info, input_tokens=1000, usd=0.0035) == 100
    assert affordable_output(info, input_tokens=1000, usd=0.002) == 0


def test_unknown_model_is_refused_without_a_price() -> None:
    with pytest.raises(UnknownModelError, match="--price IN/OUT") as caught:
        model_info("claude-future-9")
    assert caught.value.exit_code == 2
    info = model_info("claude-future-9", (3.0, 15.0))
    assert not info.known and info.structured == "json_schema" and not info.effort
    assert (info.rates.cache_write, info.rates.cache_read) == (3.75, pytest.approx(0.3))
    assert model_info("claude-sonnet-5-5", (1.0, 2.0)).rates.output == 2.0  # override a row


@pytest.mark.parametrize("text", ["3", "a/b", "3/15/1", "-1/5", "nan/2"])
def test_bad_prices(text: str) -> None:
    with pytest.raises(ValueError, match="IN/OUT"):
        parse_price(text)
    assert parse_price(" 3 / 15 ") == (3.0, 15.0)
