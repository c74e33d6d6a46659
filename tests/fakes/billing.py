"""How the fake Messages API bills a request: input tokens counted from the body, and prompt caching.

The prompt is read in the API's cache order (tools, then the output schema, then system, then
messages) as a list of segments, one per block. A block that carries `cache_control` (or the last
block, when the request has a top-level `cache_control`) is a breakpoint. Billing then follows the
published rules:

- a breakpoint whose whole prefix (everything up to and including its block) is at least the
  model's minimum cacheable length is written to the cache; below the minimum nothing is cached
  and nothing is said (the request is billed as plain input, as the API does);
- a later request of the same model whose prefix up to a breakpoint (or up to 20 blocks before
  it) hashes the same as a written entry reads it: `cache_read_input_tokens`;
- what lies between the longest read prefix and the last written breakpoint is
  `cache_creation_input_tokens`; the rest is `input_tokens`;
- an entry lives 5 minutes (`"ttl": "1h"`: an hour) from its last use, on the fake's clock.

Token counts come from a counter (default: cl100k, the same estimate the project uses), so a
benchmark can compare what was billed with the originals measured the same way. Pass another
counter to simulate a tokenizer that counts more.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Counter = Callable[[str], int]

# The tool-use system prompt the API adds when `tools` are sent (tokens, as published for the
# Claude 4 and 5 families): the caller never sees it, but it is billed as input.
TOOL_SYSTEM_TOKENS = {"auto": 346, "none": 346, "any": 313, "tool": 313}
LOOKBACK_BLOCKS = 20
MAX_BREAKPOINTS = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}

# Minimum cacheable prefix per model, from the prompt-caching documentation (models the
# documentation does not list take their predecessor's value; see legion_llm/llm/pricing.py).
CACHE_MINIMUM: dict[str, int] = {
    "claude-opus-5": 512,
    "claude-fable-5": 512,
    "claude-mythos-5": 512,
    "claude-opus-5-5": 512,
    "claude-fable-5-1": 512,
    "claude-fable-5-2": 512,
    "claude-mythos-5-1": 512,
    "claude-mythos-5-2": 512,
    "claude-sonnet-5": 1024,
    "claude-sonnet-5-5": 1024,
    "claude-opus-4-8": 1024,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-sonnet-4-5-20250929": 1024,
    "claude-opus-4-7": 2048,
    "claude-mythos-preview": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-opus-4-5-20251101": 4096,
    "claude-haiku-4-5": 4096,
    "claude-haiku-4-5-20251001": 4096,
    "claude-haiku-5-5": 4096,
}
DEFAULT_CACHE_MINIMUM = 1024


def default_counter() -> Counter:
    from legion_llm.llm.tokens import count_tokens

    return count_tokens


@dataclass(frozen=True)
class Segment:
    """One block of the prompt in cache order: its canonical text, tokens, and breakpoint TTL."""

    key: str
    tokens: int
    ttl: str | None = None


def _canonical(block: Mapping[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def _ttl(block: Any) -> str | None:
    if not isinstance(block, Mapping) or not isinstance(block.get("cache_control"), Mapping):
        return None
    return str(block["cache_control"].get("ttl", "5m"))


def _block_text(block: Mapping[str, Any]) -> str:
    """The part of a content block that the model reads as tokens."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return str(block.get("name", "")) + json.dumps(block.get("input", {}), ensure_ascii=False)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return "".join(_block_text(b) for b in content if isinstance(b, Mapping))
        return str(content)
    if kind in ("thinking", "redacted_thinking"):
        return str(block.get("thinking", block.get("data", "")))
    return json.dumps(block, ensure_ascii=False)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, Mapping)]


def segments(body: Mapping[str, Any], count: Counter) -> list[Segment]:
    """The request's prompt as cache-ordered segments (the tool-use system prompt first)."""
    out: list[Segment] = []
    tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
    if tools:
        choice = body.get("tool_choice") or {"type": "auto"}
        kind = choice.get("type", "auto") if isinstance(choice, Mapping) else "auto"
        out.append(Segment(f"tool-system:{kind}", TOOL_SYSTEM_TOKENS.get(kind, 346)))
    for tool in tools:
        out.append(Segment(_canonical(tool), count(_canonical(tool)), _ttl(tool)))
    output_format = (body.get("output_config") or {}).get("format")
    if output_format:
        text = json.dumps(output_format, sort_keys=True)
        out.append(Segment("format:" + text, count(text)))
    system = body.get("system")
    for block in _blocks(system) if system else []:
        out.append(Segment("system:" + _canonical(block), count(_block_text(block)), _ttl(block)))
    for message in body.get("messages") or []:
        role = str(message.get("role", "user")) if isinstance(message, Mapping) else "user"
        content = message.get("content") if isinstance(message, Mapping) else message
        for block in _blocks(content):
            key = f"{role}:{_canonical(block)}"
            out.append(Segment(key, count(_block_text(block)), _ttl(block)))
    automatic = body.get("cache_control")
    if isinstance(automatic, Mapping) and out and out[-1].ttl is None:
        last = out[-1]
        out[-1] = Segment(last.key, last.tokens, str(automatic.get("ttl", "5m")))
    return out


def breakpoints(body: Mapping[str, Any]) -> int:
    """How many blocks carry `cache_control` (the API refuses more than four)."""
    found = 0
    for tool in body.get("tools") or []:
        found += _ttl(tool) is not None
    system = body.get("system")
    for block in _blocks(system) if system else []:
        found += _ttl(block) is not None
    for message in body.get("messages") or []:
        if isinstance(message, Mapping):
            found += sum(_ttl(b) is not None for b in _blocks(message.get("content")))
    return found


@dataclass(frozen=True)
class Bill:
    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    ttl: str = "5m"

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def usage(self, output_tokens: int) -> dict[str, Any]:
        creation = self.cache_creation_input_tokens
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": creation if self.ttl == "5m" else 0,
                "ephemeral_1h_input_tokens": creation if self.ttl == "1h" else 0,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }


class PromptCache:
    """The fake's prompt cache: entries keyed by model and prefix hash, with expiry times."""

    def __init__(
        self, minimum: Mapping[str, int] | None = None, *, clock: Callable[[], float]
    ) -> None:
        self.minimum = dict(CACHE_MINIMUM if minimum is None else minimum)
        self._clock = clock
        self._entries: dict[tuple[str, str], tuple[float, float]] = {}  # -> (expiry, ttl s)
        self._lock = threading.Lock()

    def minimum_for(self, model: str) -> int:
        return self.minimum.get(model, DEFAULT_CACHE_MINIMUM)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def bill(self, model: str, segs: list[Segment]) -> Bill:
        """Bill one request and update the cache (read entries are refreshed, new ones written)."""
        hashes, totals = _prefixes(segs)
        marks = [i for i, s in enumerate(segs) if s.ttl is not None]
        total = totals[-1] if totals else 0
        if not marks:
            return Bill(total)
        now = self._clock()
        with self._lock:
            read_at = self._longest_hit(model, hashes, marks, now)
            read = totals[read_at] if read_at is not None else 0
            written = [i for i in marks if totals[i] >= self.minimum_for(model)]
            if read_at is not None:  # a hit refreshes the entry's lifetime
                _, seconds = self._entries[(model, hashes[read_at])]
                self._entries[(model, hashes[read_at])] = (now + seconds, seconds)
            for i in written:
                seconds = TTL_SECONDS.get(segs[i].ttl or "5m", 300.0)
                self._entries[(model, hashes[i])] = (now + seconds, seconds)
        if not written:
            return Bill(total - read, 0, read)
        last = written[-1]
        creation = max(0, totals[last] - read)
        return Bill(total - read - creation, creation, read, segs[last].ttl or "5m")

    def _longest_hit(
        self, model: str, hashes: list[str], marks: list[int], now: float
    ) -> int | None:
        best: int | None = None
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                entry = self._entries.get((model, hashes[i]))
                if entry is not None and entry[0] >= now:
                    best = i if best is None else max(best, i)
                    break
        return best


def _prefixes(segs: list[Segment]) -> tuple[list[str], list[int]]:
    hashes: list[str] = []
    totals: list[int] = []
    digest = hashlib.sha256()
    running = 0
    for seg in segs:
        digest.update(seg.key.encode("utf-8") + b"\x00")
        hashes.append(digest.copy().hexdigest())
        running += seg.tokens
        totals.append(running)
    return hashes, totals


def output_tokens(blocks: list[Mapping[str, Any]], count: Counter) -> int:
    """Output tokens of an answer's content blocks (thinking included: it is billed as output)."""
    return max(1, sum(count(_block_text(b)) for b in blocks))
