"""How a pasted error reaches us wrapped, and the plain lines inside.

Users paste errors as a structured logger wrote them (one JSON line with `\\n` inside, a logfmt
line's `msg="..."`), as a CI workflow command encoded them (`::error file=x::a%0Ab`), as an HTML
page escaped them (`&gt;`, `&#39;`), inside markdown (`` `...` ``, `**...**`), quoted in a reply
(`> ` before every line, nested or not), or wrapped by a terminal (`/usr/local/bin/node` on one
line, `: No such file or directory` on the next). `unwrap(text)` returns the lines the tool
printed; pure, no I/O.
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
# GitHub's workflow command: the message after `::`, with %25, %0D and %0A for %, CR and LF
_WORKFLOW = re.compile(r"^(.{0,40}?::(?:error|warning|notice)\b[^:\n]*::)(.*%0A.*)$")
_QUOTE = re.compile(r"^ {0,3}> ?")
MIN_QUOTED = 3  # a reply quotes at least this many lines, most of the text
QUOTED_SHARE = 0.6
_LOGFMT_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[^\s"]\S*)'
_LOGFMT = re.compile(rf"^\s*(?:[\w.-]+={_LOGFMT_VALUE}?\s+)*[\w.-]+={_LOGFMT_VALUE}?\s*$")
_LOGFMT_FIELD = re.compile(rf"(?:^|\s)(msg|message|err|error)=({_LOGFMT_VALUE})")
_LOGFMT_UNESCAPE = re.compile(r"\\(.)")


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


def _workflow_command(line: str) -> str:
    """A workflow command whose message spans lines: its lines, decoded (`%0A` -> newline)."""
    found = _WORKFLOW.match(line)
    if not found:
        return line
    message = found.group(2).replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    return found.group(1) + message.replace("\r\n", "\n")


def _logfmt_message(value: str) -> str:
    if value.startswith('"'):
        escapes = {"n": "\n", "t": "\t", "r": ""}
        return _LOGFMT_UNESCAPE.sub(lambda m: escapes.get(m.group(1), m.group(1)), value[1:-1])
    return value


def _logfmt(line: str) -> str:
    """A logfmt line (`time=... level=error msg="..." err="..."`): its message, then its error
    (`msg: err`, the way Go wraps an error), escapes undone; any other line as it is."""
    if "level=" not in line or not _LOGFMT.match(line):
        return line
    fields = {key: _logfmt_message(value) for key, value in _LOGFMT_FIELD.findall(line)}
    parts = [fields.get("msg") or fields.get("message"), fields.get("err") or fields.get("error")]
    return ": ".join(part for part in parts if part) or line


def _unquote(lines: list[str]) -> list[str]:
    """A reply's quoted lines (`> `, `>> `) without their markers, when most lines are quoted."""
    for _ in range(3):
        filled = [line for line in lines if line.strip()]
        quoted = sum(1 for line in filled if _QUOTE.match(line))
        if quoted < max(MIN_QUOTED, QUOTED_SHARE * len(filled)):
            break
        lines = [_QUOTE.sub("", line, count=1) for line in lines]
    return lines


def unwrap(text: str) -> list[str]:
    """The lines of a pasted error: escaped newlines split, entities decoded, workflow commands
    and logfmt lines read, reply quotes and markdown wrappers removed, and a line that starts
    with `: ` joined to the one before (a wrapped message)."""
    if _ENTITY.search(text):
        text = html.unescape(text)
    raws = [_logfmt(_workflow_command(raw)) for raw in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for raw in _unquote("\n".join(raws).split("\n")):
        for line in _split_escaped(raw):
            line = _plain(line)
            if out and out[-1].strip() and _CONTINUATION.match(line):
                out[-1] = out[-1].rstrip() + line
            else:
                out.append(line)
    return out
