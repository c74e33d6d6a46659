"""Recency weights and decay scores (memory-manager spec section 4 step 4)."""

from __future__ import annotations

from datetime import date
from functools import lru_cache

UNPARSEABLE_DATE_WEIGHT = 0.4
MIN_DECAY_SCORE = 0.2


@lru_cache(maxsize=4096)
def parse_date(text: str) -> date | None:
    """'2026-03-01' (optionally followed by a time) -> date; anything else -> None."""
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def days_old(text: str, today: date) -> int | None:
    when = parse_date(text)
    if when is None:
        return None
    return max(0, (today - when).days)  # a date after today counts as age 0


def recency_weight(text: str, today: date) -> float:
    age = days_old(text, today)
    if age is None:
        return UNPARSEABLE_DATE_WEIGHT
    if age <= 7:
        return 1.0
    if age <= 30:
        return 0.7
    if age <= 90:
        return 0.4
    return 0.1


def newest_first(date_text: str, number: int | None) -> tuple[int, int]:
    """Sort key for ties: newer date first (unparseable dates last), then higher ID number."""
    when = parse_date(date_text)
    return (-(when.toordinal() if when else 0), -(number or 0))
