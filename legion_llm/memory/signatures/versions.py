"""How the version a tool found relates to the one it requires: the direction of the fix.

"requires php ^7.1.3 but your php version (8.0.7) does not satisfy that requirement" asks for an
older PHP (or newer packages); "(5.6.30)" asks for a newer one; "requires php 7.4 but your PHP
version (7.4.3)" only for a lock refreshed at the patch level; a version that satisfies the
constraint by number ("requires kubeVersion >= 1.19 ... Kubernetes v1.21.9-gke.1002") is refused
for something else (here the vendor suffix). `version_relation(line)` returns `older`, `newer`,
`patch`, `satisfies` or "" for the wordings below. Pure, no I/O.
"""

from __future__ import annotations

import re

# (required constraint, actual version) as build tools, package managers and runtimes word them
_WORDINGS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"requires (?P<name>[\w.-]+) (?P<req>[<>=^~!]*\s?v?\d[\w.*]*(?:\s*(?:,|\|\|)?\s*[<>=^~]+\s?v?\d[\w.*]*)*)"
        r"\s*(?:but|->|,)\s*your (?P=name) version \(?(?P<act>v?\d[\w.+-]*\w)",
        r"requires (?P<name>[\w.-]+) (?P<req>v?\d[\d.]*) or newer, while the currently active "
        r"(?P=name) version is (?P<act>v?\d[\w.+-]*)",
        r"requires (?P<name>[\w.-]+) version (?P<req>[<>=~^]*\s?\d[\d.]*)\. The current (?P=name) "
        r"version is (?P<act>\d[\w.+-]*)",
        r"requires kubeVersion: `?(?P<req>[^`]+?)`? which is incompatible with Kubernetes "
        r"`?(?P<act>v?\d[\w.+-]*)",
        r"Expected version \"(?P<req>[^\"]+)\"\. Got \"(?P<act>[^\"]+)\"",
        r"requires a different Python: (?P<act>\d[\d.]*) not in '(?P<req>[^']+)'",
        r"requires go >= ?(?P<req>\d[\d.]*) \(running go (?P<act>\d[\d.]*)",
    )
)
_CLAUSE = re.compile(r"(?P<op>>=|<=|>|<|\^|~>?|==?|!=)?\s*v?(?P<version>\d+(?:\.(?:\d+|[x*]))*)")
Version = tuple[int, ...]


def _numbers(text: str) -> Version:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("-")[0].split("+")[0])[:3])


def _upper(version: Version, op: str) -> Version:
    """The first version past a caret (next major, or minor for 0.x) or tilde (next minor)."""
    if op == "^":
        head = next((i for i, n in enumerate(version) if n), len(version) - 1)
        return (*version[:head], version[head] + 1)
    return (*version[:1], version[1] + 1) if len(version) > 1 else (version[0] + 1,)


def _clause(op: str, version: Version, actual: Version) -> str:
    """`older`/`newer` when `actual` fails the clause on that side, `patch` when an exact
    version agrees on every part it names but the next, else ""."""
    size = len(version)
    if op in ("", "=", "=="):
        if actual[:size] == version and len(actual) > size:
            return "patch"
        return "" if actual[:size] == version else ("older" if actual < version else "newer")
    if op in (">=", ">", "^", "~", "~>") and (
        actual < version or (op == ">" and actual == version)
    ):
        return "older"
    if op in ("^", "~", "~>") and actual[: size + 1] >= _upper(version, op):
        return "newer"
    if (op == "<" and actual >= version) or (op == "<=" and actual[:size] > version):
        return "newer"
    return ""


def relation(required: str, actual: str) -> str:
    """`older`, `newer`, `patch` or `satisfies`: how `actual` relates to the constraint
    (clauses joined by spaces or commas; `||` alternatives)."""
    found = _numbers(actual)
    if not found:
        return ""
    verdicts = []
    for alternative in required.split("||"):
        clauses = [m for m in _CLAUSE.finditer(alternative) if m.group("version")]
        failed = [
            _clause(m.group("op") or "", _numbers(m.group("version")), found) for m in clauses
        ]
        verdicts.append(next((f for f in failed if f), "satisfies"))
    if "satisfies" in verdicts:
        return "satisfies"
    return verdicts[0] if len(set(verdicts)) == 1 else ""


def version_relation(line: str) -> str:
    """The relation a line states between a required and a found version, or ""."""
    for wording in _WORDINGS:
        found = wording.search(line)
        if found:
            return relation(found.group("req"), found.group("act"))
    return ""
