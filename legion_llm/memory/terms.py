"""Text terms shared by every reader that compares texts: words, stems, content terms, and
whether a text is a placeholder or is supported by a source.

One module, imported by the error-signature topics (stems, stop words), the compaction facts
model and its grounding rules, distillation and learnings (content terms, placeholders,
support). Pure functions, no I/O.

Words are read in every script. Latin words are lower-cased and crudely stemmed (plural and
tense variants meet); words of other alphabets (Cyrillic, Greek, ...) are lower-cased and cut
to their first `PREFIX_LETTERS` letters (a light stem that lets Russian inflections meet);
Chinese, Japanese and Korean text, written without spaces, gives its character pairs
(bigrams), the usual unit for comparing such text without a dictionary.

- `content_terms`: the terms of a text minus numbers, stop words and the generic vocabulary of
  status reports (plan, task, implemented, completed, changes ...);
- `support` / `grounded`: the share of a text's content terms that a source also holds;
  `grounded` asks for at least `THRESHOLD` of them and at least `MIN_SHARED` shared terms (one
  for a text with a single content term). Generic text has no content terms and is never
  grounded;
- `is_placeholder`: empty, punctuation or paths only, one repeated token, one-letter words, or
  a known stand-in phrase ("TBD", "n/a", "None recorded", "Plan x", "lorem ipsum ..." ...).

The thresholds were set on the hand-written fixture phases (paraphrases, swapped plans,
generic and placeholder texts; tests/pipeline/test_grounding_calibration.py) and checked on the
real summaries under ../shared/realworld (tests/test_conformance_compaction.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from legion_llm.memory.phases.paths import find_paths

THRESHOLD = 0.6
STRICT_THRESHOLD = 0.8  # against a wider source than the one a claim belongs to
MIN_SHARED = 2
PREFIX_LETTERS = 6  # a long word also meets a word with the same first six letters

# fmt: off
STOP_WORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "but",
    "or", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these",
    "those", "as", "into", "your", "you", "we", "our", "they", "their", "there", "here", "which",
    "what", "when", "while", "if", "then", "than", "do", "does", "did", "done", "has", "have",
    "had", "can", "could", "may", "might", "will", "would", "should", "shall", "must", "not",
    "no", "never", "always", "use", "used", "using", "uses", "so", "only", "also", "just", "all",
    "any", "each", "every", "one", "two", "via", "per", "before", "after", "instead", "because",
    "otherwise", "still", "same", "new", "get", "gets", "got", "make", "makes", "need", "needs",
    "needed", "run", "runs", "ran", "running", "time", "way", "it's", "don't", "doesn't", "out",
    "up", "down", "over", "under", "about", "again", "first", "more", "most", "less", "very",
    "require", "requires", "required", "want", "wants", "like", "some", "other", "without",
})
# frequent words of three letters or more in Russian, the other language of the real summaries
_OTHER_STOP_WORDS = frozenset(["для", "что", "это", "как", "при", "или", "его", "она", "они", "был", "была", "были", "было", "все", "всё", "также", "так", "уже", "еще", "ещё", "только", "над", "под", "без", "через", "между", "если", "когда", "где", "чем", "чтобы", "этот", "эта", "эти", "того", "этого", "которые", "который"])
SYNONYMS = {
    "repo": "repository", "db": "database", "config": "configuration", "conf": "configuration",
    "env": "environment", "deps": "dependency", "dep": "dependency", "pkg": "package",
    "dir": "folder", "directory": "folder", "tests": "test", "spec": "test", "specs": "test",
    "postgresql": "postgres", "pg": "postgres", "js": "javascript", "ts": "typescript",
    "k8s": "kubernetes", "auth": "authentication", "authn": "authentication",
}
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

# a run of letters and digits in any script (no underscore: `snake_case` gives its words)
_TOKEN = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_LETTERS = re.compile(r"[^\W\d_]{2}")


def stem(word: str) -> str:
    """A crude, deterministic suffix stripper for Latin words (plural and tense variants); a
    word of another alphabet is cut to its first PREFIX_LETTERS letters."""
    word = SYNONYMS.get(word, word)
    if not word.isascii():
        return word[:PREFIX_LETTERS]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")) and len(word) > 4:
        return word[:-2]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def bigrams(run: str) -> list[str]:
    """The character pairs of a run of CJK characters (a lone character is itself)."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def split_cjk(token: str) -> Iterable[tuple[str, bool]]:
    """(piece, is a CJK pair): a run of CJK characters has no spaces between its words, so it
    is read by its character pairs; the rest of the token as it is."""
    if token.isascii() or not _CJK.search(token):
        yield token, False
        return
    for piece in re.split(f"({_CJK.pattern})", token):
        if _CJK.fullmatch(piece):
            yield from ((pair, True) for pair in bigrams(piece))
        elif piece:
            yield piece, False


def _tokens(text: str) -> Iterable[tuple[str, bool]]:
    """(token, is a CJK pair) for every word of the lower-cased text."""
    for token in _TOKEN.findall(text.lower()):
        yield from split_cjk(token)


GENERIC = frozenset(stem(w) for w in _GENERIC_WORDS.split())


@lru_cache(maxsize=1 << 14)
def content_terms(text: str) -> frozenset[str]:
    """Content terms of `text` (see the module docstring): linear in the text."""
    found = set()
    for token, pair in _tokens(text):
        if pair:
            found.add(token)
            continue
        if len(token) < 3 or token.isdigit() or token in STOP_WORDS or token in _OTHER_STOP_WORDS:
            continue
        if token.isascii() and not token[0].isalpha():
            continue  # `3d`, `2xx`: a number with a unit
        stemmed = stem(token)
        term = SYNONYMS.get(stemmed, stemmed)
        if len(term) >= 3 and term not in GENERIC:
            found.add(term)
    return frozenset(found)


def terms_of(texts: Iterable[str]) -> frozenset[str]:
    out: set[str] = set()
    for text in texts:
        out |= content_terms(text)
    return frozenset(out)


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
    prefixes = _prefixes(source)
    shared = sum(
        1
        for t in terms
        if t in source or (len(t) > PREFIX_LETTERS and t[:PREFIX_LETTERS] in prefixes)
    )
    return Support(shared, len(terms))


@lru_cache(maxsize=512)
def _prefixes(source: frozenset[str]) -> frozenset[str]:
    return frozenset(t[:PREFIX_LETTERS] for t in source if len(t) > PREFIX_LETTERS)


def grounded(text: str, source: frozenset[str], threshold: float = THRESHOLD) -> bool:
    """Substantive content, most of it found in `source` (see the module docstring)."""
    found = support(text, source)
    needed = min(MIN_SHARED, found.total)
    return found.total > 0 and found.shared >= needed and found.share >= threshold


# ---------------------------------------------------------------- placeholders

_STAND_IN = re.compile(
    r"^(?:plan|item|file|change|decision|deliverable|path|agent|requirement|entry|row)"
    r"\s*[#-]?\s*(?:[a-z]|\d{1,2}|x+|n|\.{3})?$",
    re.IGNORECASE,
)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s/]+", " ", text.lower()).split())


@lru_cache(maxsize=1 << 14)
def is_placeholder(text: str) -> bool:
    """Whether `text` stands in for content instead of being content (see module docstring)."""
    plain = _normal(text)
    if not plain or plain in _PLACEHOLDER_PHRASES or _STAND_IN.match(plain):
        return True
    if plain.startswith("lorem ipsum"):
        return True
    tokens = plain.split()
    if all(len(t) <= 1 and t.isascii() for t in tokens):
        return True
    if len(set(tokens)) == 1 and len(tokens) > 1:
        return True
    return not _LETTERS.search(_without_paths(text))  # punctuation, numbers or paths only


def has_letters(text: str) -> bool:
    """At least one word of two letters, in any script."""
    return _LETTERS.search(text) is not None


def _without_paths(text: str) -> str:
    for path in sorted(find_paths(text), key=len, reverse=True):
        text = text.replace(path, " ")
    return text
