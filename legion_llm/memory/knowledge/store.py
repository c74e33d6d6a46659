"""Store Pattern / Store Error / Store Preference: validate, de-duplicate errors, locked append.

The error de-duplication (spec section 9 step 2) asks one function, `find_duplicate`, which
uses the deterministic signature matcher; the ambiguous band is settled by a `decide` callable
(offline rule by default; the LLM pipeline passes one that asks Claude).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from legion_llm.errors import InputError
from legion_llm.memory.files import (
    locked,
    read_problem,
    read_text_keeping,
    undecodable_refusal,
    write_or_fail,
)
from legion_llm.memory.gitinfo import current_branch
from legion_llm.memory.knowledge.read import (
    COLUMN_ALIASES,
    DECISION_POINTS,
    ERRORS,
    PATTERNS,
    PREFERENCES,
    SIGNALS,
    KnowledgeFile,
    KnowledgeKind,
    KnowledgeRecord,
    option_name,
    parse_knowledge,
)
from legion_llm.memory.redact import project_redactor, write_warning
from legion_llm.memory.signatures.confidence import DEPTH, answered
from legion_llm.memory.signatures.features import features
from legion_llm.memory.signatures.match import Candidate, Match, SignatureIndex
from legion_llm.memory.table import append_rows, encode_row
from legion_llm.project import MemoryPaths
from legion_llm.records import format_id, id_number, split_list

# (new signature, ranked close matches) -> (position of the same root cause or None, what
# decided: "exact", "fuzzy", "offline", "claude", ...)
Decide = Callable[[str, Sequence[Match]], tuple[int | None, str]]
_REQUIRED = {
    "patterns": ("pattern", "context", "reuse_criteria"),
    "errors": ("error_signature", "fix", "agent"),
    "preferences": ("decision_point", "context", "proposed", "user_choice", "signal", "agent"),
}


@dataclass
class StoredKnowledge:
    record: KnowledgeRecord
    action: str  # added | existing | updated
    row: str
    decided_by: str | None = None  # for a duplicate error: exact | fuzzy | offline | claude
    score: float | None = None  # the duplicate's match score
    warnings: list[str] = field(default_factory=list)
    close: str | None = None  # a stored error in the `confirm` band: not merged, named
    close_confidence: float | None = None


def validate(kind: KnowledgeKind, values: dict[str, str]) -> dict[str, str]:
    clean = {k: (v or "").strip() for k, v in values.items()}
    for column in _REQUIRED[kind.name]:
        if not clean.get(column):
            raise InputError(f"{option_name(column)} must not be empty")
    if kind is PREFERENCES:
        clean["decision_point"] = clean["decision_point"].lower()
        clean["signal"] = clean["signal"].lower()
        _one_of("decision-point", clean["decision_point"], DECISION_POINTS)
        _one_of("signal", clean["signal"], SIGNALS)
    if kind is ERRORS:
        _one_of("resolved", clean.get("resolved", "true").lower(), ("true", "false"))
        clean["resolved"] = clean.get("resolved", "true").lower()
    clean["tags"] = ", ".join(split_list(clean.get("tags", "")))
    return clean


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError(f"--{name} must be one of {', '.join(allowed)}, not {value!r}")


def candidates_of(records: list[KnowledgeRecord]) -> list[Candidate]:
    """Error table rows and learn-style pitfall entries as matcher candidates, one per ID."""
    by_id = {r.id: r for r in records if r.id}
    return [Candidate(r.id, r.title, r.values.get("fix", ""), r.resolved) for r in by_id.values()]


def offline_decider(signature: str, matches: Sequence[Match]) -> tuple[int | None, str]:
    """The calibrated confidence already said `fix` for the first match: it stands."""
    return (0, "confidence") if matches else (None, "none")


@dataclass(frozen=True)
class Placement:
    """Where a new error goes: into a stored entry (its duplicate), or a new entry, naming the
    close one when the confidence sat in the `confirm` band (never merged there)."""

    duplicate: tuple[KnowledgeRecord, Match, str] | None = None
    close: tuple[KnowledgeRecord, float] | None = None


def place(
    signature: str, existing: list[KnowledgeRecord], decide: Decide = offline_decider
) -> Placement:
    """Only a `fix` answer merges (an exact match at once; otherwise `decide` may still refuse:
    a model can stop a merge, never force one); a `confirm` stores a new entry and names the
    close one. Merging is for the same error: two texts that differ in a name deciding the fix
    (a table, a column, a package, a host, a port, a file: `kind=value` conflicts) are never
    merged, whatever the score; the stored one is named as close."""
    candidates = candidates_of(existing)
    if not candidates:
        return Placement()
    by_id = {r.id: r for r in existing if r.id}
    ranked = SignatureIndex(candidates).rank(signature, limit=DEPTH)
    found = answered(features(signature), ranked)
    if found.answer == "none":
        return Placement()
    best = found.matches[0]
    close = Placement(close=(by_id[best.candidate.key], found.confidence[0]))
    if found.answer == "confirm" or any("=" in key for key in best.conflicts):
        return close
    if best.exact:
        return Placement((by_id[best.candidate.key], best, "exact"))
    position, decided_by = decide(signature, [best])
    if position is None:
        return close
    return Placement((by_id[best.candidate.key], best, decided_by))


def find_duplicate(
    signature: str, existing: list[KnowledgeRecord], decide: Decide = offline_decider
) -> tuple[KnowledgeRecord, Match, str] | None:
    """The stored error with the same root cause as `signature`, the match, and what decided."""
    return place(signature, existing, decide).duplicate


def add_knowledge(
    paths: MemoryPaths,
    kind: KnowledgeKind,
    values: dict[str, str],
    *,
    today: date,
    branch: str | None = None,
    decide: Decide = offline_decider,
) -> StoredKnowledge:
    redactor = project_redactor(paths.root)
    clean, hits = redactor.values(validate(kind, values))
    clean["date"] = today.isoformat()
    clean["branch"] = branch or current_branch(paths.root)
    path = paths.memory_dir / kind.file_name
    if kind is PATTERNS:
        check_source(paths, clean.get("source", ""))
    with locked(paths.memory_dir, root=paths.root):
        current = read_for_write(kind, path)
        current.warnings.extend(write_warning(redactor, hits, kind.file_name))
        if kind is PATTERNS and (same := same_pattern(clean["pattern"], current.records)):
            return StoredKnowledge(same, "existing", "", warnings=current.warnings)
        close = None
        if kind is ERRORS:
            placed = place(clean["error_signature"], current.records, decide)
            if placed.duplicate is not None:
                return _resolve_duplicate(paths, current, placed.duplicate, clean)
            close = placed.close
        return _new_row(paths, current, clean, close)


def _new_row(
    paths: MemoryPaths,
    current: KnowledgeFile,
    clean: dict[str, str],
    close: tuple[KnowledgeRecord, float] | None,
) -> StoredKnowledge:
    """Append `clean` as the file's next row (under the caller's lock), naming a close entry."""
    kind = current.kind
    clean["id"] = format_id(kind.prefix, current.max_id() + 1)
    record = KnowledgeRecord(kind, clean, "table")
    assert current.doc is not None
    columns = current.table.columns if current.table else list(kind.columns)
    row = encode_row([_cell(clean, c) for c in columns])
    text = append_rows(current.doc, current.table, [row], template=kind.template)
    write_or_fail(current.path, text, root=paths.root, record_text=row, record=record.to_dict())
    stored = StoredKnowledge(record, "added", row, warnings=current.warnings)
    if close is not None:
        stored.close, stored.close_confidence = close[0].id, close[1]
    return stored


MAX_MERGED_FIX_CHARS = 2_000  # past it, the same error's next fix is a row of its own
_FIX_SEPARATOR = re.compile(r"; also(?: tried)?: | \(tried before: ")
_FIX_NOTE = re.compile(r"(?:, which did not resolve it\)?)+$")


def merged_fix(old: str, old_resolved: bool, new: str, new_resolved: bool) -> str:
    """The fix of a stored error that is stored again with `new`: both survive, each saying
    whether it resolved the error; a fix the stored one already holds (as a whole item, not a
    part of one: "timeout 30" is not "timeout 300") adds nothing."""
    if not old or _fix_key(new) in fix_items(old):
        return old or new
    if new_resolved and not old_resolved:
        return f"{new} (tried before: {old}, which did not resolve it)"
    if new_resolved:
        return f"{old}; also: {new}"
    return f"{old}; also tried: {new}, which did not resolve it"


def fix_items(fix: str) -> set[str]:
    """Each fix a merged fix holds, as compared (merged_fix's own separators and notes)."""
    return {_fix_key(_FIX_NOTE.sub("", item)) for item in _FIX_SEPARATOR.split(fix)}


def _fix_key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!;: ")


_OUTCOME_ID = re.compile(r"O-[0-9]+", re.IGNORECASE)


def check_source(paths: MemoryPaths, source: str) -> None:
    """A pattern's source (spec section 8: `O-{NNN}` or free text): each comma-separated item
    shaped like an outcome ID must name an outcome in OUTCOMES.md or ARCHIVE.md; free text is
    kept as written. InputError (nothing written) for an ID that names none."""
    from legion_llm.memory.outcomes.read import read_outcomes

    ids = [item for item in split_list(source) if _OUTCOME_ID.fullmatch(item)]
    if not ids:
        return
    known = {
        number
        for log in (paths.outcomes, paths.archive)
        for record in read_outcomes(log).records
        if (number := id_number(record.id)) is not None
    }
    missing = [item for item in ids if id_number(item) not in known]
    if missing:
        raise InputError(
            f"--source {', '.join(missing)}: no such outcome in OUTCOMES.md or ARCHIVE.md "
            "(name a stored outcome ID, or describe the source in words); nothing was written"
        )


def _pattern_key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!;: ")


def same_pattern(pattern: str, records: list[KnowledgeRecord]) -> KnowledgeRecord | None:
    """The stored pattern that says the same as `pattern` (case, spacing and a closing full stop
    aside): a second add of it is not a second row (as an error or a learning is not)."""
    key = _pattern_key(pattern)
    return next((r for r in records if r.id and _pattern_key(r.title) == key), None)


def _cell(values: dict[str, str], column: str) -> str:
    return values.get(COLUMN_ALIASES.get(column, column), "")


def read_for_write(kind: KnowledgeKind, path: Path) -> KnowledgeFile:
    """The file a store (or distill) is about to write into; InputError when it cannot be read
    (saying why) or holds a line that is not UTF-8 (a rewrite would change it)."""
    try:
        text = read_text_keeping(path)
    except OSError as exc:  # a link out of the root, a FIFO, no permission: say which
        raise InputError(f"{path.name} {read_problem(exc)}; nothing was written") from exc
    current = parse_knowledge(kind, path, text or "")
    if current.undecodable:
        raise InputError(undecodable_refusal(path.name, current.undecodable))
    if current.doc is None:  # pipes but no table of this kind: a rewrite could garble it
        raise InputError(f"{path.name} could not be parsed; fix it by hand before storing into it")
    return current


def _resolve_duplicate(
    paths: MemoryPaths,
    current: KnowledgeFile,
    duplicate: tuple[KnowledgeRecord, Match, str],
    new: dict[str, str],
) -> StoredKnowledge:
    """The same error stored again: no fix is lost. A fix the stored entry already holds changes
    nothing; another is added to the entry's (merged_fix), never put in its place."""
    record, match, decided_by = duplicate
    old = record.values.get("fix", "")
    now_resolved = new.get("resolved") == "true"
    fix = merged_fix(old, record.resolved, new["fix"], now_resolved)
    if fix == old and (record.resolved or not now_resolved):
        return StoredKnowledge(record, "existing", "", decided_by, match.score, current.warnings)
    too_long = len(fix) > MAX_MERGED_FIX_CHARS
    if record.format == "learn" or record.table is None or too_long:  # a row of its own
        return _new_row(paths, current, new, close=(record, match.score))
    assert current.doc is not None and record.line_no is not None
    resolved = "true" if record.resolved or new.get("resolved") == "true" else "false"
    updated = dict(record.values, fix=fix, resolved=resolved)
    columns = record.table.columns
    row = encode_row([_cell(updated, c) for c in columns])
    lines = list(current.doc.lines)
    lines[record.line_no] = row + current.doc.newline
    result = KnowledgeRecord(record.kind, updated, "table", record.line_no)
    write_or_fail(
        current.path, "".join(lines), root=paths.root, record_text=row, record=result.to_dict()
    )
    return StoredKnowledge(result, "updated", row, decided_by, match.score, current.warnings)
