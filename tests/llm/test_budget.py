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
from legion_llm.llm.pricing import DEFAULT_MODEL, model_info

USAGE_KEYS = {"calls", "input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", "estimated_cost_usd", "avoided_cost_usd",
              "input_tokens_estimated", "input_tokens_counted", "engine", "model"}  # fmt: skip
SONNET = model_info("claude-sonnet-5-5")  # 2 / 10 per MTok, writes 2.50, reads 0.10


def test_usage_adds_up() -> None:
    total = Usage()
    total.add(call_usage(SONNET, input_tokens=10, output_tokens=5, cache_read_input_tokens=7))
    total.add(Usage(offline_calls=1))
    assert (
        total.calls,
        total.input_tokens,
        total.cache_read_input_tokens,
        total.offline_calls,
    ) == (1, 10, 7, 1)
    assert total.estimated_cost_usd == pytest.approx((10 * 2 + 5 * 10 + 7 * 0.1) / 1e6)
    assert total.avoided_by_cache_usd == pytest.approx(7 * (2 - 0.1) / 1e6)


def test_usage_object_has_the_documented_keys() -> None:
    meter = UsageMeter(model=DEFAULT_MODEL)
    meter.record(
        call_usage(model_info(DEFAULT_MODEL), input_tokens=1, output_tokens=1), "anthropic"
    )
    data = meter.as_dict("anthropic")
    assert set(data) >= USAGE_KEYS
    assert data["engine"] == "anthropic" and data["model"] == DEFAULT_MODEL and data["calls"] == 1


def test_cap_reserves_the_expected_output_not_max_tokens() -> None:
    meter = UsageMeter(max_cost_usd=0.01)
    # a full 4096-token answer would cost 0.0025 + 0.041: more than the cap; 500 fit easily
    allowed = meter.reserve(SONNET, input_tokens=1000, expected_output=500, max_tokens=4096)
    assert 500 <= allowed < 4096
    assert SONNET.rates.output * allowed / 1e6 + 1000 * 2.5 / 1e6 <= 0.01  # never past the cap
    assert UsageMeter().reserve(SONNET, input_tokens=10**9, expected_output=10, max_tokens=99) == 99


def test_cap_refuses_a_call_whose_expected_answer_no_longer_fits() -> None:
    meter = UsageMeter(max_cost_usd=0.01)
    meter.record(Usage(calls=1, estimated_cost_usd=0.008), "anthropic")
    with pytest.raises(BudgetExceededError, match="--max-cost") as caught:
        meter.reserve(SONNET, input_tokens=1000, expected_output=500, max_tokens=4096)
    expected = (1000 * 2.5 + 500 * 10) / 1e6
    assert caught.value.data["spent_usd"] == 0.008
    assert caught.value.data["next_call_expected_usd"] == pytest.approx(expected)
    data = meter.as_dict()
    assert data["avoided"]["by_cap_usd"] == pytest.approx(expected)
    assert data["avoided"]["calls_refused_by_cap"] == 1 and data["max_cost_usd"] == 0.01


def test_input_budget() -> None:
    assert input_budget(model_info("claude-sonnet-4-5"), 4096) == 200_000 - 4096
    assert input_budget(model_info("claude-sonnet-4-6"), 4096) == 1_000_000 - 4096
    assert input_budget(SONNET, 4096, cap=50_000) == 50_000


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
