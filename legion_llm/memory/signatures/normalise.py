"""Normalisation of error text: what varies between occurrences becomes a placeholder.

Sentry-style parameterisation (paths, :line:col, addresses, versions, durations, ids, long float
reprs; quotes made uniform), then the canonical form of wordings that differ between tools and
versions (`synonyms.canonical`, data in data/equivalences.toml). Pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from legion_llm.memory.signatures.lines import ANSI
from legion_llm.memory.signatures.synonyms import canonical

__all__ = ["normalise"]

_Sub = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

_PATH_CHARS = r"[^\s'\"`<>|(){}\[\],;:]"


def _path(found: re.Match[str]) -> str:
    """A path becomes <path>; a quoted one keeps its file name, which is often the point."""
    text = found.group(0)
    quoted = found.start() > 0 and found.string[found.start() - 1] in "'\"`"
    name = re.split(r"[\\/]", text.rstrip("\\/"))[-1]
    if quoted and "." in name.strip("."):
        return f"<path>/{name}"
    return "<path>"


# fmt: off
_SUBS: tuple[_Sub, ...] = tuple((re.compile(pattern), repl) for pattern, repl in (
    (r"(?i)\b([a-z][a-z0-9+.-]*(?::[a-z][a-z0-9+.-]*)?)://[^\s'\"`<>()\[\]“”‘’]*[^\s'\"`<>()\[\].,;:“”‘’]", r"\1:<url>"),
    (r"(?i)[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b(?!\.)", "<email>"),
    (rf"(?<![\w])[A-Za-z]:[\\/]{_PATH_CHARS}*", _path),  # C:\x\y  C:/x/y
    (rf"(?<![\w.:/@<>-])(?:~|\.{{1,2}})?/(?!/){_PATH_CHARS}+", _path),  # /x/y ./x ~/x
    (r"(?<![\w./@<>-])(?:[\w.@-]+[\\/])+[\w.@-]*\.[A-Za-z]\w{0,5}\b", _path),  # a/b.py
    (r"<path>(?::\d+){1,2}\b|<path>\(\d+,\d+\)|<path>:\[\d+,\d+\]", "<path>"),  # :line:col
    (r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"(?i)\b0x[0-9a-f]+\b", "<hex>"),
    (r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d[:_]\d\d(?:[:_]\d\d)?(?:[.,_]\d+)?Z?)?", "<date>"),
    (r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b", "<time>"),
    (r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\w.])", "<ip>"),
    (r"(?<![\w:])::(?:1|ffff:[\d.]+)?(?::\d+)?(?![\w:])|\[::\d*\](?::\d+)?", "<ip>"),
    (r"(?i)(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,}(?![\w-])", "<hash>"),
    (r"(?<![\w-])(?=[A-Za-z0-9]*\d[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{7,}(?![\w-])", "<id>"),
    (r"(?<![\w.])[v^~]?\d+\.\d+\.\d+(?:[-+.][\w.-]*\w)?(?![\w])|(?<![\w.])v\d+(?:\.\d+)?\b", "<version>"),
    (r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|min|minutes|h|µs|us|ns)\b", "<duration>"),
    (r"(--[\w-]+)=\S+", r"\1=<value>"),
    (r"(?<![\w.])-?(?=\d[\d.]{15,}(?![\w.]))\d+\.\d+(?![\w.])", "<float>"),  # 0.30000000000000004
    (r"(?<![\w])-?\d+(?:[.,]\d+)?(?![\w])", "<num>"),
))
# fmt: on
_QUOTED = re.compile(r"'([^'\n]*)'|\"([^\"\n]*)\"|`([^`\n]*)`|‘([^’\n]*)’|“([^”\n]*)”")
MAX_QUOTED = 60


def _quote(found: re.Match[str]) -> str:
    """Quotes become '…'; a long quoted text is a message, not a name, and loses its quotes."""
    inner = next(group for group in found.groups() if group is not None)
    inner = _QUOTED.sub(_quote, inner).strip("'")
    if len(inner) > MAX_QUOTED:
        return inner
    return f"'{inner}'"


def normalise(text: str) -> str:
    """Sentry-style parameterisation plus paths, :line:col, addresses, versions, durations, ids,
    long float reprs; then the canonical form of wordings that differ between tools and versions."""
    return canonical(parameterised(text))


@lru_cache(maxsize=65_536)  # every line is asked again by banners, tokens and the fingerprint
def parameterised(text: str) -> str:
    """The text with what varies between occurrences replaced by placeholders."""
    out = ANSI.sub("", text)
    for pattern, repl in _SUBS:
        out = pattern.sub(repl, out)
    out = _QUOTED.sub(_quote, out)
    out = re.sub(r"(?:<(\w+)>)(?:[\s,]*<\1>)+", r"<\1>", out)  # runs of one placeholder
    return re.sub(r"[ \t]+", " ", out).strip()
