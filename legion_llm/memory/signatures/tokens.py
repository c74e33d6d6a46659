"""Weighted tokens of a normalised signature: codes and subject names weigh most.

`tokens` turns a normalised signature into tokens with a kind: error codes and "subject" names
(the module, package, crate, fixture or key an error is about) weigh most, placeholders least.
"""

from __future__ import annotations

import re

from legion_llm.memory.signatures.salient_rules import MISSING

CODE, SUBJECT, NAME, EXCEPTION, IDENT, WORD, VALUE, PLACEHOLDER = (
    "code", "subject", "name", "exception", "ident", "word", "value", "placeholder",
)  # fmt: skip
KIND_WEIGHT = {  # NAME: a discriminating name (`service=postgres`, discriminators.py)
    CODE: 3.0, SUBJECT: 2.5, NAME: 2.5, EXCEPTION: 2.0, IDENT: 1.4, WORD: 1.0, VALUE: 0.6,
    PLACEHOLDER: 0.2,
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
    r"open|mkdir|access|stat|lstat|scandir|rename|unlink|chmod|readlink|rmdir|copyfile|resolve)\W{0,3}$",
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


# Node's built-in modules: a bundler that cannot resolve one (webpack 5 dropped the polyfills) or
# a compiler without their types (@types/node) has one fix for all of them
NODE_BUILTINS = frozenset(
    {
        "assert",
        "buffer",
        "child_process",
        "cluster",
        "console",
        "constants",
        "crypto",
        "dgram",
        "dns",
        "domain",
        "events",
        "fs",
        "http",
        "http2",
        "https",
        "net",
        "os",
        "path",
        "process",
        "punycode",
        "querystring",
        "readline",
        "stream",
        "string_decoder",
        "sys",
        "timers",
        "tls",
        "tty",
        "url",
        "util",
        "vm",
        "worker_threads",
        "zlib",
    }
)


def _subject_name(value: str, *, node: bool = False) -> str:
    """The part of a module-like value that decides the fix: its package (`lodash/x` -> `lodash`);
    with `node`, any of Node's built-in modules (`crypto`, `node:fs`) is one name."""
    if value.startswith("@/"):
        return "@"
    parts = value.split("/")
    if value.startswith("@") and len(parts) > 1:
        return "/".join(parts[:2]).lower()
    name = parts[0].lower()
    return "node-builtin" if node and name.removeprefix("node:") in NODE_BUILTINS else name


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
    if whole or (_SUBJECT_NOUN.search(before) and MISSING.search(line)):
        _add(out, _subject_name(inner, node=_NODE_RESOLUTION.search(line) is not None), SUBJECT)
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


# where a missing module is one of Node's: a bundler's or Node's resolution, TypeScript's lookup
_NODE_RESOLUTION = re.compile(r"Can't resolve|Cannot find module|ERR_MODULE_NOT_FOUND|TS2307")
_REFUSED = re.compile(
    r"\b(?:unrecognized|unknown|unexpected|invalid|no such) (?:arguments?|options?|flags?)\b", re.I
)
_INSTALL = (  # the package a suggested install command names is what is missing
    r"(?:\bnpm (?:i|install|add)|\byarn add|\bpnpm add|\bpip3? install|\bcargo add|\bgo get|"
    r"\bapt(?:-get)? install|\bbrew install|\bgem install)(?: -[\w-]+)* "
)
_SPAN = re.compile(
    rf"(?P<command_words>{_INSTALL})(?P<install>[@\w][\w./@-]*)"
    r"|(?<![A-Za-z])'(?P<quoted>[^'\n]*)'"  # not from a contraction's apostrophe: can't 'x'
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
        elif kind == "path":  # Option::unwrap, ActiveSupport::MessageEncryptor::InvalidMessage
            _add(out, found.group().lower(), IDENT)
            _words(found.group().rsplit("::", 1)[-1], out)
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
