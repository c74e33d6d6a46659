"""The entities of a sentence, and whether a source states each of them.

An entity is what a reader takes as a fact of its own: a code span, an identifier (`useAuth`,
`MAX_RETRIES`, `v2`, `ES2022`), a number or a quantity (`24`, `1.5`, `10,000`; each number of
a ratio such as `7/7`), and a name (a
capitalised word that does not open a sentence: `Redis`, `Kubernetes`). Entity-level factual
consistency (Nan et al., EACL 2021) is the share of a written text's entities that its source
states; a compacted summary's must be 1.0, whoever wrote it.

`new_entities(text, source)` lists what the text names and the source does not: a code span
and an identifier must occur in the source as written (its case aside: a sentence may open
with it), a number as a number, a name as a word in any case or by its first six letters
(`Anforderungen` beside `Anforderung`). Words a compacted summary uses of itself (`PASS`, `Plan`, `Why`) are no
entities. `cut_new_entities` removes the clauses that name them (split at `; `, ` — `, sentence
ends and commas), keeping what is left only when it still says something.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from legion_llm.memory.redact.core import MARKER

_CODE = re.compile(r"`([^`\n]+)`")
_WORD = re.compile(r"[^\W_](?:[\w.\-/]|(?<=\d),(?=\d))*[^\W_]|[^\W_]")  # `2,000` is one
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_RATIO = re.compile(r"\d+(?:[.,]\d+)*(?:/\d+(?:[.,]\d+)*)+")  # `7/7`, `3/4`: numbers each
_STARTS = re.compile(r"(?:^|[.!?:;]\s+|\s[—–]\s+|\(|\n)\s*[\"'*_(]*$")
# the vocabulary of a compacted file itself, never an entity of a sentence in it
_OWN = frozenset(
    [
        "I",
        "PASS",
        "FAIL",
        "FAILED",
        "PARTIAL",
        "NOT",
        "VERIFIED",
        "Plan",
        "Plans",
        "Phase",
        "Why",
        "Rejected",
        "Delivered",
        "Check",
        "Files",
        "File",
        "Decision",
        "Agent",
        "OK",
        "README",
        "TODO",
        "FIXME",
    ]
)
_CLAUSES = re.compile(r"(;\s+|\s+[—–]\s+|(?<=[.!?])\s+|,\s+)")
_MIN_WORDS = 3


def entities(text: str) -> list[str]:
    """The entities `text` names, in order (module docstring). A redaction marker stands for a
    secret of the originals, never a name of its own: the text around it is read apart."""
    text = MARKER.sub("\x00", text)
    found = [piece.strip() for span in _CODE.findall(text) for piece in span.split("\x00")]
    found = [piece for piece in found if piece]
    plain = _CODE.sub(" ", text)
    for match in _WORD.finditer(plain):
        word = match.group(0).strip(".-/")
        if not word or word in _OWN:
            continue
        if _RATIO.fullmatch(word):
            found += word.split("/")
        elif _is_number(word) or _is_identifier(word):
            found.append(word)
        elif word[:1].isupper() and word[1:].islower() and not _opens_sentence(plain, match):
            found.append(word)  # a name: a capitalised word inside a sentence
    return list(dict.fromkeys(found))


def _is_number(word: str) -> bool:
    return _NUMBER.fullmatch(word) is not None


def _is_identifier(word: str) -> bool:
    """Digits among letters, an inner capital, an underscore, a dot or slash between names,
    or capitals only (two or more)."""
    letters = any(c.isalpha() for c in word)
    if not letters:
        return False
    if any(c.isdigit() for c in word) or "_" in word:
        return True
    if re.search(r"[a-z][A-Z]", word) or re.search(r"\w[./]\w", word):
        return True
    return len(word) > 1 and word.isupper()


def _opens_sentence(text: str, match: re.Match[str]) -> bool:
    return _STARTS.search(text[: match.start()]) is not None


@lru_cache(maxsize=256)
def _source_index(source: str) -> tuple[str, str, frozenset[str], frozenset[str]]:
    """(the source, lower-cased, its words lower-cased, their first six letters), its white
    space made single (a code span may wrap across lines in a summary)."""
    source = " ".join(source.split())
    lowered = source.lower()
    words = frozenset(w.lower() for w in _WORD.findall(_CODE.sub(lambda m: m.group(1), source)))
    return source, lowered, words, frozenset(w[:6] for w in words if len(w) >= 6)


def stated(entity: str, source: str) -> bool:
    """Whether the source states the entity (module docstring)."""
    text, lowered, words, stems = _source_index(source)
    entity = " ".join(entity.split())
    if _is_number(entity):
        return re.search(rf"(?<![\d.,]){re.escape(entity)}(?![\d]|[.,]\d)", text) is not None
    low = entity.lower()
    if _is_identifier(entity):  # as written, its case aside (`statusBar` opening a sentence)
        return low in lowered
    return low in words or low in lowered or (len(low) >= 6 and low[:6] in stems)


def new_entities(text: str, source: str, known: Iterable[str] = ()) -> list[str]:
    """The entities of `text` the source does not state (`known`: names the document may use
    whatever the source, such as the phase's plan ids)."""
    allowed = set(known)
    return [e for e in entities(text) if e not in allowed and not stated(e, source)]


def cut_new_entities(text: str, source: str, known: Iterable[str] = ()) -> tuple[str, list[str]]:
    """`text` without the clauses that name an entity the source does not state, and those
    entities; "" when what is left says nothing (fewer than three words)."""
    new = new_entities(text, source, known)
    if not new:
        return text, []
    pieces = _CLAUSES.split(text)
    kept: list[str] = []
    for index in range(0, len(pieces), 2):
        clause = pieces[index]
        if not any(e in clause for e in new):
            separator = pieces[index - 1] if index and kept else ""
            kept.append(separator + clause)
    left = "".join(kept).strip(" ,;—–")
    if len(left.split()) < _MIN_WORDS or new_entities(left, source, known):
        return "", new
    return left, new
