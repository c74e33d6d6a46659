"""Topic matching for prose knowledge (patterns, learnings) with the error matcher's machinery.

Near-duplicate detection for PATTERNS.md rows and mission learnings uses the measure of the error
knowledge base's matcher (signatures.py): an IDF-weighted Ruzicka similarity over an index of the
stored items. Prose needs one extra step first, done here: `topic_terms` turns text into a line of
comparable terms. Identifiers
(backticked spans, paths, flags, package names, `a:b` scripts) become single terms such as
`src_db_index_ts` and also contribute their words; words (in any script; a run of CJK characters
by its character pairs) are lower-cased, stop words dropped and crudely stemmed, so "requires the
flag" and "require flags" meet.

Pure functions and an in-memory index: no I/O, no LLM.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from legion_llm.memory.terms import STOP_WORDS, SYNONYMS, split_cjk, stem

_IDENT = re.compile(
    r"`([^`\n]{1,80})`"  # a code span
    r"|(?<![\w@/.-])(@?[\w.-]+(?:/[\w.*{},-]+)+/?)"  # a path or @scope/package
    r"|(?<![\w-])(--?[A-Za-z][\w-]*)"  # a flag
    r"|\b([A-Za-z][\w-]*:[A-Za-z][\w:-]*)\b"  # a script name such as build:packages
    r"|\b([\w-]+\.(?:py|ts|tsx|js|mjs|cjs|jsx|json|toml|ya?ml|md|sql|sh|css|html|mjml|go|rs|"
    r"java|rb|php|lock|env|cfg|ini|txt|csv))\b"  # a file name
)
_WORD = re.compile(r"[^\W\d_][^\W_]*|\d+")  # a word in any script, or a number


def _term(raw: str) -> str:
    term = re.sub(r"[\W_]+", "_", raw.lower()).strip("_")
    return f"n{term}" if term[:1].isdigit() else term


def identifiers(text: str) -> list[str]:
    """The specific names in a text, as written: code spans, paths, flags, scripts, file names."""
    found: dict[str, None] = {}  # ordered and de-duplicated in linear time
    for match in _IDENT.finditer(text):
        value = next(group for group in match.groups() if group is not None).strip()
        if value:
            found[value] = None
    return list(found)


def words(text: str) -> list[str]:
    """Stemmed content words (stop words and one-letter words dropped), in order, once each."""
    out: dict[str, None] = {}  # ordered and de-duplicated in linear time
    seen: set[str] = set()  # a word seen before gives the same term: stem it once
    for raw, pair in (piece for word in _WORD.findall(text) for piece in split_cjk(word)):
        if pair:
            out[raw] = None
            continue
        word = raw.lower()
        if word in seen or word in STOP_WORDS or len(word) < 2:
            continue
        seen.add(word)
        term = _term(SYNONYMS.get(stem(word), stem(word)))
        if term:
            out[term] = None
    return list(out)


def topic_terms(text: str, extra: Iterable[str] = ()) -> str:
    """One line of terms for the matcher: identifier terms, then content words, then `extra`."""
    terms: dict[str, None] = {}  # ordered and de-duplicated in linear time
    for ident in identifiers(text):
        term = _term(ident)
        if len(term) > 1:
            terms[term] = None
    for term in [*words(text), *(_term(e) for e in extra)]:
        if term:
            terms[term] = None
    return " ".join(terms)


@dataclass(frozen=True)
class TopicMatch:
    key: str
    score: float  # IDF-weighted Ruzicka similarity of the two term sets
    overlap: float  # the same weights over the smaller side: how much of one the other holds
    same: bool  # the same topic: both measures reach their thresholds
    related: bool  # related: the similarity reaches RELATED


SAME_SCORE = 0.12
SAME_OVERLAP = 0.33
RELATED = 0.08


class TopicIndex:
    """Existing items (key, text) indexed once; `rank(terms)` finds the closest topics.

    The measure is the error matcher's (signatures.py): a Ruzicka similarity with every term
    weighted by its smoothed IDF over the index, log(1 + (N + 1) / (df + 0.5)). Prose shares
    fewer words than two copies of one error, so the thresholds are lower, and a second measure,
    the overlap coefficient, keeps a short learning from being swamped by a long one.
    """

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self.items = [(key, frozenset(text.split())) for key, text in items if text.strip()]
        self._df: dict[str, int] = {}
        for _, terms in self.items:
            for term in terms:
                self._df[term] = self._df.get(term, 0) + 1

    def __len__(self) -> int:
        return len(self.items)

    def idf(self, term: str) -> float:
        return math.log(1.0 + (len(self.items) + 1) / (self._df.get(term, 0) + 0.5))

    def rank(self, terms: str, limit: int = 3) -> list[TopicMatch]:
        query = frozenset(terms.split())
        if not query or not self.items:
            return []
        mine = sum(self.idf(t) for t in query)
        found = []
        for key, theirs in self.items:
            shared = sum(self.idf(t) for t in query & theirs)
            if not shared:
                continue
            other = sum(self.idf(t) for t in theirs)
            score = shared / (mine + other - shared)
            overlap = shared / min(mine, other)
            same = score >= SAME_SCORE and overlap >= SAME_OVERLAP
            found.append(
                TopicMatch(key, round(score, 4), round(overlap, 4), same, score >= RELATED)
            )
        found.sort(key=lambda m: (not m.same, -m.score, m.key))
        return found[:limit]

    def best(self, terms: str) -> TopicMatch | None:
        ranked = self.rank(terms, 1)
        return ranked[0] if ranked else None
