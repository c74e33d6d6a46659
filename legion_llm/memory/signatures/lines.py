"""Which lines of tool output say what went wrong: clean-up, the salient line(s), error lines.

Pure functions over text, no I/O. `match.py` normalises, builds the index and scores.

- `unwrap.py` gives the lines a tool printed (escaped JSON logs, HTML entities, markdown and
  terminal wrapping undone), `prefixes.py` removes what a logger, a container runtime or CI put
  before every line;
- `clean_line` drops colour codes, a reporting program's name, a leading `path:line:col:`, and
  the prose a user wrapped around a quoted error (`I got "X: Permission denied" error.`);
- `salient_rules.choose` picks the line(s) that name the error (the final Python exception,
  the `error[E....]` / `error TS....:` line, npm's code + message, Go's `panic:`, ...);
- `signature_lines` adds every other line that bears an error, in order, so that a banner or
  a trailer chosen as salient never hides the line that names the cause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from legion_llm.memory.signatures.prefixes import strip_prefixes
from legion_llm.memory.signatures.salient_rules import (
    EXC,
    FRAME,
    JAVA,
    KEYWORD,
    MAX_SALIENT_LINES,
    PREFIXED,
    Output,
    candidate,
    choose_named,
    is_field,
    strip_marker,
)
from legion_llm.memory.signatures.unwrap import unwrap

__all__ = [
    "ANSI",
    "MAX_SALIENT_LINES",
    "SignatureLines",
    "clean_line",
    "is_error_line",
    "signature_lines",
    "split_salient",
]

# ---------------------------------------------------------------- line clean-up

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LINE_NOISE = re.compile(
    r"^(?:#\d+ \d+(?:\.\d+)? |#\d+ (?=ERROR)"  # docker buildkit "#12 14.31 "
    r"|\d+\|[\w-]+\s*\|\s?"  # pm2 "0|api  | "
    r"|\[\d{4}-\d\d-\d\d[^\]]*\]\s*(?:\[\d+\]\s*)?"  # "[2024-03-11 09:14:52 +0000] [17]"
    r"|\d{4}[/-]\d\d[/-]\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\s+"  # "2024/04/18 11:02:47"
    r"|\$ |\+ "  # shell prompt / xtrace echo
    r"|Request failed due to (?:(?:the )?following (?:response )?errors?:?\s*)?)"  # a wrapper
)
_NPM_PREFIX = re.compile(r"^npm (?:ERR!|error)\s?")
_PROGRAM = re.compile(  # "bash: ", "/bin/sh: 1: ", "./run.sh: line 3: ", "vet: " - who reported it
    r"^(?!(?:error|fatal|warning|warn|hint|note|info|debug|remote|panic|caused|thread)\b)"
    r"(?:[a-z_][a-z0-9_.-]*|(?:\.{0,2}/|~/)\S*?)(?:: (?:line )?\d+)?: (?=\S)"
)
_LOCATION = re.compile(
    r"^\s*(?:[A-Za-z]:)?[^\s:()\[\]'\"]+?"
    r"(?:(?::\d+){1,2}(?::|\s+-\s)|\(\d+,\d+\):|:\[\d+,\d+\])\s*"
)
_LEVEL = re.compile(r"^\[(?:ERROR|WARNING|WARN|INFO|FATAL)(?: [\w.-]+(?: \(\d+\))?)?\]\s*")
_RUBY_FRAME = re.compile(r"^in [`'][^`'\n]*['`](?::\s+(.*)|\s*$)")
# `message: "..."` in a dumped error object is the message itself
_MESSAGE_FIELD = re.compile(
    r"""^[{\[]?\s*['"]?(?:message|msg|errmsg|errorMessage|sqlMessage|error_message|detail)['"]?"""
    r"""\s*[:=]\s*(['"])(?P<message>.+)\1\s*[,}\]]*$"""
)
_SPAN = re.compile(r"`+([^`\n]+)`+|\"([^\"\n]+)\"|“([^”\n]+)”|(?<!\w)'([^'\n]+)'(?!\w)")
_WEAK = re.compile(r"\b(?:errors?|exceptions?)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never)\b", re.IGNORECASE)
# outside the quotes: code, a log line or a runtime's wrapper (`process caused "..."`), not prose
_STRUCTURE = re.compile(r"[{}\[\]=;|]|: |::|\bcaused\b")


def _error_span(span: str) -> bool:
    words = len(span.split())
    return words >= 2 and (is_error_line(span) or (words >= 3 and bool(_NEGATION.search(span))))


# "Today my cluster gives me this error: 0/1 nodes are available: ..." - a user's lead-in
_LEAD_IN = re.compile(
    r"^(?=[^:]*\b(?:I|I'm|my|me|we|our|you|when|after|while|trying)\b)[^:`'\"]{8,100}?"
    r"\b(?:errors?|exceptions?|message|output|says|said|shows?|showing|get|got|gets|getting)"
    r":\s+(?=\S)",
    re.IGNORECASE,
)


def unquote_prose(line: str) -> str:
    """A line of prose around a quoted error is the error: the quoted spans that read as one,
    when the words outside them name no error themselves (`error` alone does not count); a
    user's lead-in before the error (`... gives me this error: `) is dropped."""
    line = _LEAD_IN.sub("", line)
    spans = [(m.start(), m.end(), next(g for g in m.groups() if g)) for m in _SPAN.finditer(line)]
    errors = [(start, end, text.strip()) for start, end, text in spans if _error_span(text)]
    if not errors:
        return line
    outside, last = [], 0
    for start, end, _ in errors:
        outside.append(line[last:start])
        last = end
    outside.append(line[last:])
    rest = _WEAK.sub("", " ".join(outside))
    if (
        _STRUCTURE.search(rest)
        or KEYWORD.search(rest)
        or EXC.search(rest.strip())
        or PREFIXED.search(rest.strip())
    ):
        return line
    return " ".join(text for _, _, text in errors)


def _clean(line: str) -> tuple[str, bool]:
    """(line without colour codes, CI/log prefixes and a leading `path:line:col:`, had a location)."""
    line = ANSI.sub("", line).rstrip()
    for _ in range(2):
        line = _LINE_NOISE.sub("", line.lstrip())
    field = _MESSAGE_FIELD.match(line)
    if field:
        line = field.group("message").replace('\\"', '"')
    line = _NPM_PREFIX.sub("npm error ", line)
    if not is_field(line):  # `name: 'error',` is a field, not a program reporting 'error',
        line = _PROGRAM.sub("", line, count=1)
    level = _LEVEL.match(line)
    head, rest = (level.group(0), line[level.end() :]) if level else ("", line)
    bare = _LOCATION.sub("", rest)
    if bare != rest:
        bare = _RUBY_FRAME.sub(r"\1", bare)  # "path:12:in `meth': msg" is msg; a bare frame is ""
    return (head + bare).strip(), bare != rest


def clean_line(line: str) -> str:
    """One output line without colour codes, CI/log prefixes or a leading `path:line:col:`."""
    return unquote_prose(_clean(line)[0])


# ---------------------------------------------------------------- the signature's lines


def _indent(line: str) -> int:
    prefix = _LINE_NOISE.match(line.lstrip())  # measured after a log prefix: `#9 2.08 \tgo get`
    line = line.lstrip()[prefix.end() :] if prefix else line
    lead = line[: len(line) - len(line.lstrip())]
    return len(lead) + 3 * lead.count("\t")


_BARE_HEAD = re.compile(r"^[\w.:$]+:$")  # `NameError:` - the message is on the next line


def _continue(out: Output, index: int) -> list[int]:
    """A line ending with ':' announces its detail: take the next non-empty line unless it is
    indented deeper (a list of files or a command to run, not the message) - always after a
    bare exception name (`NameError:`)."""
    lines = out.lines
    if not lines[index].endswith(":"):
        return [index]
    for nxt in range(index + 1, min(index + 3, len(lines))):
        if lines[nxt]:
            bare = bool(_BARE_HEAD.match(lines[index]))
            deeper = out.indents[nxt] > out.indents[index]
            return [index, nxt] if bare or not deeper else [index]
    return [index]


@dataclass(frozen=True)
class SignatureLines:
    """What one error text says, line by line (cleaned, prefixes removed, in order)."""

    salient: list[str]  # the line(s) that name the error, by the rules in salient_rules.py
    secondary: list[str]  # every other line that bears an error (messages, not stack frames)
    context: list[str]  # the remaining non-empty lines
    cleaned: list[str]  # every line, cleaned (what discriminating names are read from)
    output: list[str]  # the lines as printed, cleaned, without stack frames (the fingerprint's)
    rule: str = "fallback"  # which rule chose the salient lines (salient_rules.SALIENT_KINDS)


_CODE_TOKEN = re.compile(r"\b(?:E[A-Z]{4,14}|ERR_[A-Z0-9_]+|E\d{4}|TS\d{3,5}|[A-Z]{1,3}\d{4,5})\b")
MAX_SECONDARY = 5
MAX_SECONDARY_CHARS = 400


def is_error_line(line: str) -> bool:
    """Whether a cleaned line reports an error (not a frame, a banner rule or a wrapper)."""
    if not candidate(line) or FRAME.match(line):
        return False
    return bool(
        EXC.search(line)
        or PREFIXED.search(line)
        or KEYWORD.search(line)
        or _CODE_TOKEN.search(line)
        or JAVA.search(line)
    )


def _secondary(lines: list[str], picked: list[int], salient: list[str]) -> list[str]:
    found: list[str] = []
    for index, line in enumerate(lines):
        if index in picked or len(line) > MAX_SECONDARY_CHARS or not is_error_line(line):
            continue
        message = strip_marker(line)
        if message and message not in salient and message not in found:
            found.append(message)
            if len(found) >= MAX_SECONDARY:
                break
    return found


def signature_lines(text: str) -> SignatureLines:
    """Salient, secondary and context lines of raw tool output (see SignatureLines)."""
    raw = strip_prefixes(unwrap(ANSI.sub("", text)))
    cleaned = [_clean(line) for line in raw]
    printed = [line for line, _ in cleaned]
    lines = [unquote_prose(line) for line in printed]
    located = {i for i, (_, had) in enumerate(cleaned) if had}
    out = Output(lines, located, [_indent(line) for line in raw])
    rule, chosen = choose_named(out)
    picked: list[int] = []
    for index in chosen:
        more = _continue(out, index) if len(chosen) == 1 else [index]
        picked += [i for i in more if i not in picked]
    salient: list[str] = []
    for index in picked:
        message = strip_marker(lines[index])
        if message and message not in salient and len(salient) < MAX_SALIENT_LINES:
            salient.append(message)
    secondary = _secondary(lines, picked, salient)
    context = [line for i, line in enumerate(lines) if line and i not in picked]
    return SignatureLines(salient, secondary, context, lines, _output(printed), rule)


def _output(printed: list[str]) -> list[str]:
    """The printed lines without stack frames and the source lines a Python frame quotes."""
    out = []
    for index, line in enumerate(printed):
        quoted_source = (
            index > 0 and printed[index - 1].startswith('File "') and not EXC.match(line)
        )
        if line and not FRAME.match(line) and not quoted_source:
            out.append(strip_marker(line))
    return out


def split_salient(text: str) -> tuple[list[str], list[str]]:
    """(salient lines, context lines) of raw tool output; at most MAX_SALIENT_LINES salient lines."""
    found = signature_lines(text)
    return found.salient, found.context
