"""User-written regexes (`memory.redact.allow`) checked before use: valid, and free of the shapes
that make Python's backtracking engine take exponential time.

Python's `re` has no time limit, and one allow pattern like `(a|aa)+$` made a 40-character
`outcomes add` take 29 s. A pattern is refused (with a warning; it is never compiled for use)
when, after parsing, a repeat that can match more than once holds

- an alternation (`(a|aa)+`, `(?:x|xy)*`: the ways to split the text multiply), or
- another repeat of variable length (`(a+)+`, `(\\w*\\s?)*`), or
- a back-reference anywhere in the pattern (`(a*)\\1`).

Alternations of single characters are character classes once parsed (`(a|b)+` is `[ab]+`) and
stay allowed, as do fixed repeats inside a repeat (`(?:\\d{3}-)+`). Sequences of repeats that
overlap (`\\w+\\d+x`) can still cost time quadratic in one line; the redactor only runs allow
patterns near a finding (core.py), so that stays bounded by the text around it.
"""

from __future__ import annotations

import re

# the standard parser itself (Python 3.11+), so a pattern is judged exactly as `re` reads it
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser as _sre_parse  # type: ignore[attr-defined]
from typing import Any

_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)} - {None}
_GROUPS = (
    {_sre.SUBPATTERN, _sre.ATOMIC_GROUP} if hasattr(_sre, "ATOMIC_GROUP") else {_sre.SUBPATTERN}
)


def regex_problem(pattern: Any) -> str | None:
    """Why `pattern` may not be used as an allow pattern, or None."""
    if not isinstance(pattern, str) or not pattern:
        return "must be a non-empty string"
    try:
        re.compile(pattern)
        parsed = _sre_parse.parse(pattern)
    except re.error as exc:
        return f"is not a valid regular expression ({exc})"
    except RecursionError:
        return "is nested too deeply"
    unsafe = _unsafe(list(parsed), inside_repeat=False)
    if unsafe:
        return f"could take exponential time ({unsafe})"
    return None


def _unsafe(items: list[tuple[Any, Any]], *, inside_repeat: bool) -> str | None:
    for op, av in items:
        if op in (_sre.GROUPREF, getattr(_sre, "GROUPREF_EXISTS", None)):
            return "a back-reference"
        if op == _sre.BRANCH:
            if inside_repeat:
                return "an alternation inside a repeat"
            for branch in av[1]:
                found = _unsafe(list(branch), inside_repeat=inside_repeat)
                if found:
                    return found
        elif op in _REPEATS:
            low, high, body = av
            if inside_repeat and low != high:
                return "a repeat inside a repeat"
            found = _unsafe(list(body), inside_repeat=inside_repeat or high > 1)
            if found:
                return found
        elif op in _GROUPS:
            found = _unsafe(list(av[-1]), inside_repeat=inside_repeat)
            if found:
                return found
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            found = _unsafe(list(av[1]), inside_repeat=inside_repeat)
            if found:
                return found
    return None
