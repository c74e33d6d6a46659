"""Usage, prices, the --max-cost check, the input budget and split-or-stop."""

from __future__ import annotations

import pytest

from legion_llm.llm.budget import (
    Usage,
    UsageMeter,
    call_usage,
    check_fits,
    input_budget,
    pack_chunks,
)
from legion_llm.llm.errors import BudgetExceededError, TokenBudgetError
from legion_llm.llm.pricing import DEFAULT_MODEL, MODELS, estimate_cost, model_info, worst_case_cost

USAGE_KEYS = {"calls", "input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", "estimated_cost_usd", "engine", "model"}  # fmt: skip


def test_default_model_is_priced_and_not_deprecated() -> None:
    from anthropic._data import DEPRECATED_MODELS
    from anthropic.types.model_param import ModelParam

    assert DEFAULT_MODEL in MODELS
    assert DEFAULT_MODEL in ModelParam.__args__[0].__args__  # type: ignore[attr-defined]
    assert not set(MODELS) & set(DEPRECATED_MODELS)


def test_prices() -> None:
    assert estimate_cost("claude-sonnet-4-6", input_tokens=1_000_000) == pytest.approx(3.0)
    assert estimate_cost("claude-sonnet-4-6", output_tokens=1_000_000) == pytest.approx(15.0)
    assert estimate_cost("claude-sonnet-4-6", cache_read_input_tokens=1_000_000) == pytest.approx(
        0.3
    )
    assert estimate_cost(
        "claude-haiku-4-5", cache_creation_input_tokens=1_000_000
    ) == pytest.approx(1.25)


def test_unknown_model_is_priced_at_the_highest_rates() -> None:
    info = model_info("claude-future-9")
    assert not info.known and info.structured == "tool"
    assert info.output_per_mtok == max(m.output_per_mtok for m in MODELS.values())


def test_worst_case_uses_the_dearer_input_price_and_full_output() -> None:
    # sonnet 4.6: cache write 3.75 > input 3.00
    assert worst_case_cost("claude-sonnet-4-6", input_tokens=1000, max_tokens=100) == pytest.approx(
        (1000 * 3.75 + 100 * 15) / 1e6
    )


def test_usage_adds_up() -> None:
    total = Usage()
    total.add(
        call_usage(DEFAULT_MODEL, input_tokens=10, output_tokens=5, cache_read_input_tokens=7)
    )
    total.add(Usage(offline_calls=1))
    assert (
        total.calls,
        total.input_tokens,
        total.cache_read_input_tokens,
        total.offline_calls,
    ) == (1, 10, 7, 1)
    assert total.estimated_cost_usd == pytest.approx((10 * 3 + 5 * 15 + 7 * 0.3) / 1e6)


def test_usage_object_has_the_documented_keys() -> None:
    meter = UsageMeter(model=DEFAULT_MODEL)
    meter.record(call_usage(DEFAULT_MODEL, input_tokens=1, output_tokens=1), "anthropic")
    data = meter.as_dict("anthropic")
    assert set(data) >= USAGE_KEYS
    assert data["engine"] == "anthropic" and data["model"] == DEFAULT_MODEL and data["calls"] == 1


def test_max_cost_check() -> None:
    meter = UsageMeter(max_cost_usd=0.01)
    meter.check_cost(DEFAULT_MODEL, input_tokens=1000, max_tokens=100)  # 0.00525 fits
    meter.record(Usage(calls=1, estimated_cost_usd=0.005), "anthropic")
    with pytest.raises(BudgetExceededError) as caught:
        meter.check_cost(DEFAULT_MODEL, input_tokens=1000, max_tokens=100)
    assert caught.value.data["spent_usd"] == 0.005
    assert caught.value.data["next_call_max_usd"] == pytest.approx(0.00525)
    UsageMeter().check_cost(DEFAULT_MODEL, input_tokens=10**9, max_tokens=10**6)  # no cap


def test_input_budget() -> None:
    assert input_budget("claude-sonnet-4-6", 4096) == 200_000 - 4096
    assert input_budget("claude-sonnet-4-6", 4096, cap=50_000) == 50_000
    assert input_budget("claude-sonnet-5-5", 4096) == 1_000_000 - 4096


def test_check_fits_stops_and_never_truncates() -> None:
    check_fits(100, 100, "x")
    with pytest.raises(TokenBudgetError, match="over the input budget of 100; split it"):
        check_fits(101, 100, "the phase")


def test_pack_chunks_keeps_order_and_fits_each_chunk() -> None:
    items = ["aa", "bbb", "c", "dddd", "ee"]
    chunks = pack_chunks(items, 6, len, overhead=1)
    assert chunks == [["aa", "bbb"], ["c", "dddd"], ["ee"]]
    assert [item for chunk in chunks for item in chunk] == items
    assert all(1 + sum(map(len, chunk)) <= 6 for chunk in chunks)


def test_pack_chunks_refuses_an_item_that_alone_is_too_big() -> None:
    with pytest.raises(TokenBudgetError, match="item 2 of 3"):
        pack_chunks(["a", "b" * 10, "c"], 5, len)
