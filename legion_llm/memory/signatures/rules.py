"""Rules of the error-signature matcher: salient lines, normalisation and weighted tokens.

Pure functions over text, no I/O. `signatures.py` normalises, builds the index and scores.

- `split_salient` reduces raw tool output to the line(s) that name the error (the final Python
  exception, the `error[E....]` / `error TS....:` line, npm's code + message, Go's `panic:`,
  Java's exception and root cause, ...) and returns the rest as context for tie-breaks.
- `tokens` turns a normalised signature into weighted tokens: error codes and "subject" names (the
  module, package, crate, fixture or key an error is about) weigh most, placeholders least.
"""

from __future__ import annotations

import re
from collections.abc import Callable

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


def _clean(line: str) -> tuple[str, bool]:
    """(line without colour codes, CI/log prefixes and a leading `path:line:col:`, had a location)."""
    line = ANSI.sub("", line).rstrip()
    for _ in range(2):
        line = _LINE_NOISE.sub("", line.lstrip())
    line = _PROGRAM.sub("", _NPM_PREFIX.sub("npm error ", line), count=1)
    level = _LEVEL.match(line)
    head, rest = (level.group(0), line[level.end() :]) if level else ("", line)
    bare = _LOCATION.sub("", rest)
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
    r"not supported|not allowed|already in use|already allocated|unknown|unrecognized)\b",
    re.IGNORECASE,
)
_HEADER = re.compile(r"^[_=!*\-\s]{3,}|^[^a-z]*$|^\*? ?What went wrong:?$")
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
            return [*found, i] if _MISSING.search(label) else found
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
    return [i for i, line in enumerate(lines) if line][:1]


def split_salient(text: str) -> tuple[list[str], list[str]]:
    """(salient lines, context lines) of raw tool output; at most MAX_SALIENT_LINES salient lines."""
    raw = ANSI.sub("", text).replace("\r\n", "\n").split("\n")
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
    context = [line for i, line in enumerate(lines) if line and i not in picked]
    return salient, context


# ---------------------------------------------------------------- weighted tokens

CODE, SUBJECT, EXCEPTION, IDENT, WORD, VALUE, PLACEHOLDER = (
    "code", "subject", "exception", "ident", "word", "value", "placeholder",
)  # fmt: skip
KIND_WEIGHT = {
    CODE: 3.0, SUBJECT: 2.5, EXCEPTION: 2.0, IDENT: 1.4, WORD: 1.0, VALUE: 0.6, PLACEHOLDER: 0.2,
}  # fmt: skip
_CODE = re.compile(
    r"^(?:TS\d{3,5}|E\d{4}|E[A-Z]{4,14}|ERR_[A-Z0-9_]+|[A-Z]{1,3}\d{3,5}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)$"
)
_NOT_CODES = frozenset(
    {"ERROR", "ERRORS", "EXCEPTION", "EXPECTED", "ENTRY", "EMPTY", "ENABLED", "EXIT"}
)
_SUBJECT_NOUN = re.compile(
    r"(?:module|modules|package|packages|crate|plugin|fixture|command|library|artifact|driver|"
    r"class|named|mark|dependency|key|option|extension|gem|binary|executable|program|import|"
    r"open|mkdir|access|stat|lstat|scandir|rename|unlink|chmod|readlink|rmdir|copyfile)\W{0,3}$",
    re.IGNORECASE,
)
_MISSING = re.compile(
    r"\b(?:cannot|can't|could not|couldn't|unable to|failed to) (?:find|load|resolve|locate|open)\b|"
    r"not found|no such|\bno module\b|missing|unresolved|undeclared|not installed|unknown|"
    r"unrecognized|does not exist|doesn't exist",
    re.IGNORECASE,
)
# fmt: off
_STOP = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "but", "or",
    "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "as",
    "into", "your", "you", "we", "our", "their", "there", "here", "which", "what", "when", "while",
    "if", "then", "than", "do", "does", "did", "has", "have", "had", "can", "may", "might", "will",
    "would", "should", "shall",
})
# fmt: on
_TOKEN = re.compile(r"<\w+>|@(?=/)|[A-Za-z_][\w]*|\d+")


def _subject_name(value: str) -> str:
    """The part of a module-like value that decides the fix: its package (`lodash/x` -> `lodash`)."""
    if value.startswith("@/"):
        return "@"
    parts = value.split("/")
    if value.startswith("@") and len(parts) > 1:
        return "/".join(parts[:2]).lower()
    return parts[0].lower()


def _word_kind(token: str) -> tuple[str, str]:
    if token.startswith("<"):
        return token, PLACEHOLDER
    if _CODE.match(token) and token not in _NOT_CODES:
        return token.upper(), CODE
    if re.search(r"[a-z][A-Z]|^[A-Z][a-z]+[A-Z]", token):
        kind = EXCEPTION if re.search(r"(?:Error|Exception|Warning)$", token) else IDENT
        return token.lower(), kind
    return token.lower(), WORD


def _add(out: dict[str, str], token: str, kind: str) -> None:
    """Keep the heaviest kind a token was seen with."""
    old = out.get(token)
    if old is None or KIND_WEIGHT[kind] > KIND_WEIGHT[old]:
        out[token] = kind


def _words(text: str, out: dict[str, str], inside: str | None = None) -> None:
    """Word tokens of free text; `inside` caps the kind of words that sit inside a quoted value."""
    for raw in _TOKEN.findall(text):
        if raw.isdigit() or raw.lower() in _STOP or (len(raw) < 2 and raw != "@"):
            continue
        token, kind = _word_kind(raw)
        if inside and kind not in (CODE, PLACEHOLDER):
            kind = inside
        _add(out, token, kind)


def _quoted_value(line: str, found: re.Match[str], out: dict[str, str]) -> None:
    """A short quoted name is one token: a SUBJECT when the error is about it (after `module`,
    `package`, `fixture`, `open`, ... or as the whole message, `KeyError: 'X'`), else a VALUE."""
    inner = found.group("quoted").strip("'\"")
    if inner.startswith("<path>/"):
        inner = inner[len("<path>/") :]
    if not inner or inner.startswith("<") or not re.fullmatch(r"[\w.@/$:+-]{1,40}", inner):
        _line_tokens(inner, out)  # a quoted phrase or type ('string | undefined') counts as words
        return
    before = line[: found.start()]
    whole = re.fullmatch(r"\s*(?:[\w.]+:\s*)?", before) and not line[found.end() :].strip(" .")
    if whole or (_SUBJECT_NOUN.search(before) and _MISSING.search(line)):
        _add(out, _subject_name(inner), SUBJECT)
    elif _CODE.match(inner):
        _add(out, inner.upper(), CODE)
    else:
        _add(out, inner.lower(), VALUE)


def _qualified(found: re.Match[str], out: dict[str, str]) -> None:
    """`java.lang.NullPointerException`: the class counts, its package path only as a value."""
    *path, name = re.split(r"[./]", found.group())
    for part in path:
        _add(out, part.lower(), VALUE)
    token, kind = _word_kind(name)
    _add(out, token, kind)


_REFUSED = re.compile(
    r"\b(?:unrecognized|unknown|unexpected|invalid|no such) (?:arguments?|options?|flags?)\b", re.I
)
_INSTALL = (  # the package a suggested install command names is what is missing
    r"(?:\bnpm (?:i|install|add)|\byarn add|\bpnpm add|\bpip3? install|\bcargo add|\bgo get|"
    r"\bapt(?:-get)? install|\bbrew install|\bgem install)(?: -[\w-]+)* "
)
_SPAN = re.compile(
    rf"(?P<command_words>{_INSTALL})(?P<install>[@\w][\w./@-]*)"
    r"|'(?P<quoted>[^'\n]*)'"
    r"|(?P<flag>(?<![\w-])--[A-Za-z][\w-]*)"
    r"|(?<=\bnamed )(?P<named>[\w.-]+)"
    r"|^(?P<command>[\w.-]+)(?=: (?:command )?not found)|(?<=command not found: )(?P<command2>[\w.-]+)"
    r"|(?P<url>\b[\w+.-]+(?::[\w+.-]+)?:<url>)"  # a URL keeps only its scheme, as a value
    r"|(?P<path>\b\w+(?:::\w+)+)"  # Rust / C++ paths: Option::unwrap is one name
    r"|(?P<qualified>\b(?:[a-z_]\w*\.)+[A-Z]\w*|(?<![\w/])(?:[a-z_]\w*/)+[A-Z]\w*)"
    r"|(?P<module>\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|io|net|dev|in|rs)(?:/[\w.-]+)+)"
)


def _line_tokens(line: str, out: dict[str, str]) -> None:
    last = 0
    for found in _SPAN.finditer(line):
        _words(line[last : found.start()], out)
        kind = found.lastgroup
        if kind == "quoted":
            _quoted_value(line, found, out)
        elif kind == "install":
            _words(found.group("command_words"), out)
            _add(out, _subject_name(found.group("install")), SUBJECT)
        elif kind == "flag":  # the option a CLI refused is the subject, any other is a word
            _add(out, found.group().lower().lstrip("-"), SUBJECT if _REFUSED.search(line) else WORD)
        elif kind in ("command", "command2"):
            _add(out, found.group().lower(), SUBJECT)  # "jq: command not found"
        elif kind == "named":
            _add(out, _subject_name(found.group()), SUBJECT)  # "No module named yaml"
        elif kind == "url":
            _words(found.group(), out, inside=VALUE)
        elif kind == "path":
            _add(out, found.group().lower(), IDENT)
        elif kind == "qualified":
            _qualified(found, out)
        else:
            _add(out, found.group().lower(), VALUE)  # a Go/Java module path, e.g. github.com/x/y
        last = found.end()
    _words(line[last:], out)


def tokens(normalised: str) -> dict[str, str]:
    """token -> kind for a normalised signature (several lines allowed)."""
    out: dict[str, str] = {}
    for line in normalised.split("\n"):
        _line_tokens(line, out)
    return out
