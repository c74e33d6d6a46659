"""Canonical forms of error phrasings that differ between tools, versions and platforms.

The rewrites are data (data/equivalences.toml, one entry per condition with examples that a
test checks). They apply to *normalised* text (placeholders in, quotes already single; `^`/`$`
are line bounds), at the end of `match.normalise`, so that both sides of a pair carry the same
tokens. A rule there must name a condition, not a project.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["Equivalence", "canonical", "code_aliases", "equivalences"]

DATA = Path(__file__).resolve().parent / "data" / "equivalences.toml"


@dataclass(frozen=True)
class Equivalence:
    name: str
    pattern: re.Pattern[str]
    replace: str
    examples: tuple[tuple[str, str], ...]


@cache
def _data() -> dict[str, object]:
    return tomllib.loads(DATA.read_text(encoding="utf-8"))


@cache
def equivalences() -> tuple[Equivalence, ...]:
    rows: list[dict[str, object]] = _data()["equivalence"]  # type: ignore[assignment]
    out = []
    for row in rows:
        flags = re.MULTILINE | (re.IGNORECASE if "i" in str(row.get("flags", "")) else 0)
        examples = tuple((str(a), str(b)) for a, b in row.get("examples", ()))  # type: ignore[attr-defined]
        out.append(
            Equivalence(
                str(row["name"]),
                re.compile(str(row["pattern"]), flags),
                str(row["replace"]),
                examples,
            )
        )
    return tuple(out)


@cache
def code_aliases() -> dict[str, str]:
    return {str(k): str(v) for k, v in _data().get("codes", {}).items()}  # type: ignore[attr-defined]


@cache
def _code_pattern() -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, code_aliases())) + r")\b")


def canonical(text: str) -> str:
    """Normalised text with alternative wordings (and error codes) mapped to one form each."""
    aliases = code_aliases()
    text = _code_pattern().sub(lambda m: aliases[m.group()], text)
    for rule in equivalences():
        text = rule.pattern.sub(rule.replace, text)
    return text
