"""Lexical grounding shared by every LLM step: is a proposed text a placeholder, and does it
share substantive content with the originals it claims to summarise?

A model is an untrusted proposer. Presence checks (every id and path kept) cannot tell a real
summary from `x`, "(no deliverable proposed)" or "Implemented the planned changes"; these
checks can, without a model:

- `is_placeholder`: empty, punctuation or paths only, one repeated token, one-letter words, or a
  known stand-in phrase ("TBD", "n/a", "None recorded", "Plan x", "lorem ipsum" ...);
- `support`: the share of a text's content terms (stemmed words of three or more letters, minus
  stop words and the generic vocabulary of status reports: plan, task, implemented, completed,
  changes ...) that the source also holds. `grounded` asks for at least `THRESHOLD` of them and
  at least `MIN_SHARED` shared terms (one for a text with a single content term). Generic text
  has no content terms and is never grounded.

The thresholds were set on the hand-written fixture phases (paraphrases, swapped plans,
generic and placeholder texts; tests/pipeline/test_grounding_calibration.py) and checked on
the real summaries under ../shared/realworld (tests/test_conformance_compaction.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from legion_llm.memory.phases.paths import find_paths
from legion_llm.memory.signatures.topics import STOP_WORDS, SYNONYMS, stem, words

THRESHOLD = 0.6
STRICT_THRESHOLD = 0.8  # against a wider source than the one a claim belongs to
MIN_SHARED = 2

# fmt: off
_GENERIC_WORDS = """
    plan plans phase phases task tasks work worked working summary summaries deliverable
    deliverables implement implemented implementation complete completed completion finish
    finished add added update updated change changed changes modify modified create created
    make made build built done various several item items thing things stuff etc general
    successfully success successful accordingly properly correctly relevant required needed
    necessary appropriate planned expected described above below following mentioned noted
    aspect aspects part parts overall some many number fix fixed issue issues problem
    execute executed execution deliver delivered provide provided handle handled ensure
    ensured perform performed process processed result results outcome outcomes file files
"""
_PLACEHOLDER_PHRASES = {
    "x", "xx", "xxx", "tbd", "tba", "todo", "to do", "n/a", "na", "none", "null", "nil",
    "nothing", "placeholder", "lorem ipsum", "none recorded", "no deliverable proposed",
    "no deliverable", "see the plan summary", "see plan summary", "see summary", "see the summary",
    "see plan", "see above", "see below", "same as above", "as above", "unknown", "various",
    "etc", "misc", "miscellaneous", "n a", "not applicable", "no details", "no description",
    "description", "summary", "text", "value", "string", "example", "sample", "test", "foo",
    "bar", "baz", "dummy", "filler", "pending", "fill in", "to be determined", "insert here",
}
# fmt: on
GENERIC = frozenset(term for w in _GENERIC_WORDS.split() for term in words(w))
_STAND_IN = re.compile(
    r"^(?:plan|item|file|change|decision|deliverable|path|agent|requirement|entry|row)"
    r"\s*[#-]?\s*(?:[a-z]|\d{1,2}|x+|n|\.{3})?$",
    re.IGNORECASE,
)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+")


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s/]+", " ", text.lower()).split())


@lru_cache(maxsize=1 << 14)
def is_placeholder(text: str) -> bool:
    """Whether `text` stands in for content instead of being content (see module docstring)."""
    plain = _normal(text)
    if not plain or plain in _PLACEHOLDER_PHRASES or _STAND_IN.match(plain):
        return True
    if "lorem ipsum" in plain:
        return True
    tokens = plain.split()
    if all(len(t) <= 1 for t in tokens) or (len(set(tokens)) == 1 and len(tokens) > 1):
        return True
    return not re.search(r"[A-Za-z]{2}", _without_paths(text))  # punctuation or paths only


def _without_paths(text: str) -> str:
    for path in sorted(find_paths(text), key=len, reverse=True):
        text = text.replace(path, " ")
    return text


@lru_cache(maxsize=1 << 14)
def content_terms(text: str) -> frozenset[str]:
    """Stemmed content words of `text`, minus numbers, stop words and the generic vocabulary
    of status reports (the topic matcher's stemming, over a set: linear in the text)."""
    found = set()
    for word in set(_WORD.findall(text.lower())):
        if len(word) < 3 or word in STOP_WORDS or word.isdigit():
            continue
        stemmed = stem(word)
        term = SYNONYMS.get(stemmed, stemmed)
        if len(term) >= 3 and term not in GENERIC:
            found.add(term)
    return frozenset(found)


@dataclass(frozen=True)
class Support:
    shared: int
    total: int

    @property
    def share(self) -> float:
        return self.shared / self.total if self.total else 0.0


def support(text: str, source: frozenset[str]) -> Support:
    """How many of the text's content terms the source holds (a long word also counts when the
    source holds a word with the same first six letters: "validation" and "validates")."""
    terms = content_terms(text)
    stems = _stems(source)
    shared = sum(1 for t in terms if t in source or (len(t) >= 7 and t[:6] in stems))
    return Support(shared, len(terms))


@lru_cache(maxsize=512)
def _stems(source: frozenset[str]) -> frozenset[str]:
    return frozenset(t[:6] for t in source if len(t) >= 7)


def grounded(text: str, source: frozenset[str], threshold: float = THRESHOLD) -> bool:
    """Substantive content, most of it found in `source` (see the module docstring)."""
    found = support(text, source)
    needed = min(MIN_SHARED, found.total)
    return found.total > 0 and found.shared >= needed and found.share >= threshold


def terms_of(texts: Iterable[str]) -> frozenset[str]:
    out: set[str] = set()
    for text in texts:
        out |= content_terms(text)
    return frozenset(out)
