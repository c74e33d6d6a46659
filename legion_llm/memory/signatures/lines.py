"""Which lines of tool output say what went wrong: clean-up, the salient line(s), error lines.

Pure functions over text, no I/O. `match.py` normalises, builds the index and scores.

- `clean_line` drops colour codes, known log prefixes and a leading `path:line:col:`
  (prefixes.py first removes what a logger, a container runtime or CI put before every line);
- `split_salient` reduces raw tool output to the line(s) that name the error (the final Python
  exception, the `error[E....]` / `error TS....:` line, npm's code + message, Go's `panic:`,
  Java's exception and root cause, ...) and returns the rest as context;
- `signature_lines` adds every other line that bears an error, in order, so that a banner or
  a trailer chosen as salient never hides the line that names the cause.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from legion_llm.memory.signatures.prefixes import strip_prefixes

# ---------------------------------------------------------------- line clean-up

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LINE_NOISE = re.compile(
    r"^(?:#\d+ \d+(?:\.\d+)? |#\d+ (?=ERROR)"  # docker buildkit "#12 14.31 "
    r"|\d+\|[\w-]+\s*\|\s?"  # pm2 "0|api  | "
    r"|\[\d{4}-\d\d-\d\d[^\]]*\]\s*(?:\[\d+\]\s*)?"  # "[2024-03-11 09:14:52 +0000] [17]"
    r"|\d{4}[/-]\d\d[/-]\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\s+"  # "2024/04/18 11:02:47"
    r"|\$ |\+ )"  # shell prompt / xtrace echo
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


_LEVEL = re.compile(r"^\[(?:ERROR|WARNING|WARN|INFO)\]\s*")
_RUBY_FRAME = re.compile(r"^in [`'][^`'\n]*['`](?::\s+(.*)|\s*$)")


def _clean(line: str) -> tuple[str, bool]:
    """(line without colour codes, CI/log prefixes and a leading `path:line:col:`, had a location)."""
    line = ANSI.sub("", line).rstrip()
    for _ in range(2):
        line = _LINE_NOISE.sub("", line.lstrip())
    line = _PROGRAM.sub("", _NPM_PREFIX.sub("npm error ", line), count=1)
    level = _LEVEL.match(line)
    head, rest = (level.group(0), line[level.end() :]) if level else ("", line)
    bare = _LOCATION.sub("", rest)
    if bare != rest:
        bare = _RUBY_FRAME.sub(r"\1", bare)  # "path:12:in `meth': msg" is msg; a bare frame is ""
    return (head + bare).strip(), bare != rest


def clean_line(line: str) -> str:
    """One output line without colour codes, CI/log prefixes or a leading `path:line:col:`."""
    return _clean(line)[0]


# ---------------------------------------------------------------- salient lines

_WRAPPER = re.compile(
    r"exit (?:code|status)|non-zero (?:code|exit)|did not complete successfully|"
    r"could not compile|aborting due to|build failed|previous errors?\b|(?:^|: )usage:|"
    r"^(?:To see the full stack trace|Re-run Maven|For more information)",
    re.IGNORECASE,
)
_TS = re.compile(r"\berror (TS\d+): ")
_RUST = re.compile(r"\berror\[E\d{4}\]: ")
_JAVA = re.compile(r"(?:^|[:\s])((?:[a-z_]\w*\.)+[A-Z]\w*(?:Exception|Error))(?::|$)")
_EXC = re.compile(
    r"^\[?((?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception)(?: \[[A-Z0-9_]+\])?)(?::\s*|$)"
)
_WARNING = re.compile(r"\b([A-Z]\w*Warning): ")
_PYTEST_E = re.compile(r"^E\s{2,}(?!\+)(\S.*)$")
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S+ - (.+)$")
_GO = re.compile(r"^(?:panic: |fatal error: |.*\bpanic serving )")
_PREFIXED = re.compile(
    r"^(?:[\w.-]+: )?(?:(?:error|fatal|fatal error|ERROR|FATAL)(?:\[\w+\])?:|\[ERROR\])\s+(?=\S)"
)
_KEYWORD = re.compile(
    r"\b(?:error|errors|fatal|failed|failure|denied|cannot|can't|could not|couldn't|not found|"
    r"no such|unable|refused|invalid|unsupported|missing|mismatch|panic|panicked|exception|"
    r"not supported|not allowed|already in use|already allocated|unknown|unrecognized|"
    r"no space left|does not exist|doesn't exist|does not contain|not satisfy|timed out|"
    r"violates|duplicate|conflicts?|incompatible|exceeded|forbidden|unauthorized|"
    r"unexpected|not permitted|is required|requires cgo|stub)\b",
    re.IGNORECASE,
)
_HEADER = re.compile(
    r"^[_=!*\-\s]{3,}|^[^a-z]*$|^\*? ?What went wrong:?$|^[\W_]*$|^Showing (?:Recent|All) \w+"
)
_PROMPT = re.compile(r"^(?:\S+@\S+:\S*[$#]|[$#❯>%]|\(\S+\)\s*\S*[$#❯])\s")
_MESSAGE_LIKE = re.compile(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}\W+[A-Za-z]{2,}")
MAX_SALIENT_LINES = 3

Rule = Callable[[list[str], set[int]], list[int]]


def _candidate(line: str) -> bool:
    return bool(line) and not _HEADER.search(line) and not _WRAPPER.search(line)


def _all(lines: list[str], pattern: re.Pattern[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if pattern.search(line) and _candidate(line)]


def _first(lines: list[str], pattern: re.Pattern[str]) -> list[int]:
    return _all(lines, pattern)[:1]


def _npm(lines: list[str], located: set[int]) -> list[int]:
    npm = [i for i, line in enumerate(lines) if line.startswith("npm error")]
    if not npm:
        return []
    plumbing = re.compile(r"^npm error (?:code|syscall|path|dest|errno|notarget\s*$|\w+\s*$)")
    code = [i for i in npm if lines[i].startswith("npm error code ")][:1]
    message = [i for i in npm if not plumbing.search(lines[i]) and _candidate(lines[i])][:1]
    return code + message


def _java(lines: list[str], located: set[int]) -> list[int]:
    found = _all(lines, _JAVA)
    if not found:
        return []
    causes = [i for i in found if lines[i].startswith("Caused by:")]
    return sorted({found[0], *causes[-1:]})


def _gradle(lines: list[str], located: set[int]) -> list[int]:
    heads = [i for i, line in enumerate(lines) if line.endswith("What went wrong:")]
    if not heads:
        return []
    block: list[int] = []
    for i in range(heads[0] + 1, len(lines)):
        if not lines[i] or lines[i].startswith("* "):
            break
        block.append(i)
    return block[-1:]  # the deepest "> cause" line of the block


def _pytest(lines: list[str], located: set[int]) -> list[int]:
    return _first(lines, _PYTEST_E) or _first(lines, _PYTEST_SUMMARY)


def _exception(lines: list[str], located: set[int]) -> list[int]:
    found = _all(lines, _EXC)
    if found:
        python = any(line.startswith("Traceback (most recent call last)") for line in lines)
        return found[-1:] if python else found[:1]
    return _all(lines, _WARNING)[-1:]  # like a traceback, the last warning is the outcome


MISSING = re.compile(
    r"\b(?:cannot|can't|could not|couldn't|unable to|failed to) (?:find|load|resolve|locate|open)\b|"
    r"not found|no such|\bno module\b|missing|unresolved|undeclared|not installed|unknown|"
    r"unrecognized|does not exist|doesn't exist",
    re.IGNORECASE,
)


_LABEL = re.compile(r"^(?:\d+\s*)?\|[\s|-]*\^+\s+(?=\S)")  # rustc's primary label: `|  ^^^ why`
_NAMED = re.compile(r"`([^`\s]+)`")


def _rust(lines: list[str], located: set[int]) -> list[int]:
    """The `error[E....]:` line, plus its primary label when a terse headline names a thing and the
    label says it is missing (`unresolved import `x``: `use of undeclared crate or module `x``)."""
    found = _first(lines, _RUST)
    head = _RUST.split(lines[found[0]])[-1] if found else ""
    names = set(_NAMED.findall(head)) if len(_NAMED.sub("", head).split()) <= 3 else set()
    for i in range(found[0] + 1, len(lines)) if names else ():
        if re.match(r"(?:error|warning|note|help)\b|= ", lines[i]):
            break
        label = _LABEL.sub("", lines[i]) if _LABEL.search(lines[i]) else ""
        if label and label not in lines[found[0]] and names & set(_NAMED.findall(label)):
            return [*found, i] if MISSING.search(label) else found
    return found


def _located(lines: list[str], located: set[int]) -> list[int]:
    """Compiler diagnostics (`file.go:6:2: msg`): the lines that started with a location."""
    return [i for i in sorted(located) if _candidate(lines[i])][:1]


# Tried in order; a pattern means "the first matching line" (all of them for tsc).
RULES: tuple[Rule | re.Pattern[str], ...] = (
    _npm, _TS, _rust, _java, _gradle, _pytest, _exception, _GO, _located, _PREFIXED, _KEYWORD,
)  # fmt: skip


def _strip_marker(line: str) -> str:
    """The message of a salient line: no pytest/summary/npm/maven wrapper around it."""
    for pattern in (_PYTEST_E, _PYTEST_SUMMARY):
        found = pattern.search(line)
        if found:
            line = found.group(1)
    line = re.sub(r"^\[ERROR\]\s*|^Caused by:\s*|^>\s*|^Exception in thread \S+\s+", "", line)
    line = _LABEL.sub("", line)
    line = re.sub(  # Maven's wrapper: keep the plugin, drop coordinates and project
        r"^Failed to execute goal (?:[\w.-]+:([\w.-]+):\S+ \([\w.-]+\) )?on project [\w.-]+: ",
        lambda m: f"{m.group(1)}: " if m.group(1) else "",
        line,
    )
    return re.sub(r"\s*-> \[Help \d+\]$|\s*\[recovered\]$", "", line).strip()


def _indent(line: str) -> int:
    prefix = _LINE_NOISE.match(line.lstrip())  # measured after a log prefix: `#9 2.08 \tgo get`
    line = line.lstrip()[prefix.end() :] if prefix else line
    lead = line[: len(line) - len(line.lstrip())]
    return len(lead) + 3 * lead.count("\t")


def _continue(raw: list[str], lines: list[str], index: int) -> list[int]:
    """A line ending with ':' announces its detail: take the next non-empty line unless it is
    indented deeper (a list of files or a command to run, not the message)."""
    if not lines[index].endswith(":"):
        return [index]
    for nxt in range(index + 1, min(index + 3, len(lines))):
        if lines[nxt]:
            return [index, nxt] if _indent(raw[nxt]) <= _indent(raw[index]) else [index]
    return [index]


def _choose(lines: list[str], located: set[int]) -> list[int]:
    for rule in RULES:
        if isinstance(rule, re.Pattern):
            chosen = _all(lines, rule) if rule is _TS else _first(lines, rule)
        else:
            chosen = rule(lines, located)
        if chosen:
            return chosen
    return _fallback(lines)


def _fallback(lines: list[str]) -> list[int]:
    """No rule named the error: the first lines that read like a message (three words or more,
    not a shell prompt, a header or a rule), else the first non-empty line."""
    found = [
        i
        for i, line in enumerate(lines)
        if _candidate(line) and not _PROMPT.match(line) and _MESSAGE_LIKE.search(line)
    ]
    return found[:2] or [i for i, line in enumerate(lines) if line][:1]


@dataclass(frozen=True)
class SignatureLines:
    """What one error text says, line by line (cleaned, prefixes removed, in order)."""

    salient: list[str]  # the line(s) that name the error, by the rules above
    secondary: list[str]  # every other line that bears an error (messages, not stack frames)
    context: list[str]  # the remaining non-empty lines
    cleaned: list[str]  # every line, cleaned (what discriminating names are read from)


_FRAME = re.compile(
    r"^(?:at |File \"|from |in |#\d+ |\d+: |\.\.\. \d+ more|Traceback \(|-->|=|\||~|\^)"
)
_CODE_TOKEN = re.compile(r"\b(?:E[A-Z]{4,14}|ERR_[A-Z0-9_]+|E\d{4}|TS\d{3,5}|[A-Z]{1,3}\d{4,5})\b")
MAX_SECONDARY = 5
MAX_SECONDARY_CHARS = 400


def is_error_line(line: str) -> bool:
    """Whether a cleaned line reports an error (not a frame, a banner rule or a wrapper)."""
    if not _candidate(line) or _FRAME.match(line):
        return False
    return bool(
        _EXC.search(line)
        or _PREFIXED.search(line)
        or _KEYWORD.search(line)
        or _CODE_TOKEN.search(line)
        or _JAVA.search(line)
    )


def _secondary(lines: list[str], picked: list[int], salient: list[str]) -> list[str]:
    found: list[str] = []
    for index, line in enumerate(lines):
        if index in picked or len(line) > MAX_SECONDARY_CHARS or not is_error_line(line):
            continue
        message = _strip_marker(line)
        if message and message not in salient and message not in found:
            found.append(message)
            if len(found) >= MAX_SECONDARY:
                break
    return found


def signature_lines(text: str) -> SignatureLines:
    """Salient, secondary and context lines of raw tool output (see SignatureLines)."""
    raw = strip_prefixes(ANSI.sub("", text).replace("\r\n", "\n").split("\n"))
    cleaned = [_clean(line) for line in raw]
    lines = [line for line, _ in cleaned]
    located = {i for i, (_, had) in enumerate(cleaned) if had}
    chosen = _choose(lines, located)
    picked: list[int] = []
    for index in chosen:
        more = _continue(raw, lines, index) if len(chosen) == 1 else [index]
        picked += [i for i in more if i not in picked]
    salient: list[str] = []
    for index in picked:
        message = _strip_marker(lines[index])
        if message and message not in salient and len(salient) < MAX_SALIENT_LINES:
            salient.append(message)
    secondary = _secondary(lines, picked, salient)
    context = [line for i, line in enumerate(lines) if line and i not in picked]
    return SignatureLines(salient, secondary, context, lines)


def split_salient(text: str) -> tuple[list[str], list[str]]:
    """(salient lines, context lines) of raw tool output; at most MAX_SALIENT_LINES salient lines."""
    found = signature_lines(text)
    return found.salient, found.context
