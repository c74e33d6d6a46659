"""Writing mission learnings: safe generated names, rendering, new files, reinforcement in place.

File names are generated from the title (ASCII kebab-case, no separators), the target is checked
to sit directly inside the memory folder, and `atomic_write` refuses anything outside the project
root. A title such as `../../x` or `/etc/passwd` becomes `x.md` or `etc-passwd.md` in the folder.

Reinforcement (learning-extraction "Deduplication"): the same topic seen again in another mission
updates the existing learning instead of adding a file: `source` becomes the new mission,
`extractedAt` the new time, confidence goes up one step (medium -> high on the second
confirmation), tags are merged, and the body keeps its text, gaining only the sentences of the new
body that name something it did not name yet. The same mission seen twice changes nothing. A
learning inside a per-category file shares its frontmatter with the others (see `reinforce`).
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from legion_llm.errors import InputError, WriteFailedError
from legion_llm.memory.files import atomic_write, ensure_inside, locked, or_print, read_text
from legion_llm.memory.learnings.read import (
    CATEGORIES,
    CONFIDENCES,
    REQUIRED,
    Learning,
    LearningFile,
    read_learnings,
    tag_list,
    tag_problems,
    timestamp_text,
)
from legion_llm.memory.redact import project_redactor, text_hits, write_warning
from legion_llm.memory.signatures.topics import identifiers
from legion_llm.memory.table import normalise_breaks

CONFIDENCE_UP = {"low": "medium", "medium": "high", "high": "high"}
MAX_TAGS = 5
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


def _starts_another(line: str) -> bool:
    """A line the reader takes as the start of a learning: a `# Title` or a frontmatter fence."""
    return (
        line.startswith("# ")
        or line.rstrip() in ("#",)
        or re.fullmatch(r"-{3,}\s*", line) is not None
    )


def validate_new(learning: Learning) -> Learning:
    """Check a learning about to be written; returns it cleaned, raises InputError otherwise."""
    clean = replace(
        learning,
        title=" ".join(learning.title.split()),  # every kind of line break folds to a space
        body=normalise_breaks(learning.body).strip(),
        tags=[t.strip() for t in learning.tags if t.strip()],
        source=normalise_breaks(learning.source).strip() or "manual",
        category=learning.category.strip().lower(),
        confidence=learning.confidence.strip().lower(),
    )
    problems = tag_problems(clean.tags)
    if clean.category not in CATEGORIES:
        problems.append(f"category must be one of {', '.join(CATEGORIES)}")
    if clean.confidence not in CONFIDENCES:
        problems.append(f"confidence must be one of {', '.join(CONFIDENCES)}")
    if not clean.title or len(clean.title) > 120:
        problems.append("title must be one line of 1-120 characters")
    if not clean.body:
        problems.append("body must not be empty")
    if any(_starts_another(line) for line in clean.body.split("\n")):
        problems.append(
            "body must not hold a '# ' heading or '---' line (either starts another learning)"
        )
    if "\n" in clean.source or len(clean.source) > 120:
        problems.append("source must be one short line")
    if problems:
        raise InputError("invalid learning: " + "; ".join(problems))
    return clean


# ---------------------------------------------------------------- names and text


_DANGLING = frozenset("a an the and or but to of in on at by for from with that so as".split())  # noqa: SIM905


def drop_dangling(words: list[str]) -> list[str]:
    """Words without a trailing article or preposition (a cut title or name must not end on one)."""
    words = list(words)
    while len(words) > 2 and words[-1].lower() in _DANGLING:
        words.pop()
    return words


# Names Windows keeps for devices, with any extension: `con.md` cannot be checked out there.
WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul", *(f"{port}{n}" for port in ("com", "lpt") for n in range(10))]
)


def slug(title: str, limit: int = 60) -> str:
    """A safe kebab-case file stem: ASCII letters and digits joined by `-`, never a path, never
    a Windows device name (`CON` becomes `con-learning`)."""
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    stem = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(stem) > limit:
        stem = "-".join(drop_dangling(stem[: limit + 1].split("-")[:-1] or [stem[:limit]]))
    if stem in WINDOWS_DEVICES:
        stem += "-learning"
    return stem or "learning"


def free_name(folder: Path, title: str) -> str:
    """`<slug>.md`, or `<slug>-2.md`, `-3`, ... when taken (case-insensitively)."""
    taken = {p.name.lower() for p in folder.iterdir()} if folder.is_dir() else set()
    stem = slug(title)
    name, n = f"{stem}.md", 2
    while name.lower() in taken:
        name, n = f"{stem}-{n}.md", n + 1
    return name


def _scalar(value: str) -> str:
    """A YAML scalar that reads back as the same string."""
    dumped = yaml.safe_dump(value, default_flow_style=True, width=1000).strip()
    return dumped.removesuffix("...").strip()


def _timestamp(value: str) -> str:
    """ISO-8601 dates and datetimes unquoted, as mission-control writes them."""
    iso = re.fullmatch(
        r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?)?", value
    )
    return value if iso else _scalar(value)


def render_meta(learning: Learning, extra: dict[str, Any] | None = None) -> str:
    lines = ["tags:", *(f"  - {_scalar(tag)}" for tag in learning.tags)]
    lines += [
        f"source: {_scalar(learning.source)}",
        f"extractedAt: {_timestamp(learning.extracted_at)}",
        f"confidence: {learning.confidence}",
        f"category: {learning.category}",
    ]
    for key, value in (extra or {}).items():
        lines.append(yaml.safe_dump({key: value}, default_flow_style=True, width=1000).strip())
    return "\n".join(lines)


def render_learning(learning: Learning) -> str:
    return f"---\n{render_meta(learning)}\n---\n\n# {learning.title}\n\n{learning.body.strip()}\n"


def render_file(parsed: LearningFile) -> str:
    """The file's text; unchanged frontmatter and sections are written back exactly as read."""
    parts = []
    for doc in parsed.docs:
        meta = _dump_meta(doc.meta) if doc.changed else doc.raw_meta
        body = [] if doc.preamble is None else [doc.preamble]
        for section in doc.sections:
            if not section.changed:
                body.append(section.raw)
            elif section.raw.lstrip().startswith("#"):
                body.append(f"# {section.title}\n\n{section.body}\n")
            else:
                body.append(f"\n{section.title}\n\n{section.body}\n")
        parts.append(f"---\n{meta}\n---\n" + "\n".join(body))
    text = "\n".join(parts)
    return text.replace("\n", "\r\n") if parsed.crlf else text


def _dump_meta(meta: dict[str, Any]) -> str:
    known = Learning("", "", tag_list(meta.get("tags")), str(meta.get("source", "")),
                     timestamp_text(meta.get("extractedAt", "")), str(meta.get("confidence", "")),
                     str(meta.get("category", "")))  # fmt: skip
    extra = {k: v for k, v in meta.items() if k not in REQUIRED}
    return render_meta(known, extra)


# ---------------------------------------------------------------- writing


def write_new(
    folder: Path,
    root: Path,
    learning: Learning,
    warnings: list[str] | None = None,
    *,
    lock: bool = True,
) -> Learning:
    """Write one learning as a new file with a generated name; returns it with `file` set. A write
    that fails raises WriteFailedError holding the file's text (the CLI prints it, exit 3).
    `lock=False`: the caller already holds the folder's lock (see `locked`). Secrets in it are
    redacted first (the title too, so never in the file name); what was redacted is added to
    `warnings`."""
    redactor = project_redactor(root)
    redacted, hits = redactor.record(learning)
    clean = validate_new(redacted)
    text = render_learning(clean)
    failure = f"could not write a learning in {folder}"
    held = locked(folder, root=root) if lock else contextlib.nullcontext()
    with or_print(failure, text, {"learning": clean.to_dict()}), held:
        name = free_name(folder, clean.title)
        target = ensure_inside(folder / name, folder)
        atomic_write(target, text, root=root)
    if warnings is not None:
        warnings += write_warning(redactor, hits, f".mission-control/memory/{name}")
    return replace(clean, file=name, doc=0, section=0, shares_file=False)


def rewrite(
    folder: Path,
    root: Path,
    parsed: LearningFile,
    warnings: list[str] | None = None,
    *,
    lock: bool = True,
) -> None:
    """Write a (reinforced) learning file back to its own place in the folder, unless another
    writer changed it since it was read (then nothing is written and the new text is printed).
    `lock=False`: the caller already holds the folder's lock."""
    target = ensure_inside(folder / Path(parsed.name).name, folder)
    redactor = project_redactor(root)
    rendered = render_file(parsed)
    done = redactor.redact(rendered)
    text = done.text
    if warnings is not None:
        hits = text_hits(rendered, done.findings)
        warnings += write_warning(redactor, hits, f".mission-control/memory/{parsed.name}")
    with locked(folder, root=root) if lock else contextlib.nullcontext():
        if (read_text(target, root=root) or "") != parsed.original:
            raise WriteFailedError(
                f".mission-control/memory/{parsed.name} changed while learnings were extracted; "
                "nothing was written to it (run the extraction again)",
                record_text=text,
            )
        atomic_write(target, text, root=root)


# ---------------------------------------------------------------- reinforcement


@dataclass(frozen=True)
class Reinforcement:
    learning: Learning
    changes: tuple[str, ...]


def merge_tags(existing: list[str], new: list[str], *, cap: int = MAX_TAGS) -> list[str]:
    merged = list(existing)
    for tag in new:
        if tag.lower() not in {t.lower() for t in merged} and len(merged) < cap:
            merged.append(tag)
    return merged


def new_facts(existing_body: str, new_body: str) -> list[str]:
    """Sentences of `new_body` naming an identifier (path, command, flag, code) the old body lacks."""
    known = existing_body.lower()
    facts = []
    for sentence in _SENTENCE.split(" ".join(new_body.split())):
        names = identifiers(sentence)
        if names and any(name.lower() not in known for name in names):
            facts.append(sentence.strip())
    return facts[:3]


def confirmed_by(existing: Learning, source: str) -> bool:
    """Has `source` already given (or confirmed) this learning? Its source field says so; for a
    learning sharing its file's frontmatter, also the "... again in <source>" line of its section."""
    mission = source.removeprefix("mission/").strip()
    if existing.mission_id == mission:
        return True
    return existing.shares_file and f"again in {mission}" in existing.body


def reinforce(
    existing: Learning, *, source: str, extracted_at: str, tags: list[str], body: str
) -> Reinforcement | None:
    """The existing learning confirmed by `source`; None when that mission already confirmed it.

    A learning in a per-category file shares the file's frontmatter with its neighbours (as
    /debrief writes them): the frontmatter keeps the source that wrote the file, its tags and its
    confidence (raising it would raise every neighbour's), only extractedAt changes, and the
    learning's own section records the confirmation ("Confirmed again in <source>"), which is what
    later runs check."""
    if confirmed_by(existing, source):
        return None
    mission = source.removeprefix("mission/").strip()
    up = CONFIDENCE_UP.get(existing.confidence, existing.confidence)
    confidence = existing.confidence if existing.shares_file else up
    merged = existing.tags if existing.shares_file else merge_tags(existing.tags, tags)
    facts = new_facts(existing.body, body)
    text = existing.body
    if facts:
        text = f"{existing.body.rstrip()}\n\nSeen again in {mission}: {' '.join(facts)}"
    elif existing.shares_file:
        text = f"{existing.body.rstrip()}\n\nConfirmed again in {mission}."
    changes = ["extractedAt"] if existing.shares_file else ["source", "extractedAt"]
    if confidence != existing.confidence:
        changes.append(f"confidence {existing.confidence} -> {confidence}")
    added = [t for t in merged if t not in existing.tags]
    if added:
        changes.append("tags + " + ", ".join(added))
    if text != existing.body:
        changes.append(f"body + {len(facts)} fact(s)" if facts else "body + confirmation")
    new_source = existing.source if existing.shares_file else source
    updated = replace(existing, source=new_source, extracted_at=extracted_at,
                      confidence=confidence, tags=merged, body=text)  # fmt: skip
    return Reinforcement(updated, tuple(changes))


def apply(parsed: LearningFile, updated: Learning) -> None:
    """Put an updated learning into its parsed file (frontmatter and its section)."""
    doc = parsed.docs[updated.doc]
    doc.meta = dict(doc.meta, tags=list(updated.tags), source=updated.source,
                    extractedAt=updated.extracted_at, confidence=updated.confidence)  # fmt: skip
    doc.changed = True
    section = doc.sections[updated.section]
    if section.body != updated.body:
        section.body = updated.body
        section.changed = True


# ---------------------------------------------------------------- one learning added by hand


@dataclass(frozen=True)
class Added:
    action: str  # added | reinforced | existing
    learning: Learning
    changes: tuple[str, ...] = ()


def _same_text(a: Learning, b: Learning) -> bool:
    """The same title (any case, any spacing) and the same body (any spacing)."""
    return " ".join(a.title.split()).casefold() == " ".join(
        b.title.split()
    ).casefold() and " ".join(a.body.split()) == " ".join(b.body.split())


def add_learning(
    folder: Path, root: Path, learning: Learning, warnings: list[str] | None = None
) -> Added:
    """`learnings add`: a new file, unless a learning with the same title and body is stored;
    then that one is reinforced by this source (see `reinforce`), or left as it is when this
    source already gave it. Decided and written under the folder's lock."""
    clean = validate_new(project_redactor(root).record(learning)[0])  # bad input: nothing written
    failure = f"could not write a learning in {folder}"
    with or_print(failure, render_learning(clean), {"learning": clean.to_dict()}):
        return _add_locked(folder, root, learning, clean, warnings)


def _add_locked(
    folder: Path, root: Path, learning: Learning, clean: Learning, warnings: list[str] | None
) -> Added:
    with locked(folder, root=root):
        current = read_learnings(folder)
        same = next((item for item in current.learnings if _same_text(item, clean)), None)
        if same is None:
            return Added("added", write_new(folder, root, learning, warnings, lock=False))
        done = reinforce(same, source=clean.source, extracted_at=clean.extracted_at,
                         tags=clean.tags, body=clean.body)  # fmt: skip
        if done is None:
            return Added("existing", same)
        apply(current.files[same.file], done.learning)
        rewrite(folder, root, current.files[same.file], warnings, lock=False)
        return Added("reinforced", done.learning, done.changes)
