"""Parsing YAML and JSON from files anyone may have written, within bounds.

YAML (learning frontmatter): the safe loader, minus aliases. An alias is refused before anything
is built, so a "billion laughs" file costs what its text costs and no more. Nesting deeper than
MAX_DEPTH and text longer than MAX_YAML_CHARS are refused too (the composer recurses per level).

JSON: every reader of JSON that someone else wrote goes through `load_json` (or `decode_first`
for the first object of a text): settings files, mission state, task cards and event lines,
host tickets and proposals, batch records and result lines, the claude CLI's envelopes and
`auth status`, a model's answer read from text. At most MAX_JSON_CHARS, nested at most
MAX_DEPTH deep (the decoder's own recursion limit is caught and said the same way, so a deep
text is one refusal, never a RecursionError); NaN and Infinity, which JSON does not have, read
as null.

Every refusal is an UntrustedInputError whose message completes "<file> ...", for one warning.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any

MAX_DEPTH = 32
MAX_YAML_CHARS = 64_000
MAX_JSON_CHARS = 32_000_000


class UntrustedInputError(ValueError):
    """Why a file's YAML or JSON is refused, said after the file's name."""


@lru_cache(maxsize=1)
def _loader() -> type[Any]:
    """SafeLoader that refuses aliases and nesting deeper than MAX_DEPTH while composing (made
    on first use: the JSON readers here are on hot paths that never read YAML)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise UntrustedInputError(
                    "has a YAML alias in its frontmatter (aliases are refused)"
                )
            self.depth += 1
            try:
                if self.depth > MAX_DEPTH:
                    raise UntrustedInputError(
                        f"has frontmatter nested deeper than {MAX_DEPTH} levels"
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def load_yaml(text: str) -> Any:
    """The YAML value of `text`; UntrustedInputError or yaml.YAMLError when it is refused."""
    if len(text) > MAX_YAML_CHARS:
        raise UntrustedInputError(
            f"has frontmatter too large to read ({len(text):,} characters; "
            f"at most {MAX_YAML_CHARS:,})"
        )
    loader = _loader()(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_json(text: str, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_JSON_CHARS) -> Any:
    """The JSON value of `text`; UntrustedInputError or json.JSONDecodeError when refused."""
    return decode_first(text, 0, max_depth=max_depth, max_chars=max_chars, whole=True)[0]


def decode_first(
    text: str,
    start: int = 0,
    *,
    max_depth: int = MAX_DEPTH,
    max_chars: int = MAX_JSON_CHARS,
    whole: bool = False,
) -> tuple[Any, int]:
    """The JSON value that begins at `start` in `text` and where it ends (text after it is not
    read, unless `whole`: then it must be blank); refused as load_json refuses."""
    if len(text) > max_chars:
        raise UntrustedInputError(
            f"is too large to read ({len(text):,} characters; at most {max_chars:,})"
        )
    value: Any = None
    try:
        if whole:
            value, end = _DECODER.decode(text), len(text)
        else:
            value, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        deep = True
    else:
        deep = _deeper_than(value, max_depth)
    if deep:
        raise UntrustedInputError(f"is nested deeper than {max_depth} levels")
    return value, end


def _no_constant(name: str) -> None:
    """NaN, Infinity, -Infinity: not JSON (Python's decoder accepts them); read as null."""
    return None


def _finite(digits: str) -> float | None:
    """A number too large for a float (1e999) reads as null too, not as infinity."""
    number = float(digits)
    return number if math.isfinite(number) else None


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def _deeper_than(value: Any, limit: int) -> bool:
    """Is any list or object nested more than `limit` levels? (iterative: no recursion)"""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
