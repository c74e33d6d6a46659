"""The names that decide an error's fix, read by rules kept as data (data/discriminators.toml).

A connection refused on port 5432 and one on 6379 read alike but need different fixes (start
PostgreSQL, start Redis); so do a unique violation on two constraints, an ESM `require()` of two
packages, a login failure by two authentication methods, or a type error on two properties.
`discriminators(lines)` returns the (kind, value) pairs a text names; the matcher turns a
different value of the same kind into a strong negative, and puts the pairs into the exact
fingerprint so that such texts never share one.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
        return found

    def name(self, raw: str) -> str:
        value = raw if self.keep_case else raw.lower()
        mapped = self.names.get(raw.lower())
        if mapped is not None:
            return mapped
        return self.default.format(value=value) if self.names else value


@cache
def rules(path: Path = DATA) -> tuple[Rule, ...]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for row in data["rule"]:
        table = data.get(row["map"], {}) if "map" in row else {}
        when = re.compile(row["when"], re.IGNORECASE) if "when" in row else None
        out.append(
            Rule(
                row["kind"],
                re.compile(row["pattern"]),
                when,
                {str(k).lower(): str(v) for k, v in table.items()},
                row.get("case", "lower") == "keep",
                tuple((str(t), str(v)) for t, v in row.get("examples", ())),
                row.get("value", "{value}"),
                row.get("scope", "line") == "text",
                row.get("default", "{value}"),
            )
        )
    return tuple(out)


def discriminators(lines: Iterable[str]) -> frozenset[Discriminator]:
    """Every (kind, value) the lines name, by the rules in data/discriminators.toml."""
    found: set[Discriminator] = set()
    kept = list(lines)
    if len(kept) > MAX_LINES:
        kept = kept[: MAX_LINES // 2] + kept[-MAX_LINES // 2 :]
    rule_set = rules()
    for line in kept:
        for rule in rule_set:
            if not rule.whole_text:
                found.update((rule.kind, value) for value in rule.values(line))
    text = "\n".join(kept)
    for rule in rule_set:
        if rule.whole_text:
            found.update((rule.kind, value) for value in rule.values(text))
    return frozenset(found)


def conflicting(a: frozenset[Discriminator], b: frozenset[Discriminator]) -> list[str]:
    """`kind=value` of every kind both name with no value in common."""
    out = []
    for kind in sorted({k for k, _ in a} & {k for k, _ in b}):
        mine = {v for k, v in a if k == kind}
        theirs = {v for k, v in b if k == kind}
        if not mine & theirs:
            out += [f"{kind}={v}" for v in sorted(mine | theirs)]
    return out
