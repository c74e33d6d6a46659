"""The one redaction step: find secrets in a text and replace each by `[REDACTED:<kind>]`.

Every memory write and every engine request passes its text through a `Redactor`. Only the
secret's own characters change (`postgres://app:[REDACTED:password]@db:5432/ledger`); text with
no secret comes back identical, and redacting twice gives what redacting once gave (a marker is
never a secret, and nothing overlapping one is). Findings never carry the value: a kind and a
place only.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from legion_llm.memory.redact.assignments import (
    Span,
    assignment_spans,
    command_password_spans,
    entropy,
    url_password_spans,
)
from legion_llm.memory.redact.rules import RULES, Rule

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
T = TypeVar("T")


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Finding:
    """One secret: its kind and where it is in the text it was found in (never its value)."""

    kind: str
    start: int
    end: int

    def line(self, text: str) -> int:
        return text.count("\n", 0, self.start) + 1


@dataclass(frozen=True)
class Redacted:
    text: str
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Hit:
    """A secret found in one field of a record (for the warning: kind and field)."""

    field: str
    kind: str


def _mixes(value: str, classes: int) -> bool:
    found = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
    )
    return sum(found) >= classes


_STOCK = re.compile(r"(?i)placeholder|x{5}|changeme|your[-_]|insert[-_]?your")


def _rule_spans(rule: Rule, text: str) -> Iterator[Span]:
    for found in rule.pattern.finditer(text):
        start, end = found.span(rule.group)
        value = text[start:end]
        if _STOCK.search(value):  # sk_test_PLACEHOLDER, ghp_xxxxxxxx...: a template, no secret
            continue
        if rule.min_entropy and entropy(value) < rule.min_entropy:
            continue
        if rule.min_classes and not _mixes(value, rule.min_classes):
            continue
        yield rule.kind, start, end


# A token cut in two by one line break (a wrapped terminal line, a `<br>` in a table cell): the
# part before the break, then the break, then the rest. Only a part too short to be a token alone
# is joined, so a whole token never takes the first word of the next line.
_TOKEN_CHARS = r"[A-Za-z0-9_.+/=-]"
_WRAPPED = re.compile(
    rf"(?<!{_TOKEN_CHARS})({_TOKEN_CHARS}{{6,}})"
    r"(?:\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|(?i:<br\s*/?>))"
    rf"({_TOKEN_CHARS}{{4,}})"
)


def _wrapped_spans(text: str) -> Iterator[Span]:
    for found in _WRAPPED.finditer(text):
        left, right = found[1], found[2]
        low = left.lower()
        rules = [rule for rule in RULES if any(keyword in low for keyword in rule.keywords)]
        if not rules or any(next(_rule_spans(rule, left), None) for rule in rules):
            continue
        joined = _joined_token(rules, left + right, len(left))
        if joined is not None:
            kind, start, end = joined
            yield kind, found.start(1) + start, found.start(2) + end - len(left)


def _joined_token(rules: Sequence[Rule], joined: str, cut: int) -> Span | None:
    """The first token the rules find in `joined` that runs across `cut`."""
    for rule in rules:
        for kind, start, end in _rule_spans(rule, joined):
            if start < cut < end:
                return kind, start, end
    return None


MAX_PASSES = 4


def _apply(text: str, findings: Sequence[Finding]) -> str:
    """`text` with each finding (sorted, disjoint) replaced by its marker."""
    parts, position = [], 0
    for item in findings:
        parts += [text[position : item.start], marker(item.kind)]
        position = item.end
    parts.append(text[position:])
    return "".join(parts)


def _original(item: Finding, earlier: Sequence[Finding]) -> Finding:
    """A finding in the text with `earlier` replaced, placed in the original text (it never
    overlaps a marker, so each of its ends lies before or after every one)."""

    def back(position: int) -> int:
        shift = 0  # how much longer the text before `position` became
        for prior in earlier:
            size = len(marker(prior.kind))
            if position < prior.start + shift + size:
                break
            shift += size - (prior.end - prior.start)
        return position - shift

    return Finding(item.kind, back(item.start), back(item.end))


class Redactor:
    """Finds and replaces secrets. `allow`: regexes of text to keep (a secret inside a match of
    one is left alone); `enabled=False` finds them all the same but leaves the text as it is."""

    def __init__(
        self,
        allow: Iterable[str] = (),
        *,
        enabled: bool = True,
        switched_off_by: str = "settings.json memory.redact.enabled",
    ) -> None:
        self.allow = tuple(re.compile(pattern) for pattern in allow)
        self.enabled = enabled
        self.switched_off_by = switched_off_by  # where `enabled: false` was said, for the warning

    def candidates(self, text: str) -> Iterator[Span]:
        """Every rule's findings, most specific rule first (it wins an overlap)."""
        low = text.lower()
        yield from _wrapped_spans(text)
        for rule in RULES:
            if any(keyword in low for keyword in rule.keywords):
                yield from _rule_spans(rule, text)
        if "://" in text:
            yield from url_password_spans(text)
        if "=" in text or ":" in text or "--" in text:
            yield from assignment_spans(text)
        yield from command_password_spans(text)

    def find(self, text: str) -> list[Finding]:
        """The secrets in `text`, in order, none overlapping another or a marker. A finding that
        lost an overlap to a more specific one is looked for again once that one is replaced, so
        redacting a redacted text finds nothing."""
        found: list[Finding] = []
        for _ in range(MAX_PASSES):
            new = self._find_once(_apply(text, found))
            if not new:
                break
            found = sorted(found + [_original(f, found) for f in new], key=lambda f: f.start)
        return found

    def _find_once(self, text: str) -> list[Finding]:
        if not text:
            return []
        taken = [m.span() for m in MARKER.finditer(text)]
        kept = [m.span() for pattern in self.allow for m in pattern.finditer(text)]
        found: list[Finding] = []
        for kind, start, end in self.candidates(text):
            if start >= end or any(start < b and a < end for a, b in taken):
                continue
            if any(a <= start and end <= b for a, b in kept):
                continue
            taken.append((start, end))
            found.append(Finding(kind, start, end))
        return found

    def redact(self, text: str) -> Redacted:
        findings = tuple(self.find(text))
        if not findings or not self.enabled:
            return Redacted(text, findings)
        return Redacted(_apply(text, findings), findings)

    def text(self, text: str) -> str:
        return self.redact(text).text

    def values(self, values: Mapping[str, str]) -> tuple[dict[str, str], list[Hit]]:
        """Each string value redacted, and what was found in which field."""
        clean: dict[str, str] = {}
        hits: list[Hit] = []
        for name, value in values.items():
            done = self.redact(value) if isinstance(value, str) else Redacted(value, ())
            clean[name] = done.text
            hits += [Hit(name, f.kind) for f in done.findings]
        return clean, hits

    def record(self, record: T) -> tuple[T, list[Hit]]:
        """A dataclass with every str (and list of str) field redacted, and the hits."""
        changes: dict[str, Any] = {}
        hits: list[Hit] = []
        for item in dataclasses.fields(record):  # type: ignore[arg-type]
            value = getattr(record, item.name)
            if isinstance(value, str):
                done = self.redact(value)
                changes[item.name] = done.text
                hits += [Hit(item.name, f.kind) for f in done.findings]
            elif isinstance(value, list) and all(isinstance(v, str) for v in value):
                redacted = [self.redact(v) for v in value]
                changes[item.name] = [r.text for r in redacted]
                hits += [Hit(item.name, f.kind) for r in redacted for f in r.findings]
        return dataclasses.replace(record, **changes), hits  # type: ignore[type-var]


def _listed(places: Sequence[str]) -> str:
    counts = Counter(places)
    return ", ".join(f"{place} (x{n})" if n > 1 else place for place, n in counts.items())


def write_warning(redactor: Redactor, hits: Sequence[Hit], target: str) -> list[str]:
    """The one warning line about what was redacted where (kinds and fields, never values)."""
    if not hits:
        return []
    places = _listed([f"{hit.kind} in {hit.field}" for hit in hits])
    if not redactor.enabled:
        return [
            f"warning: {len(hits)} secret(s) written to {target} as given ({places}): "
            f"{redactor.switched_off_by} is false"
        ]
    return [f"warning: redacted {len(hits)} secret(s) before writing {target}: {places}"]


def text_hits(text: str, findings: Sequence[Finding]) -> list[Hit]:
    """Hits of a whole file's text: the field is its line."""
    return [Hit(f"line {f.line(text)}", f.kind) for f in findings]


_BUILT_IN = Redactor()


def redacted(text: str) -> str:
    """`text` with every secret the built-in rules find replaced (no settings: for matching)."""
    return _BUILT_IN.text(text)


def excerpt(text: str, limit: int = 160) -> str:
    """One line of at most `limit` characters from the start of `text` (an error body, a CLI's
    output), redacted before it is cut: cut first, a token across the cut keeps its head and no
    rule knows it any more. Only the start is read, so a huge text costs what its head costs."""
    head = redacted(text[: limit * 8 + 2048])
    line = " ".join(head.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def project_redactor(root: Path) -> Redactor:
    """The redactor the settings ask for (memory.redact.allow / .enabled: the user's own, and the
    project's when the user trusted it; config.py)."""
    from legion_llm.config import load_settings
    from legion_llm.project import MemoryPaths

    settings = load_settings(MemoryPaths(root).settings)
    return Redactor(settings.redact_allow, enabled=settings.redact_enabled,
                    switched_off_by=settings.source("redact.enabled"))  # fmt: skip
