"""Small markdown readers the facts model needs: list items, table rows, sentences, sections."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from legion_llm.memory.phases.extract import PlanFacts, Section, sections, split_frontmatter
from legion_llm.memory.table import parse_markdown

_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'*])")


def clean_inline(text: str) -> str:
    """Drop checkbox, bold markers, a `Task N:` prefix and a trailing `(done)`."""
    text = re.sub(r"^\[[ xX]\]\s*", "", text.strip())
    text = _outside_code(text, lambda part: part.replace("**", ""))  # `a/**/b` is code
    text = text.replace("✓ ", "").replace("✔ ", "")
    text = re.sub(r"^Task\s+\d+\s*:\s*", "", text)
    text = re.sub(r"\s*\((?:done|complete)\)$", "", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`text` with `change` applied to what lies outside backtick spans only."""
    parts = re.split(r"(`[^`\n]*`)", text)
    return "".join(part if part.startswith("`") and part.endswith("`") and len(part) > 1
                   else change(part) for part in parts)  # fmt: skip


def _fenced(lines: tuple[str, ...]) -> list[tuple[str, bool]]:
    """Each line with whether it is inside (or opens/closes) a fenced block."""
    marked = []
    inside = False
    for line in lines:
        fence = line.lstrip().startswith("```")
        marked.append((line, inside or fence))
        if fence:
            inside = not inside
    return marked


def items(section: Section) -> list[str]:
    """Top-level list items (nested items joined to their parent) and prose paragraphs."""
    found: list[list[str]] = []
    paragraph: list[str] = []
    current: list[str] | None = None

    def flush() -> None:
        if paragraph:
            found.append([" ".join(paragraph)])
            paragraph.clear()

    for line, fenced in _fenced(section.lines):
        stripped = line.strip().lstrip(">").strip()
        if fenced or not stripped or stripped.startswith("|"):
            flush()
            if fenced or stripped.startswith("|"):
                current = None
            continue
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            if not bullet.group(1) or current is None:
                current = [clean_inline(bullet.group(2))]
                found.append(current)
            else:
                current.append(clean_inline(bullet.group(2)))
        elif current is not None and line[:1] in (" ", "\t"):
            current[-1] += " " + stripped
        else:
            current = None
            paragraph.append(stripped)
    flush()
    return [_join(parts) for parts in found if clean_inline(parts[0]) or len(parts) > 1]


def _join(parts: list[str]) -> str:
    head = clean_inline(parts[0])
    if len(parts) == 1:
        return head
    return f"{head.rstrip(':')}: " + "; ".join(p.rstrip(".") for p in parts[1:] if p)


def table_rows(section: Section) -> list[dict[str, str]]:
    """Rows (cells keyed by column) of the tables in the section, outside fenced blocks."""
    lines = [line if not fenced else "" for line, fenced in _fenced(section.lines)]
    doc = parse_markdown("\n".join(lines) + "\n")
    return [cells for table in doc.tables for _, cells in doc.rows(table)]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def first_clause(text: str) -> str:
    """The first sentence, cut further at ` — ` or `; ` when it has one."""
    first = sentences(text)[0] if text.strip() else ""
    for mark in (" — ", "; "):
        head = first.split(mark, 1)[0]
        if head and len(head) >= 12:
            first = head
    return first.rstrip(".").strip()


_CUT_POINTS = (re.compile(r"(?<=[.!?])\s+|;\s+"), re.compile(r",\s+|\s[—–-]\s|:\s+"))


def cut_to(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters, else cut at the last sentence end (or `; `)
    that fits; failing that at the last clause mark, failing that at a word: never mid-word
    (so never inside a token a redaction rule must see whole), never with a dangling mark; a
    first word longer than the limit is no text (empty)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    for marks in _CUT_POINTS:
        ends = [m.start() for m in marks.finditer(head) if m.start() >= limit // 3]
        if ends:
            return head[: ends[-1]].rstrip(" ,;:—–-")
    return head.rsplit(" ", 1)[0].rstrip(" ,;:—–-") if " " in head else ""


@dataclass(frozen=True)
class PlanParts:
    """One plan summary split into its frontmatter lines and sections."""

    facts: PlanFacts
    frontmatter: tuple[str, ...]
    sections: tuple[Section, ...]

    @classmethod
    def of(cls, facts: PlanFacts, text: str) -> PlanParts:
        frontmatter, body = split_frontmatter(text)
        return cls(facts, tuple(frontmatter), tuple(sections(body)))

    @property
    def text(self) -> str:
        """The frontmatter and body lines (headings left out) as one text."""
        return "\n".join([*self.frontmatter, *(line for s in self.sections for line in s.lines)])

    def matching(self, words: tuple[str, ...]) -> Iterator[Section]:
        """Sections below the title whose heading contains one of `words`."""
        return (
            s for s in self.sections if s.level > 1 and any(w in s.title.lower() for w in words)
        )
