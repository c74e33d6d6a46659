"""How a pasted error reaches us wrapped, and the plain lines inside.

Users paste errors as a structured logger wrote them (one JSON line with `\\n` inside), as an
HTML page escaped them (`&gt;`, `&#39;`), inside markdown (`` `...` ``, `**...**`, `> `), or
wrapped by a terminal (`/usr/local/bin/node` on one line, `: No such file or directory` on the
next). `unwrap(text)` returns the lines the tool printed; pure, no I/O.
"""

from __future__ import annotations

import html
import re

_ESCAPED_NEWLINE = re.compile(r"(?:\\r)?\\n")
_ENTITY = re.compile(r"&(?:#\d{2,4}|#x[0-9a-fA-F]{2,4}|gt|lt|amp|quot|apos);")
_MARKDOWN = re.compile(
    r"^(?:>\s*)?(?:\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)(?:\*\*|__|\*|_)$"
    r"|^(?:>\s*)?`{1,3}([^`]+)`{1,3}[.:]?$"
)
_CONTINUATION = re.compile(r"^: (?=\S)")
MIN_ESCAPED = 2  # a line with this many literal `\n` is a logger's escaped multi-line message


def _split_escaped(line: str) -> list[str]:
    """A JSON-escaped multi-line message becomes its lines (quotes and tabs unescaped)."""
    if len(_ESCAPED_NEWLINE.findall(line)) < MIN_ESCAPED:
        return [line]
    return [part.replace('\\"', '"').replace("\\t", "\t") for part in _ESCAPED_NEWLINE.split(line)]


def _plain(line: str) -> str:
    """A line without the markdown emphasis or code span wrapped around all of it."""
    found = _MARKDOWN.match(line.strip())
    if not found:
        return line
    return next(group for group in found.groups() if group is not None)


def unwrap(text: str) -> list[str]:
    """The lines of a pasted error: escaped newlines split, entities decoded, markdown wrappers
    removed, and a line that starts with `: ` joined to the one before (a wrapped message)."""
    if _ENTITY.search(text):
        text = html.unescape(text)
    out: list[str] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        for line in _split_escaped(raw):
            line = _plain(line)
            if out and out[-1].strip() and _CONTINUATION.match(line):
                out[-1] = out[-1].rstrip() + line
            else:
                out.append(line)
    return out
