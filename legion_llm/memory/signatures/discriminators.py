"""The names that decide an error's fix, read by rules kept as data (data/discriminators.toml).

A connection refused on port 5432 and one on 6379 read alike but need different fixes (start
PostgreSQL, start Redis); so do a unique violation on two constraints, an ESM `require()` of two
packages, a login failure by two authentication methods, or a type error on two properties.
`discriminators(lines)` returns the (kind, value) pairs a text names; the matcher turns a
different value of the same kind into a strong negative, and puts the pairs into the exact
fingerprint so that such texts never share one.

One kind is computed rather than matched: `version`, how the version a tool found relates to
the one it requires (`older`, `newer`, `satisfies`: upgrade, downgrade, or something else is
wrong), read by versions.py.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from legion_llm.memory.signatures.versions import version_relation

DATA = Path(__file__).resolve().parent / "data" / "discriminators.toml"
MAX_LINES = 400  # of a long log, the discriminating names sit in the error lines near its ends

Discriminator = tuple[str, str]  # (kind, value)


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    when: re.Pattern[str] | None
    names: dict[str, str]
    keep_case: bool
    examples: tuple[tuple[str, str], ...]
    template: str = "{value}"
    whole_text: bool = False
    default: str = "{value}"  # the name of a value the map does not know; "" drops it
    classes: tuple[tuple[re.Pattern[str], str], ...] = ()  # value pattern -> name, before the map
    absent: str = ""  # the name when `when` holds on a line and the pattern finds nothing

    def values(self, line: str) -> list[str]:
        if self.when is not None and not self.when.search(line):
            return []
        found = []
        for match in self.pattern.finditer(line):
            groups = match.groupdict()
            raw = next((v for k, v in groups.items() if v and k.startswith("value")), "")
            named = self.name(self.template.format_map({**groups, "value": raw})) if raw else ""
            if named:
                found.append(named)
        return found or ([self.absent] if self.absent else [])

    def name(self, raw: str) -> str:
        for pattern, name in self.classes:
            if pattern.search(raw):
                return name
        value = raw if self.keep_case else raw.lower()
        mapped = self.names.get(raw.lower())
        if mapped is not None:
            return mapped
        return self.default.format(value=value) if self.names or self.classes else value


def _rule(row: dict[str, object], data: dict[str, object]) -> Rule:
    table: dict[str, object] = data.get(str(row["map"]), {}) if "map" in row else {}  # type: ignore[assignment]
    when = re.compile(str(row["when"]), re.IGNORECASE) if "when" in row else None
    classes = tuple((re.compile(str(p)), str(n)) for p, n in row.get("classes", ()))  # type: ignore[attr-defined]
    return Rule(
        str(row["kind"]),
        re.compile(str(row["pattern"])),
        when,
        {str(k).lower(): str(v) for k, v in table.items()},
        row.get("case", "lower") == "keep",
        tuple((str(t), str(v)) for t, v in row.get("examples", ())),  # type: ignore[attr-defined]
        str(row.get("value", "{value}")),
        row.get("scope", "line") == "text",
        str(row.get("default", "{value}")),
        classes,
        str(row.get("absent", "")),
    )


@cache
def _data(path: Path = DATA) -> dict[str, object]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


@cache
def rules(path: Path = DATA) -> tuple[Rule, ...]:
    data = _data(path)
    return tuple(_rule(row, data) for row in data["rule"])  # type: ignore[attr-defined]


@cache
def weak_kinds(path: Path = DATA) -> frozenset[str]:
    """The kinds whose shared value is no evidence of one root cause (`weak` in the data)."""
    return frozenset(str(kind) for kind in _data(path).get("weak", ()))  # type: ignore[attr-defined]


@lru_cache(maxsize=65_536)
def _line_names(line: str) -> tuple[frozenset[Discriminator], frozenset[Discriminator]]:
    """(names one line states, `absent` names it implies) by the line rules and the version."""
    found: set[Discriminator] = set()
    absent: set[Discriminator] = set()
    for rule in rules():
        if not rule.whole_text:
            for value in rule.values(line):
                (absent if value == rule.absent else found).add((rule.kind, value))
    relation = version_relation(line)
    if relation:
        found.add(("version", relation))
    return frozenset(found), frozenset(absent)


def discriminators(lines: Iterable[str]) -> frozenset[Discriminator]:
    """Every (kind, value) the lines name, by the rules in data/discriminators.toml (a value
    found anywhere wins over a rule's `absent` name) and the version relation."""
    found: set[Discriminator] = set()
    kept = list(lines)
    if len(kept) > MAX_LINES:
        kept = kept[: MAX_LINES // 2] + kept[-MAX_LINES // 2 :]
    absent: set[Discriminator] = set()
    for line in kept:
        named, lacking = _line_names(line)
        found.update(named)
        absent.update(lacking)
    text = "\n".join(kept)
    for rule in rules():
        if rule.whole_text:
            found.update((rule.kind, value) for value in rule.values(text))
    kinds = {kind for kind, _ in found}
    return frozenset(found | {(k, v) for k, v in absent if k not in kinds})


@cache
def _conflict_only() -> frozenset[Discriminator]:
    return frozenset((rule.kind, rule.absent) for rule in rules() if rule.absent)


def agreeing(a: frozenset[Discriminator], b: frozenset[Discriminator]) -> list[str]:
    """`kind=value` of every telling name both texts carry whose kind is not weak: evidence
    that the two are one root cause (a port, a constraint, an auth method both name)."""
    weak = weak_kinds()
    return sorted(f"{k}={v}" for k, v in telling(a) & telling(b) if k not in weak)


def telling(names: frozenset[Discriminator]) -> frozenset[Discriminator]:
    """The names that say what a text is about, not only what it is not: a rule's `absent`
    name and the version relation only ever count as a conflict, never as a shared name."""
    return frozenset(n for n in names if n[0] != "version" and n not in _conflict_only())


def conflicting(a: frozenset[Discriminator], b: frozenset[Discriminator]) -> list[str]:
    """`kind=value` of every kind both name with no value in common."""
    out = []
    for kind in sorted({k for k, _ in a} & {k for k, _ in b}):
        mine = {v for k, v in a if k == kind}
        theirs = {v for k, v in b if k == kind}
        if not mine & theirs:
            out += [f"{kind}={v}" for v in sorted(mine | theirs)]
    return out
