"""What the matcher keeps of one error text: weighted tokens, discriminating names, fingerprint.

- `salient(text)` is the line(s) that name the error (lines.py);
- `features(text)` holds the salient tokens with their kinds (secondary error lines' tokens at a
  reduced share, banner lines' by their learned weight), the context tokens, the codes and
  subject names, the discriminating names (discriminators.py) and the strong fingerprint;
- `strong_fingerprint(text)` decides an exact match alone: the normalised output (lines that are
  not banners) and its discriminating names, and only when the salient lines say WHICH thing
  failed (a code, a name, a quoted value, an exception class); `fingerprint` always gives one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from legion_llm.memory.redact import redacted
from legion_llm.memory.signatures.banners import shared_by
from legion_llm.memory.signatures.banners import weight as banner_weight
from legion_llm.memory.signatures.discriminators import Discriminator, discriminators, telling
from legion_llm.memory.signatures.lines import SignatureLines, signature_lines, split_salient
from legion_llm.memory.signatures.normalise import normalise
from legion_llm.memory.signatures.tokens import (
    CODE,
    EXCEPTION,
    IDENT,
    KIND_WEIGHT,
    NAME,
    SUBJECT,
    VALUE,
    tokens,
)

__all__ = ["Features", "bounded", "features", "fingerprint", "salient", "strong_fingerprint"]

SECONDARY_WEIGHT = 0.6  # a token only an error line besides banner salient lines carries
SECONDARY_BESIDE = 0.2  # ... besides a salient line that names the error itself
MAX_CONTEXT_LINES = 60


def salient(text: str) -> str:
    """The salient line(s) of an error text, newline-joined (the whole stripped text if none)."""
    lines, _ = split_salient(text)
    return "\n".join(lines) if lines else text.strip()


DF_DATA = Path(__file__).resolve().parent / "data" / "token_df.json"


@cache
def background_df() -> tuple[dict[str, int], int]:
    """Token document frequencies over the tuning corpus (data/token_df.json), and its size."""
    if not DF_DATA.is_file():
        return {}, 0
    data = json.loads(DF_DATA.read_text(encoding="utf-8"))
    return data["df"], int(data["docs"])


def strong_fingerprint(text: str) -> str | None:
    """sha1 of the normalised, case-folded salient lines that are not banners, and of the
    discriminating names: equal for the same error; None when only banners name it."""
    return features(text).fingerprint


def fingerprint(text: str) -> str:
    """The strong fingerprint, else one of the normalised salient lines (for display and keys:
    equal for the same error, but too weak to decide a match alone)."""
    found = strong_fingerprint(text)
    if found is not None:
        return found
    return hashlib.sha1(normalise(salient(bounded(text))).casefold().encode()).hexdigest()


@dataclass(frozen=True)
class Features:
    """What the matcher keeps of one error text: fingerprint, salient and context token kinds,
    the share of its weight each secondary token keeps, and the discriminating names."""

    fingerprint: str | None  # None: only banner lines, too weak to decide a match alone
    salient: dict[str, str]
    context: dict[str, str]
    codes: frozenset[str]
    subjects: frozenset[str]
    scale: dict[str, float] = field(default_factory=dict)
    names: frozenset[Discriminator] = frozenset()
    kind: str = "fallback"  # the salient line's kind: the rule that chose it, or "banner"


MAX_TEXT = 64_000  # a pasted log is matched on its first and last 32,000 characters
MAX_LINE = 1_000  # no error line needs more; normalising one grows faster than its length


def bounded(text: str) -> str:
    """Compiler output names the error first, a traceback last: keep both ends of a huge text,
    and the start of each very long line. Secrets are redacted first (every signature passes
    here), so a new token in a known error still matches its fix."""
    text = redacted(text)
    if len(text) > MAX_TEXT:
        half = MAX_TEXT // 2
        text = text[:half] + "\n" + text[-half:]
    if any(len(line) > MAX_LINE for line in text.split("\n")):
        text = "\n".join(line[:MAX_LINE] for line in text.split("\n"))
    return text


def _fingerprint(lines: Sequence[str], names: frozenset[Discriminator]) -> str | None:
    """sha1 of the normalised lines and the discriminating names; None without a line."""
    if not lines:
        return None
    norm = normalise("\n".join(lines))
    named = "".join(f"\n[{kind}={value}]" for kind, value in sorted(names))
    return hashlib.sha1((norm.casefold() + named).encode("utf-8", "replace")).hexdigest()


_SPECIFIC = frozenset({CODE, SUBJECT, NAME, VALUE, IDENT, EXCEPTION})


def _specific(lines: Sequence[str], names: frozenset[Discriminator]) -> bool:
    """Whether lines say which thing failed (a code, a name, a quoted value, an exception class),
    not only how (`Module parse failed: Unexpected token (<num>:<num>)`): only such lines are
    specific enough for an exact match to decide alone."""
    if names:
        return True
    return any(kind in _SPECIFIC for line in lines for kind in tokens(normalise(line)).values())


def _weighted(
    lines: Sequence[str], share: float, into: dict[str, str], scale: dict[str, float]
) -> None:
    """Add the tokens of `lines` (each scaled by `share` and its banner weight) to `into`,
    keeping for every token the largest scale it was seen with."""
    for line in lines:
        weight = share * banner_weight(line)
        for token, kind in tokens(normalise(line)).items():
            old = scale.get(token, 1.0) if token in into else 0.0
            if weight > old:
                scale[token] = weight
            if token not in into or KIND_WEIGHT[kind] > KIND_WEIGHT[into[token]]:
                into[token] = kind


def _promoted(salient: list[str], secondary: list[str]) -> tuple[list[str], list[str]]:
    """When every salient line is a banner, the first error line that is not one joins them
    (`fatal: Could not read from remote repository.` says less than the `Permission denied
    (publickey).` before it)."""
    if not all(shared_by(line) for line in salient):
        return salient, secondary
    cause = next((line for line in secondary if not shared_by(line)), None)
    if cause is None:
        return salient, secondary
    return [cause, *salient], [line for line in secondary if line != cause]


def _exact_lines(
    salient: list[str], found: SignatureLines, names: frozenset[Discriminator]
) -> list[str]:
    """What the strong fingerprint is made of: the whole printed output (two causes can print
    the same error line, rarely the same output), banners aside, when the salient lines (or the
    first secondary one) are specific; else nothing."""
    strong = [line for line in salient if not shared_by(line)]
    strong = strong or [line for line in found.secondary if not shared_by(line)][:1]
    if not _specific(strong, telling(names)):
        return []
    return strong + [line for line in found.output if not shared_by(line)]


@lru_cache(maxsize=4096)
def features(text: str) -> Features:
    """What the matcher keeps of one error text (cached: pure, and asked again by every index
    and query that holds the same text; callers never modify the result)."""
    text = bounded(text)
    found = signature_lines(text)
    salient, secondary = _promoted(found.salient or [text.strip()], found.secondary)
    sal: dict[str, str] = {}
    scale: dict[str, float] = {}
    _weighted(salient, 1.0, sal, scale)
    codes = frozenset(t for t, kind in sal.items() if kind == CODE)
    subjects = frozenset(t for t, kind in sal.items() if kind == SUBJECT)
    weak = all(shared_by(line) for line in salient)  # the salient lines are all banners
    _weighted(secondary, SECONDARY_WEIGHT if weak else SECONDARY_BESIDE, sal, scale)
    names = discriminators(found.cleaned)
    for kind, value in telling(names):
        sal[f"{kind}={value}"] = NAME
        scale.pop(f"{kind}={value}", None)
    ctx = tokens(normalise("\n".join(found.context[:MAX_CONTEXT_LINES])))
    return Features(
        _fingerprint(_exact_lines(salient, found, names), names),
        sal,
        {t: k for t, k in ctx.items() if t not in sal},
        codes,
        subjects,
        {t: w for t, w in scale.items() if w < 1.0},
        names,
        "banner" if weak else found.rule,
    )


def key_agreement(a: Features, b: Features) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(shared codes and subjects, conflicting ones). Codes conflict when both texts carry codes
    and share none; subjects (the module, package, fixture, file or option) likewise."""
    shared = (a.codes & b.codes) | (a.subjects & b.subjects)
    conflicts: set[str] = set()
    for mine, theirs in ((a.codes, b.codes), (a.subjects, b.subjects)):
        if mine and theirs and not mine & theirs:
            conflicts |= mine | theirs
    return tuple(sorted(shared)), tuple(sorted(conflicts))
