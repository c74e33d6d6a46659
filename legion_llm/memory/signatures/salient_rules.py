"""Which line(s) of cleaned tool output name the error: the rules, tried in order.

Pure functions over cleaned lines (`lines.py` cleans them and assembles the signature). Each
rule knows one kind of output: npm's code + message, tsc's `error TS....:`, rustc's
`error[E....]:` (and its primary label), Java's exception and root cause, Gradle's "What went
wrong", pytest's `E` lines, a Python traceback's final exception, Go's `panic:`, compiler
diagnostics that start with a location, `error:`-prefixed lines, then any line with an error
word. A line that only dumps a field of an error object (`code: 'E11000',`, `State: Terminated`)
or a shell prompt is never chosen while a message line exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

WRAPPER = re.compile(
    r"exit (?:code|status)|non-zero (?:code|exit)|did not complete successfully|"
    r"could not compile|aborting due to|build failed|previous errors?\b|(?:^|: )usage:|"
    r"^(?:To see the full stack trace|Re-run Maven|For more information)|"
    r"^Step \d+/\d+ : |recipe for target \S+ failed|"  # build step banners, make trailers
    r"^\*{3} \[[^\]]*\] Error \d+$",
    re.IGNORECASE,
)
TS = re.compile(r"\berror (TS\d+): ")
RUST = re.compile(r"\berror\[E\d{4}\]: ")
JAVA = re.compile(r"(?:^|[:\s])((?:[a-z_]\w*\.)+[A-Z]\w*(?:Exception|Error))(?::|$)")
EXC = re.compile(
    r"^\[?((?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception)(?: \[[A-Z0-9_]+\])?)(?::\s*|$)"
)
_PY_EXC = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s+\S.*)?$")
_WARNING = re.compile(r"\b([A-Z]\w*Warning): ")
PYTEST_E = re.compile(r"^E\s{2,}(?!\+)(\S.*)$")
PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S+ - (.+)$")
_GO = re.compile(r"^(?:panic: |fatal error: |.*\bpanic serving )")
PREFIXED = re.compile(
    r"^(?:[\w.-]+: )?(?:(?:error|fatal|fatal error|ERROR|FATAL)(?:\[\w+\])?:|\[ERROR\])\s+(?=\S)"
)
KEYWORD = re.compile(
    r"\b(?:error|errors|fatal|failed|failure|denied|cannot|can't|could not|couldn't|not found|"
    r"no such|unable|refused|invalid|unsupported|missing|mismatch|panic|panicked|exception|"
    r"not supported|not allowed|already in use|already allocated|unknown|unrecognized|"
    r"no space left|does not exist|doesn't exist|does not contain|not satisfy|timed out|"
    r"violates|duplicate|conflicts?|incompatible|exceeded|forbidden|unauthorized|"
    r"unexpected|not permitted|is required|requires cgo|stub|exclude all|oomkilled)\b",
    re.IGNORECASE,
)
_HEADER = re.compile(
    r"^[_=!*\-\s]{3,}|^[^a-z]*$|^\*? ?What went wrong:?$|^[\W_]*$|^Showing (?:Recent|All) \w+"
)
PROMPT = re.compile(r"^(?:\S+@\S+:\S*[$#]|[$#❯>%]|\(\S+\)\s*\S*[$#❯])\s")
_MESSAGE_LIKE = re.compile(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}\W+[A-Za-z]{2,}")
FRAME = re.compile(
    r"^(?:at |File \"|from |in |#\d+ |\d+: |\.\.\. \d+ more|Traceback \(|-->|=|\||~|\^)"
)
# One field of a dumped error object or a `describe` listing: `code: 'E11000',`, `fatal: true }`,
# `State:   Terminated`. It says which error, not what went wrong: a message line is preferred.
_FIELD = re.compile(
    r"""^[{\[(]?\s*['"]?(?P<key>[A-Za-z_$@][\w$@.-]{0,30}(?: [A-Za-z]+)?)['"]?\s*[:=]\s+"""
    r"""(?P<value>.*?)\s*[,;}\])]*$"""
)
_LITERAL = re.compile(
    r"""^(?:'[^']*'|"[^"]*"|-?\d[\d.:]*\w{0,3}|true|false|null|undefined|None|True|False|"""
    r"""\[[^\]]*\]|\{[^}]*\}|<\w+>)$"""
)
_BARE_WORD = re.compile(r"^[\w.-]+$")
_ERRORISH_KEY = re.compile(r"(?:error|exception|fatal|warning|panic|fail(?:ed|ure)?)$", re.I)
_EXCEPTION_KEY = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Failure)$")
MISSING = re.compile(
    r"\b(?:cannot|can't|could not|couldn't|unable to|failed to) (?:find|load|resolve|locate|open)\b|"
    r"not found|no such|\bno module\b|missing|unresolved|undeclared|not installed|unknown|"
    r"unrecognized|does not exist|doesn't exist",
    re.IGNORECASE,
)
MAX_SALIENT_LINES = 3


def is_field(line: str) -> bool:
    """Whether a cleaned line only dumps one field of an error object (see _FIELD)."""
    found = _FIELD.match(line)
    if not found:
        return False
    value, key = found.group("value"), found.group("key")
    if _LITERAL.match(value):
        return not _EXCEPTION_KEY.match(key)  # `KeyError: 'x'` is an exception, `code: 'x'` a field
    return bool(_BARE_WORD.match(value)) and not _ERRORISH_KEY.search(key)


def candidate(line: str) -> bool:
    """Whether a cleaned line may name the error (not a header, a wrapper or a dumped field)."""
    return (
        bool(line) and not _HEADER.search(line) and not WRAPPER.search(line) and not is_field(line)
    )


@dataclass(frozen=True)
class Output:
    """Cleaned lines of one text, which of them started with a location, and their indents."""

    lines: list[str]
    located: set[int]
    indents: list[int]


Rule = Callable[[Output], list[int]]


def _all(lines: list[str], pattern: re.Pattern[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if pattern.search(line) and candidate(line)]


def _first(lines: list[str], pattern: re.Pattern[str]) -> list[int]:
    return _all(lines, pattern)[:1]


_NPM_PLUMBING = re.compile(
    r"^npm error(?:$| (?:code|syscall|path|dest|errno|file|cwd|signal|argv|node|npm|"
    r"notarget\s*$|\w+\s*$)\b| (?:Darwin|Linux|Windows_NT) \S+$)"
)
_NPM_WRAPPER = re.compile(r"^npm error code (?:ELIFECYCLE|\d+)$")  # the script failed: see above


def _npm(out: Output) -> list[int]:
    """npm's code and its first message line; when the code only says that a script failed,
    the error line the script printed before npm took over instead of npm's message."""
    lines = out.lines
    npm = [i for i, line in enumerate(lines) if line.startswith("npm error")]
    if not npm:
        return []
    code = [i for i in npm if lines[i].startswith("npm error code ")][:1]
    message = [i for i in npm if not _NPM_PLUMBING.search(lines[i]) and candidate(lines[i])][:1]
    if code and _NPM_WRAPPER.match(lines[code[0]]):
        before = [i for i in range(npm[0]) if KEYWORD.search(lines[i]) and candidate(lines[i])]
        message = before[-1:] or _script_output(lines, npm) or message
    return code + message


def _script_output(lines: list[str], npm: list[int]) -> list[int]:
    """npm 7+ prints a failed script's own output under `npm error` after its `command` line:
    the first error line there (node-gyp's `gyp info` / `gyp ERR!` lines are its banner)."""
    command = next((i for i in npm if lines[i].startswith("npm error command ")), None)
    if command is None:
        return []
    for i in npm:
        text = lines[i].removeprefix("npm error").strip()
        if i <= command or text.startswith(("gyp ", "command ")) or _NPM_PLUMBING.search(lines[i]):
            continue
        if (KEYWORD.search(text) or EXC.search(text)) and candidate(lines[i]):
            return [i]
    return []


def _java(out: Output) -> list[int]:
    found = _all(out.lines, JAVA)
    if not found:
        return []
    causes = [i for i in found if out.lines[i].startswith("Caused by:")]
    return sorted({found[0], *causes[-1:]})


def _gradle(out: Output) -> list[int]:
    lines = out.lines
    heads = [i for i, line in enumerate(lines) if line.endswith("What went wrong:")]
    if not heads:
        return []
    block: list[int] = []
    for i in range(heads[0] + 1, len(lines)):
        if not lines[i] or lines[i].startswith("* "):
            break
        block.append(i)
    return block[-1:]  # the deepest "> cause" line of the block


def _pytest(out: Output) -> list[int]:
    return _first(out.lines, PYTEST_E) or _first(out.lines, PYTEST_SUMMARY)


def _python(out: Output) -> list[int]:
    """A Python traceback ends with its exception: the first unindented `Name: message` line
    after the last `Traceback` header (any exception class, not only `...Error`)."""
    lines = out.lines
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call")]
    if not starts:
        return []
    return [
        i
        for i in range(starts[-1] + 1, len(lines))
        if out.indents[i] == 0 and _PY_EXC.match(lines[i]) and candidate(lines[i])
    ][:1]


def _exception(out: Output) -> list[int]:
    found = _all(out.lines, EXC)
    if found:
        python = any(line.startswith("Traceback (most recent call") for line in out.lines)
        return found[-1:] if python else found[:1]
    return _all(out.lines, _WARNING)[-1:]  # like a traceback, the last warning is the outcome


_LABEL = re.compile(r"^(?:\d+\s*)?\|[\s|-]*\^+\s+(?=\S)")  # rustc's primary label: `|  ^^^ why`
_NAMED = re.compile(r"`([^`\s]+)`")


def _rust(out: Output) -> list[int]:
    """The `error[E....]:` line, plus its primary label when a terse headline names a thing and the
    label says it is missing (`unresolved import `x``: `use of undeclared crate or module `x``)."""
    lines = out.lines
    found = _first(lines, RUST)
    head = RUST.split(lines[found[0]])[-1] if found else ""
    names = set(_NAMED.findall(head)) if len(_NAMED.sub("", head).split()) <= 3 else set()
    for i in range(found[0] + 1, len(lines)) if names else ():
        if re.match(r"(?:error|warning|note|help)\b|= ", lines[i]):
            break
        label = _LABEL.sub("", lines[i]) if _LABEL.search(lines[i]) else ""
        if label and label not in lines[found[0]] and names & set(_NAMED.findall(label)):
            return [*found, i] if MISSING.search(label) else found
    return found


def _located(out: Output) -> list[int]:
    """Compiler diagnostics (`file.go:6:2: msg`): the lines that started with a location."""
    return [i for i in sorted(out.located) if candidate(out.lines[i])][:1]


def _pattern(pattern: re.Pattern[str], every: bool = False) -> Rule:
    def rule(out: Output) -> list[int]:
        return _all(out.lines, pattern) if every else _first(out.lines, pattern)

    rule.__name__ = f"first line matching {pattern.pattern[:30]}"
    return rule


def _keyword(out: Output) -> list[int]:
    """The first line with an error word that is not a stack frame, else the first at all."""
    found = _all(out.lines, KEYWORD)
    return [i for i in found if not FRAME.match(out.lines[i])][:1] or found[:1]


# Tried in order; the first that names a line decides. The name is the salient line's kind (a
# feature of the calibrated confidence, confidence.py).
RULES: tuple[tuple[str, Rule], ...] = (
    ("npm", _npm), ("tsc", _pattern(TS, every=True)), ("rustc", _rust), ("java", _java),
    ("gradle", _gradle), ("pytest", _pytest), ("python", _python), ("exception", _exception),
    ("go", _pattern(_GO)), ("located", _located), ("prefixed", _pattern(PREFIXED)),
    ("keyword", _keyword),
)  # fmt: skip
SALIENT_KINDS = (*(name for name, _ in RULES), "fallback")


# the fields of a dumped error that say which error it is, most telling first
_TELLING_KEYS = ("code", "reason", "routine", "errno", "exit code", "syscall", "status", "type")


def _field_rank(line: str) -> int:
    found = _FIELD.match(line)
    key = found.group("key").lower() if found else ""
    return _TELLING_KEYS.index(key) if key in _TELLING_KEYS else len(_TELLING_KEYS)


def _fallback(out: Output) -> list[int]:
    """No rule named the error: the first lines that read like a message (three words or more,
    not a shell prompt, a header, a frame or a rule), else the fields of a dumped error object,
    else the first non-empty line."""
    lines = out.lines
    found = [
        i
        for i, line in enumerate(lines)
        if candidate(line)
        and not PROMPT.match(line)
        and not FRAME.match(line)
        and _MESSAGE_LIKE.search(line)
    ]
    fields = sorted(
        (i for i, line in enumerate(lines) if is_field(line)), key=lambda i: _field_rank(lines[i])
    )
    return (
        found[:2]
        or sorted(fields[:MAX_SALIENT_LINES])
        or [i for i, line in enumerate(lines) if line][:1]
    )


def choose(out: Output) -> list[int]:
    """Indexes of the line(s) that name the error."""
    return choose_named(out)[1]


def choose_named(out: Output) -> tuple[str, list[int]]:
    """(the rule that decided, one of SALIENT_KINDS; the indexes of the line(s) it names)."""
    for name, rule in RULES:
        chosen = rule(out)
        if chosen:
            return name, chosen
    return "fallback", _fallback(out)


_TITLE_TAG = re.compile(r"^\[(?:Bug|BUG|Solved|SOLVED|Question|Help|Issue|Fixed|FIXED)\]:?\s*")


def strip_marker(line: str) -> str:
    """The message of a salient line: no pytest/summary/npm/maven wrapper around it."""
    for pattern in (PYTEST_E, PYTEST_SUMMARY):
        found = pattern.search(line)
        if found:
            line = found.group(1)
    line = _TITLE_TAG.sub("", line)
    line = re.sub(r"^\[ERROR\]\s*|^Caused by:\s*|^>\s*|^Exception in thread \S+\s+", "", line)
    line = _LABEL.sub("", line)
    line = re.sub(  # Maven's wrapper: keep the plugin, drop coordinates and project
        r"^Failed to execute goal (?:[\w.-]+:([\w.-]+):\S+ \([\w.-]+\) )?on project [\w.-]+: ",
        lambda m: f"{m.group(1)}: " if m.group(1) else "",
        line,
    )
    return re.sub(r"\s*-> \[Help \d+\]$|\s*\[recovered\]$", "", line).strip()
