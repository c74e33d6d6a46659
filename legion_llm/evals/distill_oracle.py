"""What no written pattern may be, read apart from the pipeline (`eval distill --corpus`).

The distillation pipeline refuses statuses, file lists, unsupported names and near-duplicates
with its own rules (memory/phases/patterns.py, memory/entities.py, the topic matcher). An eval
that scored with those same rules could never see them fail, so this module is a second reader,
small and written without them: plain word lists and regular expressions, nothing imported
from the pipeline or the memory readers. A row it flags is either a pipeline bug or a rule the
two readers disagree on; both are worth a look.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_STATUS = {
    "complete", "completed", "done", "passed", "pass", "shipped", "landed", "merged", "finished",
    "success", "successful", "ok", "approved", "verified", "blocked", "failed", "partial",
    "delivered", "deployed", "released",
}  # fmt: skip
_CHECKS = {"review", "reviewed", "check", "checks", "test", "tests", "verification", "ci", "build"}
_FILLER = {
    "the", "a", "an", "and", "of", "in", "on", "with", "all", "first", "one", "cycle", "cycles",
    "finding", "findings", "phase", "plan", "is", "was", "are", "were", "been", "has", "have",
}  # fmt: skip
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_PATHISH = re.compile(r"\S*[/\\]\S*|\S+\.[A-Za-z0-9]{1,6}\b")
_CODE = re.compile(r"`([^`]+)`")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*\.[A-Za-z][\w.]*"
    r"|\w*\d[\w.]*(?:-[\w.]+)*)\b"
)
_STOP = {
    "that", "this", "with", "from", "into", "when", "then", "than", "them", "they", "their",
    "there", "where", "which", "what", "each", "every", "only", "also", "does", "were", "have",
    "been", "being", "will", "would", "should", "could", "must", "because", "after", "before",
}  # fmt: skip


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text.replace("*", " ").replace("`", " "))]


def looks_like_status(text: str) -> bool:
    """A line that says how something ended: only status words and filler, a short name then
    a status word at its end or after a colon, or a check that passed or failed and little else."""
    words = _words(text)
    if not words:
        return True
    rest = [w for w in words if len(w) > 1 and w not in _STATUS | _FILLER | _CHECKS]
    if not rest:
        return True
    _head, colon, tail = text.partition(":")
    after = _words(tail)
    if colon and after[:1] and after[0] in _STATUS and len(after) <= 12 and not _more(after[1:]):
        return True
    if words[-1] in _STATUS and len(words) <= 10 and not {"so", "because", "by", "to"} & set(words):
        return True
    ran = bool(_CHECKS & set(words)) and bool(_STATUS & set(words))
    return ran and len(rest) < 2


def _more(words: list[str]) -> bool:
    """Words after a status that say more than how it ended: a reason or a means, or three
    words of four letters or more that are no status, check or filler."""
    if {"because", "so", "by", "via", "instead", "without", "using", "rather"} & set(words):
        return True
    rest = [w for w in words if len(w) >= 4 and w not in _STATUS | _FILLER | _CHECKS]
    return len(rest) >= 3


def looks_like_file_list(text: str) -> bool:
    """Paths and little else: take the path-like tokens away and fewer than three words stay."""
    if not _PATHISH.search(text):
        return False
    rest = _PATHISH.sub(" ", text)
    return len([w for w in _words(rest) if w not in {"and", "or"}]) < 3


def unstated(text: str, sources: str, allowed: Iterable[str] = ()) -> list[str]:
    """What `text` names that the sources do not hold, compared without case or line breaks:
    its code spans whole, then its identifiers (snake_case, camelCase, dotted) and anything with
    a digit in it, once the `allowed` names (cited ids, phase names) are taken out whole."""
    said = " ".join(sources.split()).casefold()
    names = {" ".join(code.split()) for code in _CODE.findall(text)}
    plain = _CODE.sub(" ", text)
    for name in sorted({a for a in allowed if a}, key=len, reverse=True):
        plain = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", " ", plain)
    names |= set(_IDENTIFIER.findall(plain))
    ok = {a.casefold() for a in allowed}
    return sorted(n for n in names if n and n.casefold() not in said and n.casefold() not in ok)


def content_words(text: str) -> set[str]:
    return {w for w in _words(text) if len(w) >= 4 and w not in _STOP}


def near_duplicate(text: str, earlier: Iterable[str], threshold: float = 0.6) -> str | None:
    """An earlier text whose content words overlap this one's by `threshold` (Jaccard), if any."""
    mine = content_words(text)
    if not mine:
        return None
    for other in earlier:
        theirs = content_words(other)
        if theirs and len(mine & theirs) / len(mine | theirs) >= threshold:
            return other
    return None
