"""Secrets that only their surroundings give away: values assigned to a secret-sounding name
(`DB_PASSWORD=...`, `password: ...`, `"api_key": "..."`, `--token ...`) and passwords in URLs.

A value counts when it is a literal, not a placeholder or a reference (`${DB_PASSWORD}`,
`<password>`, `os.environ["X"]`, `settings.token`, `changeme`, `***`). Names ending in
password/passwd/pwd/passphrase or secret (and a private key) take any such literal of secret
shape; names ending in token or key take only a high-entropy one, because `max_tokens: 4096`,
`sort_key: name` and `token: the next word` are ordinary text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

Span = tuple[str, int, int]  # kind, start, end of the secret

# The name must end in a secret-sounding word (name_kind decides which it is): any other name's
# value is not consumed, so `error: DB_PASSWORD=...` and `url: ...?access_token=...` are found.
# fmt: off
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.$-])(?P<nq>[\"']?)(?P<name>(?:[A-Za-z_][A-Za-z0-9_.-]{0,52}?)?"
    r"(?i:pass(?:word|wd|phrase)?|pwd?|secret|token|key(?:[_.-]?base)?)[_.-]*)\\{0,4}(?P=nq)[*_`]{0,2}"
    r"[ \t]*(?::=|=>|\?=|:(?!:)|(?<![=!<>])=(?!=))[ \t]*[*_]{0,2}[ \t]*"
    r"(?:(?P<q>\\{0,4}[\"'])(?P<quoted>[^\"'`\r\n]{1,4096}?)(?P=q)|`?(?P<bare>[^\s\"'`,;&|<>(){}\[\]]{1,4096})(?![(\w]))"
)
_FLAG = re.compile(
    r"(?<![\w-])--?(?P<name>[A-Za-z][A-Za-z0-9_-]{1,40})(?:[ \t]+|=)(?P<bare>[^\s\"'`<>|-][^\s\"'`<>|]{0,4095})"
)
_URL_PASSWORD = re.compile(
    r"(?i:\b[a-z][a-z0-9+.-]{1,30})://(?P<user>[^\s:/?#@\"'<>`\[\]]*):"
    r"(?P<password>[^\s\"'<>`@]+)@(?=[A-Za-z0-9\[\]._~%-])"
)
_PORT = re.compile(r"\d+(?:[/?#]|$)")
_PLACEHOLDER = re.compile(
    r"""(?ix)^(?:
        \$.* | %[\w.]*%? | \{.*\} | <.*> | \[.*\] | \(.*\) | [*•.x_#?-]+ | …
      | null | none | nil | true | false | yes | no | on | off | undefined | empty | required
      | optional | string | str | bytes | int | integer | number | boolean | bool | any | text
      | hidden | redacted | masked | omitted | changeme | change[-_]?me | password | passwd
      | pass | pwd | secret | token | key | example | sample | placeholder | dummy | fake | test
      | testing | todo | tbd | tba | unknown | unset | default | value | env | environment
      | (?:your|my|the|some|example|sample|dummy|fake|test)[-_.]?\w* | \w*[-_.](?:here|placeholder)
      | .*(?:\.\.\.|…|example|sample|dummy|fake|placeholder|invalid|changeme|your[-_]).*
    )$"""
)
_REFERENCE = re.compile(
    r"(?i)^(?:process\.env|os\.environ|os\.getenv|env|getenv|settings|config|conf|self|this|"
    r"secrets|vars|inputs|params|args|options|opts|request|req|ctx|context)\b[.\[(]"
    r"|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"  # a dotted name: form.password.data
)
_PATH = re.compile(r"^(?:\.{0,2}/|~/|[A-Za-z]:\\)|\.[a-z]{1,5}$|^[\w.-]+(?:/[\w.-]+)+/?$")
_SPLIT = re.compile(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])")
# fmt: on

_PASSWORD_ENDINGS = ("password", "passwd", "passphrase")
STRONG = frozenset({"password", "secret", "private-key"})


# a key whose name says it is no secret: a public key (VAPID_PUBLIC_KEY, publicKey, pub_key),
# a cache key (actions/cache `key:`, cache-key), an idempotency key
_NOT_SECRET_PARTS = frozenset({"public", "pub", "cache", "idempotency"})


def name_kind(name: str) -> str | None:
    """What a secret-sounding name holds ("password", "secret", "token", "api-key", "key"), or
    None for any other name. Only its ending counts: `token_count` and `secret_file` hold none;
    nor does a public, cache or idempotency key."""
    low = name.lower().strip("_.-")
    parts = [p.lower() for p in _SPLIT.split(name.strip("_.-")) if p]
    last = parts[-1] if parts else low
    if _NOT_SECRET_PARTS.intersection(parts) and "secret" not in low and "private" not in low:
        return None
    if low.endswith(_PASSWORD_ENDINGS) or (len(parts) > 1 and last in ("pass", "pw", "pwd")):
        return "password"  # a bare `pass:` / `pwd:` is prose ("tests pass: 4") or a shell command
    if low.endswith("secret") or (last in ("key", "token") and "secret" in low):
        return "secret"
    if last == "base" and len(parts) > 2 and parts[-2] == "key" and "secret" in low:
        return "secret"  # Rails' SECRET_KEY_BASE
    if last == "key" and "private" in low:
        return "private-key"
    if low.endswith("token"):
        return "token"
    if low.endswith(("apikey", "api_key", "api-key")):
        return "api-key"
    return "key" if last == "key" else None


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def is_placeholder(value: str, name: str = "") -> bool:
    """A template, reference, mask or stock word, not a secret."""
    return (
        _PLACEHOLDER.match(value) is not None
        or _REFERENCE.match(value) is not None
        or value.lower() == name.lower()
        or len(set(value)) <= 2
    )


def wordy(value: str) -> bool:
    """Words and numbers joined by punctuation (`postgres-port-5433`, `std::fmt::Display`,
    `1.2.3-beta.4`): every piece is all letters or all digits, as no random token is."""
    pieces = [p for p in re.split(r"[^A-Za-z0-9]+", value) if p]
    return len(pieces) >= 2 and all(p.isalpha() or p.isdigit() for p in pieces)


def high_entropy(value: str) -> bool:
    """Random-looking: 16+ characters holding letters and digits, not words joined by
    punctuation, and dense in information (hex, which carries at most 4 bits a character, from
    32 characters on)."""
    if len(value) < 16 or _PATH.search(value) or wordy(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if re.fullmatch(r"[0-9a-fA-F-]+", value):
        return len(value.replace("-", "")) >= 32 and entropy(value) >= 3.0
    return entropy(value) >= 3.3


def secret_shaped(value: str, *, quoted: bool) -> bool:
    """A literal that could be a password: 6+ characters without spaces; quoted, holding a digit,
    a symbol, both cases or 12+ letters; bare (prose, `code`), a digit or a symbol, or random."""
    if len(value) < 6 or any(c.isspace() for c in value):
        return False
    symbol = any(c.isdigit() or not c.isalnum() for c in value)
    if quoted:  # "..." or '...': a literal in code or config; `...` in prose is read as bare
        return symbol or not (value.islower() or value.isupper()) or len(value) >= 12
    if _PATH.search(value) or re.fullmatch(r"[\d.,:+-]+", value):
        return False
    return symbol or high_entropy(value)


# UUIDs, key fingerprints (GPG's 16 or 40 hex digits, SSH's SHA256:... or aa:bb:...), and a
# label holding a digest (`node-modules-<sha>`, `deps-v1-<sha256>`): what a key name that says
# nothing more (`*_key`, `--signing-key`) holds when it is no secret
_KEY_LABEL = re.compile(
    r"""(?ix)^(?:
        [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}
      | (?:0x)?(?:[0-9a-f]{16}|[0-9a-f]{40})
      | (?:[0-9a-f]{4}[ ]?){10}
      | (?:[0-9a-f]{2}:){15,31}[0-9a-f]{2}
      | SHA256:[A-Za-z0-9+/]{43}=?
      | (?:[a-z][a-z0-9]*[-_.])+[0-9a-f]{7,64}
    )$"""
)
# a name of a type or variable in code (`Uint8Array`, `ed25519Seed`, `userPrivateKey`): words
# each a capital, small letters and digits at its end, the first maybe small letters and digits
_CAMEL_PIECE = re.compile(r"[A-Z]?[a-z]+[0-9]*|[a-z]+[0-9]+[a-z]*")
_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def code_identifier(value: str) -> bool:
    """A type annotation or a variable in code, read as a bare value (`privateKey: Uint8Array`,
    `privateKey: ed25519Seed,`): two or more camel-case words, never a random token."""
    if not value.isascii() or not value.isalnum():
        return False
    pieces = _CAMEL_SPLIT.split(value)
    return len(pieces) >= 2 and all(_CAMEL_PIECE.fullmatch(piece) for piece in pieces)


def _value_counts(kind: str, name: str, value: str, quoted: bool) -> bool:
    if is_placeholder(value, name) or wordy(value):
        return False
    if not quoted and code_identifier(value):
        return False
    if kind == "key" and _KEY_LABEL.match(value):
        return False
    if kind in STRONG:
        return secret_shaped(value, quoted=quoted)
    return high_entropy(value)


# A secret-sounding name's ending right before an assignment operator, in lower-cased text: the
# full regex runs only on the lines holding one (no assignment crosses a line), which keeps a
# megabyte of log text that has none cheap.
_NAME_BEFORE_OPERATOR = re.compile(
    r"(?:pass(?:word|wd|phrase)?|pwd?|secret|token|key(?:[_.-]?base)?)[_.-]*\\{0,4}[\"']?[*_`]{0,2}[ \t]*(?:[:=]|\?=)"
)
_NAME_BEFORE_OPERATOR_ANY_CASE = re.compile(_NAME_BEFORE_OPERATOR.pattern, re.IGNORECASE)


def _assignment_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line that may hold an assignment to a secret-sounding name."""
    low = text.lower()  # much faster to search than with IGNORECASE
    hits = (
        _NAME_BEFORE_OPERATOR.finditer(low)
        if len(low) == len(text)  # no character changed its length (U+0130 does)
        else _NAME_BEFORE_OPERATOR_ANY_CASE.finditer(text)
    )
    end = -1
    for hit in hits:
        if hit.start() < end:
            continue
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        yield start, end


def assignment_spans(text: str) -> Iterator[Span]:
    """(kind, start, end) of each value assigned to a secret-sounding name."""
    matches = (m for a, b in _assignment_lines(text) for m in _ASSIGNMENT.finditer(text, a, b))
    for found in matches:
        kind = name_kind(found["name"])
        if kind is None:
            continue
        group = "quoted" if found["quoted"] is not None else "bare"
        start, end = found.span(group)
        value = found[group]
        if group == "bare" and not is_placeholder(value):
            value = value.rstrip(".:")  # the end of a sentence
            end = start + len(value)
        if value and (
            _password_by_name(found["name"], value)
            or _value_counts(kind, found["name"], value, group == "quoted")
        ):
            yield _aws(kind, found["name"]), start, end
    for found in _FLAG.finditer(text):
        kind = name_kind(found["name"])
        value = found["bare"]
        value = value if is_placeholder(value) else value.rstrip(".,;:)")
        if kind is not None and value and _value_counts(kind, found["name"], value, False):
            yield kind, found.start("bare"), found.start("bare") + len(value)


# An environment variable that holds a password or a secret by its name (`DB_PASSWORD`,
# `MYSQL_ROOT_PASSWORD`, `PGPASSWORD`, `REDIS_PASS`, `APP_SECRET`): its value is one, whatever
# it looks like (`rootpass`, `ledger_prod_2024`, `ProdDb2024`), from 6 characters, unless it is a
# placeholder or a reference (`${DB_PASSWORD}`, `changeme`). Names in capitals only: in prose and code a
# lower-case `password: ...` is as often a word as a value, and keeps the shape rules.
_PASSWORD_VARIABLE = re.compile(
    r"[A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE)|[A-Z0-9]+(?:_[A-Z0-9]+)*_(?:PASS|SECRET)"
)


def _password_by_name(name: str, value: str) -> bool:
    bare = name.strip("\\\"'_")
    return (
        len(value) >= 6  # as every password rule: `APP_SECRET=12345` in a test setup stays
        and _PASSWORD_VARIABLE.fullmatch(bare) is not None
        and not is_placeholder(value, bare)
    )


def _aws(kind: str, name: str) -> str:
    low = name.lower()
    return "aws-secret-key" if "aws" in low and kind == "secret" else kind


# Passwords a command line takes in its own syntax: mysql's attached `-pSECRET` / `-p'SECRET'`
# (`-p` alone asks for it), `docker login -p SECRET` (and podman, buildah, skopeo, nerdctl,
# helm registry), `sshpass -p SECRET`, curl's `-u user:SECRET`, and ODBC's `;Pwd=SECRET`
# (after a `;`: a shell's `PWD=` is a path). `--password=...` is a flag like any other (_FLAG).
_VALUE = r"(?P<q>[\"']?)(?P<value>[^\s\"'`$]{1,128})(?P=q)(?![^\s;|&)])"
_COMMAND_PASSWORDS = (
    re.compile(
        r"(?i:\b(?:mysql(?:dump|admin|import|check|pump|sh)?|mariadb(?:-dump|-admin)?)\b)"
        rf"[^\n|;&]{{0,200}}?[ \t]-p{_VALUE}"
    ),
    re.compile(
        r"(?i:\b(?:docker|podman|buildah|skopeo|nerdctl|helm[ \t]+registry)[ \t]+login\b)"
        rf"[^\n|;&]{{0,200}}?[ \t]-p[ \t]+{_VALUE}"
    ),
    re.compile(rf"(?i:\bsshpass)[ \t]+-p[ \t]*{_VALUE}"),
)
_CURL_USER = re.compile(
    r"(?i:\bcurl\b)[^\n|;&]{0,200}?[ \t](?:-u|--user)[ \t]+(?P<q>[\"']?)(?P<user>[^\s:\"'`$]{1,64}):"
    r"(?P<value>[^\s\"'`$]{1,128})(?P=q)(?![^\s;|&)])"
)
_ODBC_PASSWORD = re.compile(
    r"(?i:;[ \t]*pwd[ \t]*=[ \t]*)(?P<q>)(?P<value>[^;\r\n\"'`]{1,128}?)[ \t]*(?=;|$|[\"'`\s])"
)
_COMMAND_WORDS = ("mysql", "mariadb", "login", "sshpass", "curl", "pwd")


def command_password_spans(text: str) -> Iterator[Span]:
    """The password of each command line or connection string that holds one in its own syntax."""
    low = text.lower()
    if not any(word in low for word in _COMMAND_WORDS):
        return
    for pattern in (*_COMMAND_PASSWORDS, _CURL_USER, _ODBC_PASSWORD):
        for found in pattern.finditer(text):
            value, user = found["value"], found.groupdict().get("user") or ""
            if is_placeholder(value, user) or not secret_shaped(value, quoted=bool(found["q"])):
                continue
            yield "password", found.start("value"), found.end("value")


def url_password_spans(text: str) -> Iterator[Span]:
    """The password of each `scheme://user:password@host` (any scheme)."""
    for found in _URL_PASSWORD.finditer(text):
        password = found["password"]
        if _PORT.match(password) or is_placeholder(password, found["user"]):
            continue  # host:port/path@... (an npm scope, a mail address in a path) is no password
        yield "password", found.start("password"), found.end("password")
