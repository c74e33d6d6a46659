"""Mission learnings: `.mission-control/memory/*.md`, one learning per file (or several per file).

Reads every variant mission-control writes (upstream-notes section 13): block and flow-style
`tags`, a comma string of tags, `source: mission/<id>`, `extractedAt` as a date or a datetime,
per-category files (`gotchas.md`) holding several `# Title` learnings under one frontmatter or
under repeated frontmatter blocks, and a title without `#`. A file missing a required field (or
holding an unknown category or confidence) gets one warning and is skipped, and so does one whose
frontmatter holds a YAML alias or is nested or sized past the bounds of memory/untrusted.py;
nothing here raises on a bad file.

Writing, naming and reinforcing live in `learnings_write.py`; loading for a goal within a token
budget (the "Project Learnings" section) in `learnings_load.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from legion_llm.memory.files import read_problem, read_text
from legion_llm.memory.untrusted import UntrustedInputError, load_yaml

CATEGORIES = ("pattern", "gotcha", "architecture", "tooling", "prompt")
CONFIDENCES = ("low", "medium", "high")
REQUIRED = ("tags", "source", "extractedAt", "confidence", "category")
# fmt: off
VAGUE_TAGS = frozenset({
    "code", "misc", "general", "stuff", "things", "other", "notes", "note", "learning",
    "learnings", "mission", "missions", "bug", "bugs", "issue", "issues", "fix", "fixes", "tips",
    "todo", "various", "project", "important", "lesson", "lessons", "work", "task", "tasks",
})
# fmt: on
TAG_RE = re.compile(r"^[a-z0-9][a-z0-9.+#_-]{0,39}$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$")


@dataclass
class Learning:
    """One learning. `file` is its file name in the memory folder; `doc`/`section` locate it."""

    title: str
    body: str
    tags: list[str]
    source: str
    extracted_at: str
    confidence: str
    category: str
    file: str = ""
    doc: int = 0
    section: int = 0
    shares_file: bool = False  # other learnings share this file's frontmatter

    @property
    def mission_id(self) -> str:
        """`mission/<id>` and `<id>` name the same mission."""
        return self.source.removeprefix("mission/").strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "title": self.title,
            "category": self.category,
            "tags": list(self.tags),
            "confidence": self.confidence,
            "extracted_at": self.extracted_at,
            "source": self.source,
        }


@dataclass
class Section:
    title: str
    body: str
    raw: str  # the text as read; written back unchanged unless the section changed
    changed: bool = False


@dataclass
class Doc:
    meta: dict[str, Any]
    raw_meta: str
    preamble: str | None
    sections: list[Section]
    changed: bool = False


@dataclass
class LearningFile:
    name: str
    docs: list[Doc]
    crlf: bool = False
    original: str = ""  # the text as read: a rewrite refuses a file that changed since


@dataclass
class LearningSet:
    learnings: list[Learning] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: dict[str, LearningFile] = field(default_factory=dict)


# ---------------------------------------------------------------- reading


def read_learnings(folder: Path) -> LearningSet:
    """Every `*.md` in the folder, sorted by name. A missing folder is an empty set, silently."""
    result = LearningSet()
    if not folder.is_dir():
        return result
    for path in sorted(folder.glob("*.md")):
        try:
            text = read_text(path) or ""
        except (OSError, UnicodeDecodeError) as exc:
            result.warnings.append(_warning(path.name, read_problem(exc)))
            continue
        parsed, problem = parse_learning_file(path.name, text)
        if problem:
            result.warnings.append(_warning(path.name, problem))
            continue
        result.files[path.name] = parsed
        result.learnings.extend(learnings_of(parsed))
    return result


def _warning(name: str, problem: str) -> str:
    return f"Warning: .mission-control/memory/{name} {problem}; skipped."


def parse_learning_file(name: str, text: str) -> tuple[LearningFile, str | None]:
    """(parsed file, None) or (empty file, what is wrong with it)."""
    crlf = "\r\n" in text
    lines = text.replace("\r\n", "\n").split("\n")
    docs: list[Doc] = []
    problems: list[str] = []
    for meta_text, body in _split_docs(lines):
        meta, refused = _load_meta(meta_text)
        if meta is None:
            problems.append(refused or "has no readable YAML frontmatter")
            continue
        problems.extend(_meta_problems(meta))
        docs.append(Doc(meta, meta_text, *_sections(body)))
    if not docs and not problems:
        problems.append("has no YAML frontmatter")
    if not problems and not any(doc.sections for doc in docs):
        problems.append("has no learning text")
    if problems:
        return LearningFile(name, []), "; ".join(dict.fromkeys(problems))
    return LearningFile(name, docs, crlf, text), None


def _split_docs(lines: list[str]) -> list[tuple[str, list[str]]]:
    """[(frontmatter text, body lines)] for each `---` block holding YAML keys."""
    starts: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "---" and (i == 0 or _is_front(lines, i)):
            end = _closing(lines, i)
            if end is not None:
                starts.append((i, end))
                i = end + 1
                continue
        i += 1
    docs = []
    for n, (start, end) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        docs.append(("\n".join(lines[start + 1 : end]), lines[end + 1 : stop]))
    if starts and any(line.strip() for line in lines[: starts[0][0]]):
        return []  # text before the first frontmatter: not a learning file we understand
    return docs


def _closing(lines: list[str], start: int) -> int | None:
    for j in range(start + 1, min(len(lines), start + 40)):
        if lines[j].strip() == "---":
            return j
    return None


def _is_front(lines: list[str], i: int) -> bool:
    """A later `---` opens another frontmatter only when YAML keys of a learning follow it."""
    end = _closing(lines, i)
    if end is None:
        return False
    meta, _ = _load_meta("\n".join(lines[i + 1 : end]))
    return meta is not None and bool({"tags", "category", "confidence", "source"} & meta.keys())


def _load_meta(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the frontmatter mapping or None, why it was refused: an alias, too deep, too large)."""
    try:
        loaded = load_yaml(text) if text.strip() else None
    except UntrustedInputError as exc:
        return None, str(exc)
    except yaml.YAMLError:
        return None, None
    return (loaded if isinstance(loaded, dict) else None), None


def _meta_problems(meta: dict[str, Any]) -> list[str]:
    missing = [key for key in REQUIRED if meta.get(key) in (None, "")]
    problems = [f"is missing {', '.join(missing)}"] if missing else []
    category = str(meta.get("category") or "").strip().lower()
    if category and category not in CATEGORIES:
        problems.append(f"has an unknown category {category!r}")
    confidence = str(meta.get("confidence") or "").strip().lower()
    if confidence and confidence not in CONFIDENCES:
        problems.append(f"has an unknown confidence {confidence!r}")
    return problems


def _sections(body: list[str]) -> tuple[str | None, list[Section]]:
    """(preamble, sections): one section per `# Title`; no `#` at all: the first line is the title.

    Joining the preamble and the sections' raw text with newlines gives back the body exactly."""
    heads = _h1_lines(body)
    if not heads:
        raw = "\n".join(body)
        first, _, rest = raw.strip().partition("\n")
        title = first.strip().strip("*_").strip()
        return None, [Section(title, rest.strip(), raw)] if title else []
    preamble = "\n".join(body[: heads[0]]) if heads[0] else None
    sections = []
    for n, start in enumerate(heads):
        stop = heads[n + 1] if n + 1 < len(heads) else len(body)
        match = _H1.match(body[start])
        assert match is not None
        raw = "\n".join(body[start:stop])
        sections.append(Section(match.group(1), "\n".join(body[start + 1 : stop]).strip(), raw))
    return preamble, sections


def _h1_lines(body: list[str]) -> list[int]:
    heads, fenced = [], False
    for i, line in enumerate(body):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _H1.match(line):
            heads.append(i)
    return heads


def learnings_of(parsed: LearningFile) -> list[Learning]:
    count = sum(len(doc.sections) for doc in parsed.docs)
    out = []
    for d, doc in enumerate(parsed.docs):
        meta = doc.meta
        for s, section in enumerate(doc.sections):
            title = str(meta["title"]) if meta.get("title") and count == 1 else section.title
            out.append(
                Learning(
                    title, section.body, tag_list(meta.get("tags")), str(meta["source"]).strip(),
                    timestamp_text(meta["extractedAt"]),
                    str(meta["confidence"]).strip().lower(), str(meta["category"]).strip().lower(),
                    parsed.name, d, s, len(doc.sections) > 1,
                )
            )  # fmt: skip
    return out


def tag_list(value: Any) -> list[str]:
    """Block or flow list, or a comma string -> trimmed tags."""
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        items = []
    return [str(item).strip() for item in items if str(item).strip()]


def timestamp_text(value: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value).strip()


def parse_timestamp(text: str) -> datetime:
    """An extractedAt value -> aware datetime (naive and date-only read as UTC); unparseable: min."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


# ---------------------------------------------------------------- validating


def tag_problems(tags: list[str]) -> list[str]:
    """Why a tag list breaks the rules (2-5 lowercase, specific tags), or []."""
    problems = []
    if not 2 <= len(tags) <= 5:
        problems.append(f"needs 2-5 tags, not {len(tags)}")
    for tag in tags:
        if tag != tag.lower():
            problems.append(f"tag {tag!r} is not lowercase")
        elif not TAG_RE.match(tag):
            problems.append(f"tag {tag!r} is not a single lowercase word or kebab-case name")
        elif tag in VAGUE_TAGS:
            problems.append(f"tag {tag!r} is too vague to match a mission goal")
    if len(set(tags)) != len(tags):
        problems.append("tags repeat")
    return problems
