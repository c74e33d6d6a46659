"""Tests of the distillation eval's second reader (legion_llm/evals/distill_oracle.py) itself.

Each rule is shown on invented text: what it must flag and a near miss it must let through.
The corpus run (tests/pipeline/test_distill_summaries.py) then holds that the pipeline's output
and this reader agree on every real project.
"""

from __future__ import annotations

import pytest

from legion_llm.evals import distill_oracle as oracle

SOURCE = """---
phase: 04-billing
plan: 02
patterns-established:
  - "Money is held as integer cents in `amount_cents`; rounding happens once, at display"
---
# Plan 04-02: Invoice totals

Used `Decimal` only in `format_money()`. 12 of 12 tests pass.
The retry loop waits 250 ms between attempts.
"""


@pytest.mark.parametrize(
    "text",
    [
        "Complete",
        "Phase 4 review PASSED in 1 cycle(s), 0 finding(s)",
        "Invoice totals: shipped",
        "Billing export landed",
        "All checks passed",
    ],
)
def test_a_status_is_flagged(text: str) -> None:
    assert oracle.looks_like_status(text)


@pytest.mark.parametrize(
    "text",
    [
        "Money is held as integer cents; rounding happens once, at display",
        "Invoice totals landed by summing cents before converting, so no rounding drift",
    ],
)
def test_a_pattern_that_says_what_worked_is_not_a_status(text: str) -> None:
    assert not oracle.looks_like_status(text)


def test_a_file_list_is_flagged_and_a_sentence_naming_a_file_is_not() -> None:
    assert oracle.looks_like_file_list("src/billing/totals.py, src/billing/format.py and README.md")
    assert not oracle.looks_like_file_list(
        "Keep rounding in src/billing/format.py so every total is computed in integer cents"
    )


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Hold money in `amount_minor` as integer cents", ["amount_minor"]),
        ("Retry with 500 ms between attempts", ["500"]),
        ("Plan 04-02: 11/12 tests pass", ["11"]),
        ("Use parseMoney() before display", ["parseMoney"]),
        ("Format with money.format_cents", ["money.format_cents"]),
    ],
)
def test_a_name_or_number_the_sources_lack_is_flagged(text: str, missing: list[str]) -> None:
    assert oracle.unstated(text, SOURCE, ["04-02"]) == missing


def test_what_the_sources_state_is_not_flagged_whatever_its_case_or_line_breaks() -> None:
    text = (
        "Plan 04-02 (Invoice totals): hold money in `AMOUNT_CENTS`, use `Decimal` only in "
        "`format_money()`; 12 of 12 tests pass, the retry loop waits 250 ms"
    )
    assert oracle.unstated(text, SOURCE, ["04-02", "04"]) == []
    wrapped = SOURCE.replace("rounding happens once", "rounding\n  happens once")
    assert oracle.unstated("`rounding happens once`", wrapped) == []


def test_a_cited_id_is_allowed_whole_not_its_parts() -> None:
    assert oracle.unstated("Plan 04-02 kept cents", "kept cents", ["04-02"]) == []
    assert oracle.unstated("Plan 04-05 kept cents", "kept cents", ["04-02"]) == ["04-05"]


def test_a_near_copy_of_an_earlier_row_is_flagged_and_another_topic_is_not() -> None:
    earlier = ["Money is held as integer cents; rounding happens once, at display time"]
    assert oracle.near_duplicate(
        "Money is held as integer cents and rounding happens once at display", earlier
    )
    assert (
        oracle.near_duplicate("Retry webhooks with a backoff and an idempotency key", earlier)
        is None
    )


@pytest.mark.parametrize(
    "text",
    [
        "Export job: done in a worker, never in the request, so the page stays fast",
        "Nightly rebuild: complete reindex of the shift table rather than incremental patches",
        "Invoice totals: verified against the ledger on every write, not in a nightly batch",
    ],
)
def test_a_name_and_status_word_followed_by_what_was_done_is_no_status(text: str) -> None:
    assert not oracle.looks_like_status(text)
