"""The one redaction step: find secrets in a text and replace each by `[REDACTED:<kind>]`.

Every memory write and every engine request passes its text through a `Redactor`. Only the
secret's own characters change (`postgres://app:[REDACTED:password]@db:5432/ledger`); text with
no secret comes back identical, and redacting twice gives what redacting once gave (a marker is
never a secret, and nothing overlapping one is). Findings never carry the value: a kind and a
place only.
"""

from __future__ import annotations

import bisect
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
        """Its line number (for one finding; many findings of one text: `Lines`)."""
        return text.count("\n", 0, self.start) + 1


_NEWLINE = re.compile("\n")


class Lines:
    """Line numbers of many places in one text, in log time each (counting from the start for
    each of them was quadratic in the number of secrets of a large file)."""

    def __init__(self, text: str) -> None:
        self.breaks = [found.start() for found in _NEWLINE.finditer(text)]

    def of(self, finding: Finding) -> int:
        return bisect.bisect_left(self.breaks, finding.start) + 1


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
        random_part = found["body"] if "body" in rule.pattern.groupindex else value
        if rule.min_entropy and entropy(random_part) < rule.min_entropy:
            continue
        if rule.min_classes and not _mixes(random_part, rule.min_classes):
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


_KEYWORDS = tuple(sorted({keyword for rule in RULES for keyword in rule.keywords}))
_RULE_KEYWORDS = tuple((rule, frozenset(rule.keywords)) for rule in RULES)


def rules_for(low: str) -> list[Rule]:
    """The rules one of whose keywords `low` (lower-cased text) holds, in their order: each
    keyword is looked for once per text, not once per rule that has it."""
    present = {keyword for keyword in _KEYWORDS if keyword in low}
    if not present:
        return []
    return [rule for rule, keywords in _RULE_KEYWORDS if not keywords.isdisjoint(present)]


def _wrapped_spans(text: str) -> Iterator[Span]:
    for found in _WRAPPED.finditer(text):
        left, right = found[1], found[2]
        rules = rules_for(left.lower())
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


class _Placer:
    """Places findings of the text with `earlier` (sorted, disjoint) replaced by their markers
    back in the original text, in log time each (a finding never overlaps a marker, so each of
    its ends lies before or after every one)."""

    def __init__(self, earlier: Sequence[Finding]) -> None:
        self.ends: list[int] = []  # where each marker ends in the replaced text
        self.shifts: list[int] = []  # how much longer the text up to there became
        shift = 0
        for prior in earlier:
            size = len(marker(prior.kind))
            self.ends.append(prior.start + shift + size)
            shift += size - (prior.end - prior.start)
            self.shifts.append(shift)

    def back(self, position: int) -> int:
        index = bisect.bisect_right(self.ends, position)
        return position - (self.shifts[index - 1] if index else 0)

    def place(self, item: Finding) -> Finding:
        return Finding(item.kind, self.back(item.start), self.back(item.end))


class _Spans:
    """Spans (the allow matches), asked whether one of them holds a range, in log time."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [a for a, _ in ordered]
        self.reach: list[int] = []  # the furthest end of any span starting at or before each
        furthest = -1
        for _, b in ordered:
            furthest = max(furthest, b)
            self.reach.append(furthest)

    def covers(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self.starts, start)
        return index > 0 and self.reach[index - 1] >= end


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
        yield from _wrapped_spans(text)
        for rule in rules_for(text.lower()):
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
            placer = _Placer(found)
            found = sorted(found + [placer.place(f) for f in new], key=lambda f: f.start)
        return found

    def _find_once(self, text: str) -> list[Finding]:
        """One pass: every candidate that overlaps no marker and no earlier (more specific)
        candidate, and lies inside no allow match. Linear in the number of candidates: the
        characters taken are marked in a bytearray, the allow matches bisected."""
        if not text:
            return []
        taken = bytearray(len(text))
        for found_marker in MARKER.finditer(text):
            a, b = found_marker.span()
            taken[a:b] = b"\x01" * (b - a)
        kept = _Spans(m.span() for pattern in self.allow for m in pattern.finditer(text))
        found: list[Finding] = []
        for kind, start, end in self.candidates(text):
            if start >= end or taken.find(1, start, end) >= 0 or kept.covers(start, end):
                continue
            taken[start:end] = b"\x01" * (end - start)
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
    lines = Lines(text) if findings else None
    return [Hit(f"line {lines.of(f)}", f.kind) for f in findings if lines]


_BUILT_IN = Redactor()


def redacted(text: str) -> str:
    """`text` with every secret the built-in rules find replaced (no settings: for matching)."""
    return _BUILT_IN.text(text)


def redacted_data(value: Any) -> Any:
    """Every string in a report (lists and dicts, nested) with the built-in rules applied: what
    a command prints or returns about a model's answer never repeats a secret in it."""
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, list | tuple):
        return [redacted_data(v) for v in value]
    if isinstance(value, dict):
        return {k: redacted_data(v) for k, v in value.items()}
    return value


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
