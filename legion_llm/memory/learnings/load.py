"""Loading mission learnings for a goal, within a token budget (mission-memory "How Learnings
Are Loaded").

1. Gotchas are always candidates, whatever their tags.
2. Any other learning is a candidate when one of its tags is a case-insensitive substring of the
   goal text.
3. Order: gotchas first, then the rest; inside each, confidence (high > medium > low), then
   `extractedAt` (newest first), then file name. `limit` caps the tag-matched (non-gotcha)
   learnings; the token budget caps the whole section: learnings are taken in that order while
   they fit, and one that does not fit is left out while smaller ones after it may still fit.

Tokens are a cheap deterministic estimate (characters / 4, rounded up): the memory core never
loads a tokenizer. The section header counts; the estimate of the section returned is at most
`max_tokens`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from legion_llm.memory.learnings.read import Learning, parse_timestamp

DEFAULT_MAX_TOKENS = 2000
DEFAULT_LIMIT = 5
SECTION_HEADER = (
    "## Project Learnings\n\n"
    "Learnings from earlier missions in this project. Treat them as project-specific rules.\n"
)
_RANK = {"high": 0, "medium": 1, "low": 2}


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def matches_goal(learning: Learning, goal: str) -> bool:
    text = goal.lower()
    return any(tag.strip().lower() and tag.strip().lower() in text for tag in learning.tags)


def priority(learning: Learning) -> tuple[int, int, float, str, int]:
    when = parse_timestamp(learning.extracted_at).timestamp()
    gotcha = 0 if learning.category == "gotcha" else 1
    return (gotcha, _RANK.get(learning.confidence, 3), -when, learning.file, learning.section)


def render_entry(learning: Learning) -> str:
    tags = ", ".join(learning.tags)
    meta = f"_{learning.category}, {learning.confidence} confidence; tags: {tags}_"
    return f"\n### {learning.title}\n{meta}\n\n{learning.body.strip()}\n"


@dataclass
class LoadedLearnings:
    learnings: list[Learning] = field(default_factory=list)
    section: str = ""
    tokens: int = 0
    candidates: int = 0
    left_out: list[Learning] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "learnings": [
                {k: v for k, v in item.to_dict().items() if k != "source"}
                for item in self.learnings
            ],
            "section": self.section,
            "tokens": self.tokens,
        }


def load_for_goal(
    learnings: list[Learning],
    goal: str,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    limit: int | None = DEFAULT_LIMIT,
) -> LoadedLearnings:
    gotchas = [item for item in learnings if item.category == "gotcha"]
    matched = sorted(
        (item for item in learnings if item.category != "gotcha" and matches_goal(item, goal)),
        key=priority,
    )
    if limit is not None:
        matched = matched[:limit]
    ranked = sorted(gotchas, key=priority) + matched
    chosen, left_out = _fit(ranked, max_tokens)
    section = SECTION_HEADER + "".join(render_entry(item) for item in chosen) if chosen else ""
    return LoadedLearnings(chosen, section, estimate_tokens(section), len(ranked), left_out)


def section_tokens(items: list[Learning]) -> int:
    """The estimated tokens of the loaded section holding these learnings."""
    return estimate_tokens(SECTION_HEADER + "".join(render_entry(item) for item in items))


def _fit(ranked: list[Learning], max_tokens: int) -> tuple[list[Learning], list[Learning]]:
    """Take learnings in order while the whole section's estimate stays within the budget."""
    chosen: list[Learning] = []
    left_out: list[Learning] = []
    text = SECTION_HEADER
    for item in ranked:
        candidate = text + render_entry(item)
        if estimate_tokens(candidate) <= max_tokens:
            chosen.append(item)
            text = candidate
        else:
            left_out.append(item)
    return chosen, left_out
