"""What a plan summary offers as a reusable pattern, extracted once (the distillation's sources).

A one-line outcome says how a plan ended; what worked is written in the plan's summary. Per
summary (`summary_source`), the candidates are, in this order:

- `established`: every entry of a `patterns-established:` frontmatter list (any spelling:
  `patterns_established`, block or flow style, quoted or not), taken whole: the summary declares
  them reusable, so recall comes first and no prose filter applies;
- `marked`: what the summary itself marks as reusable in prose: the items of a Patterns /
  Key Patterns / Lessons Learned / Conventions section, and a `**Conventions established**:` or
  `**Patterns established**:` line;
- `decision`: each key decision (statements.py: a Decisions section or table, a `key-decisions:`
  list), only when the plan succeeded, and only when it says something (not "followed the plan");
- `deviation`: a deviation that was fixed (a `Fix:` line) in a plan that succeeded: the fix held.

Free prose is filtered for precision (`is_status`, `is_file_list`, a minimum of content); a
declared entry is not. Every text is an excerpt of the summary, inline markup cleaned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from legion_llm.errors import LegionError
from legion_llm.memory.entities import new_entities
from legion_llm.memory.files import read_text
from legion_llm.memory.phases.extract import plan_facts, split_frontmatter
from legion_llm.memory.phases.find import Phase, find_phase, folder_slug
from legion_llm.memory.phases.markdown import PlanParts, clean_inline, items
from legion_llm.memory.phases.paths import find_paths
from legion_llm.memory.phases.planning import phase_key
from legion_llm.memory.phases.statements import (
    NO_CHECK,
    CheckFact,
    is_content,
    is_none,
    plan_statements,
)
from legion_llm.memory.terms import content_terms

ESTABLISHED = "established"
MARKED = "marked"
DECISION = "decision"
DEVIATION = "deviation"

_ESTABLISHED_KEY = re.compile(r"^patterns?[-_ ]?established\s*:(.*)$", re.IGNORECASE)
_MARKED_HEADINGS = ("pattern", "lesson", "convention", "reusable", "what worked")
_MARKED_LINE = re.compile(
    r"^\s*(?:[-*+]\s*)?\*\*(?:conventions?|patterns?)\s+established:?\*\*\s*:?\s*(.+)$", re.I
)
_NOT_REUSABLE = re.compile(
    r"^(?:followed (?:the )?plan|none\b|n/?a\b|no (?:deviations|decisions)|as (?:planned|specified))",
    re.I,
)
_FIX = re.compile(r"\bFix(?:ed)?\s*:\s*(.+?)(?:;\s*(?:Files?|Verification|Commit)\b.*)?$", re.I)
_MIN_PROSE_TERMS = 4  # "Plan specified private `_UserRow`" says too little to reuse
_MORE_TERMS = 3  # after a status word: more than how it ended
_MIN_LIST_TERMS = 2  # "Bumped Node to 20 in .nvmrc" says something; "`a.py`, `b.py`" does not
_STATUS_WORDS = (
    r"complete(?:d)?(?:\s+with\s+warnings)?|done|pass(?:ed)?|shipped|merged|success(?:ful)?|"
    r"partial|failed|fail|blocked|escalated|in\s+progress|ok|verified|approved|finished|"
    r"landed|delivered|released|deployed|went\s+live"
)
# a deliverable's name, then how it ended (`Ledger schema and its invariants landed`, `Audit
# export is done`): a short line whose last words are its status
_STATUS_END = re.compile(
    rf"^\S.*?\s(?:(?:is|was|are|were|got|has\s+been|have\s+been)\s+)?(?:{_STATUS_WORDS})$", re.I
)
_STATUS_END_WORDS = 10
# a means or a reason makes it more than a status (`Feature flags let the page be released`)
_MEANS = re.compile(
    r"\b(?:because|so|to|by|via|when|if|lets?|instead|without|before|after|until|unless|using)\b",
    re.I,
)
# a reason or a means after a status word (`... done in a worker, so ...`); `to`, `when`, `after`
# are not (`shipped to production`, `merged after review`)
_REASON = re.compile(r"\b(?:because|so|by|via|instead|without|using|rather\s+than)\b", re.I)
# a name, then its status at the first colon or dash (`Billing schema: Complete`), never a later
# one (`CLI: app = typer.Typer() ... def main() -> None: pass` is code)
_STATUS_TAIL = re.compile(
    rf"^([^:—–]*?)\s*(?::|\s[—–-])\s*(?:\**)(?P<status>{_STATUS_WORDS})\b(?P<rest>.*)$", re.I
)
_FAILURE = re.compile(r"fail|blocked|partial|escalated", re.I)  # never what worked
_RAN = re.compile(
    rf"\b(?:review|verification|checks?|tests?|build|ci|phase|plan|self-check)\b[^.]*?"
    rf"\b(?:{_STATUS_WORDS})\b",
    re.I,
)
_BOOKKEEPING = re.compile(
    r"\b(?:in\s+\d+\s+cycles?(?:\(s\))?|\d+\s+findings?(?:\(s\))?|\d+\s*/\s*\d+|cycles?|"
    r"findings?|phase|plan|review|reviewed|verification|checks?|tests?|all|the|and|with|"
    r"of|on|first|one|\d+)\b",
    re.I,
)


@dataclass(frozen=True)
class PatternEntry:
    """One candidate pattern a summary offers."""

    kind: str  # established | marked | decision | deviation
    text: str  # as written, inline markup cleaned
    why: str = ""  # its rationale, when the summary gives one apart


@dataclass(frozen=True)
class SummarySource:
    """One plan summary as a source of patterns."""

    plan: str
    phase: str
    file: str
    name: str | None
    status: str | None
    outcome: str  # success | partial | failed (extract.outcome_of)
    check: str  # how its verification went, one short sentence ("" when none recorded)
    text: str  # the whole summary: what a pattern citing it may name
    entries: tuple[PatternEntry, ...]
    topic: str = ""  # the phase folder's slug (`block-hour-retainer-agreements`)

    @property
    def cited_text(self) -> str:
        """What a pattern citing this summary may name: the summary as read and its topic."""
        return f"{self.text}\n{topic_words(self.topic)}"


def topic_words(topic: str) -> str:
    """A phase folder's slug as words, "" when it holds no letters."""
    words = " ".join(w for w in re.split(r"[-_\s]+", topic) if w)
    return words if re.search(r"[^\W\d_]", words) else ""


def summary_source(plan: str, phase: str, path: Path, topic: str = "") -> SummarySource | None:
    """The summary at `path` as a source (module docstring); None when it cannot be read."""
    text = read_text(path)
    if text is None:
        return None
    return source_of(plan, phase, path.name, text, topic)


def source_of(plan: str, phase: str, file: str, text: str, topic: str = "") -> SummarySource:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    facts = plan_facts(plan, file, text)
    said = plan_statements(facts, text)
    found: list[PatternEntry] = []
    if facts.outcome != "failed":
        found += [PatternEntry(ESTABLISHED, e) for e in established(text)]
        found += [PatternEntry(MARKED, e) for e in _marked(said.parts) if _prose_ok(e)]
    if facts.outcome == "success":
        for d in said.decisions:
            if _prose_ok(d.text) and not _NOT_REUSABLE.match(d.decision):
                found.append(PatternEntry(DECISION, d.text.rstrip("."), d.rationale))
        found += [PatternEntry(DEVIATION, fix) for fix in _fixes(said.parts) if _prose_ok(fix)]
    entries = _unique(found)
    return SummarySource(
        plan=plan,
        phase=phase,
        file=file,
        name=facts.name,
        status=facts.status,
        outcome=facts.outcome,
        check=stated_check(said.check, text),
        text=_as_read(text, entries),
        entries=tuple(entries),
        topic=topic,
    )


def stated_check(check: CheckFact, text: str) -> str:
    """How the plan's verification went in words the summary states: a count the reader made
    itself (ticked boxes, table rows) is no number of the summary's, so it is said without one;
    "" when nothing was recorded."""
    sentence = check.sentence()
    if sentence == NO_CHECK:
        return ""
    if not new_entities(sentence, text):
        return sentence
    words = CheckFact(None, None, check.failures, check.verdict, check.lead).sentence()
    if check.total and check.passed == check.total and not check.failures:
        return "every check passed"
    return "" if words == NO_CHECK else words


def _as_read(text: str, entries: list[PatternEntry]) -> str:
    """The summary as a pattern citing it may quote it: its text, and each entry the reader
    decoded from a quoted scalar (`"t(\\"x\\")"` is `t("x")`) as read, so the writer's text and
    the checker's source hold the same entry."""
    decoded = [e.text for e in entries if e.text not in text]
    return "\n".join([text, *decoded]) if decoded else text


def established(text: str) -> list[str]:
    """Every entry of the summary's `patterns-established:` frontmatter list, as written (a
    quoted entry as YAML reads it)."""
    frontmatter, _ = split_frontmatter(text.removeprefix("\ufeff"))
    found: list[str] = []
    inside = False
    for line in frontmatter:
        if not line.startswith((" ", "\t", "-")):
            match = _ESTABLISHED_KEY.match(line.strip())
            inside = match is not None
            if match and match.group(1).strip():
                found += _flow(match.group(1).strip())
                inside = False
            continue
        if not inside:
            continue
        stripped = line.strip()
        if stripped.startswith("- ") or stripped == "-":
            found.append(_unquote(stripped[1:].strip()))
        elif found and stripped and not stripped.startswith("#"):
            found[-1] = f"{found[-1]} {_unquote(stripped)}".strip()  # a folded continuation
    return [e for e in (clean_inline(x) for x in found) if e and not is_none(e)]


def _flow(value: str) -> list[str]:
    """`[a, "b, c", 'd''s']` -> ["a", "b, c", "d's"]; a bare scalar is one entry; `[]` none.
    A quoted item ends at its closing quote as YAML reads it: an escaped `\\"` inside double
    quotes, a doubled `''` inside single quotes, and a comma inside either are the item's."""
    if not (value.startswith("[") and value.endswith("]")):
        return [_unquote(value)] if value not in ("~", "null") else []
    inner = value[1:-1]
    parts: list[str] = []
    current, quote, i = "", "", 0
    while i < len(inner):
        char = inner[i]
        pair = inner[i : i + 2]
        if quote == '"' and char == "\\" and len(pair) == 2:
            current, i = current + pair, i + 2
            continue
        if quote == "'" and pair == "''":
            current, i = current + pair, i + 2
            continue
        if quote:
            current += char
            quote = "" if char == quote else quote
        elif char in "\"'" and not current.strip():
            quote, current = char, current + char
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
        i += 1
    parts.append(current)
    return [p for p in (_unquote(p.strip()) for p in parts) if p]


_ESCAPES = {"n": " ", "t": " ", '"': '"', "\\": "\\", "/": "/"}


def _unquote(text: str) -> str:
    """A YAML scalar's value: double quotes with their escapes, single quotes with `''`."""
    if len(text) < 2 or text[0] != text[-1] or text[0] not in "\"'":
        return text
    body = text[1:-1]
    if text[0] == "'":
        return body.replace("''", "'")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), body)


def _marked(parts: PlanParts) -> list[str]:
    found: list[str] = []
    for section in parts.sections:
        title = section.title.lower()
        marked = any(w in title for w in _MARKED_HEADINGS) and "anti-pattern" not in title
        if section.level > 1 and marked:
            found += items(section)
        for line in section.lines:
            match = _MARKED_LINE.match(line)
            if match:
                found.append(clean_inline(match.group(1)))
    return found


def _fixes(parts: PlanParts) -> list[str]:
    found = []
    for section in parts.matching(("deviation",)):
        for item in items(section):
            match = _FIX.search(item)
            if match:
                found.append(match.group(1).strip().rstrip("."))
    return found


def _prose_ok(text: str) -> bool:
    """Free prose worth a pattern: content, no status, no file list, some substance."""
    return (
        is_content(text)
        and not text.rstrip().endswith(":")  # an introduction to what follows
        and not is_none(text)
        and not is_status(text)
        and not is_file_list(text)
        and len(content_terms(text)) >= _MIN_PROSE_TERMS
    )


def _unique(entries: list[PatternEntry]) -> list[PatternEntry]:
    seen: set[str] = set()
    kept = []
    for entry in entries:
        key = " ".join(re.findall(r"[^\W_]+", entry.text.lower()))
        if key and key not in seen:
            seen.add(key)
            kept.append(entry)
    return kept


# ---------------------------------------------------------------- what a pattern is not


def is_status(text: str) -> bool:
    """Whether `text` says how something ended rather than what worked: a bare status
    (`Complete`, `shipped`), a name followed by its status (`Billing schema: Complete`,
    `... — Failed: ...`, `Ledger schema landed`), or a review or check that passed or failed with its counts
    (`Phase 1 review PASSED in 1 cycle(s), 0 finding(s)`, `7/7 checks passed`)."""
    plain = " ".join(text.replace("*", "").replace("`", "").split()).strip(" .")
    if not plain:
        return True
    if re.fullmatch(rf"(?:{_STATUS_WORDS})\b.*", plain, re.I) and len(plain.split()) <= 6:
        return True
    tail = _STATUS_TAIL.match(plain)
    if tail and _FAILURE.match(tail["status"]):
        return True
    if tail and len(tail["rest"].split()) <= 12 and not _says_more(tail["rest"]):
        return True
    if (_STATUS_END.match(plain) and len(plain.split()) <= _STATUS_END_WORDS
            and not _MEANS.search(plain)):  # fmt: skip
        return True
    if _RAN.search(plain):
        rest = _BOOKKEEPING.sub(" ", re.sub(rf"\b(?:{_STATUS_WORDS})\b", " ", plain, flags=re.I))
        return not content_terms(rest)
    return False


_EMPTY_LABEL = re.compile(
    r"^[^:]{1,120}:\s*(?:[-–—?~.…/\s]*|n/?a|tbd|todo|none|null|nil|pending|unknown)\s*$", re.I
)


def is_empty_label(text: str) -> bool:
    """A name with nothing said of it (`CI/CD pipeline: -`, `Export: n/a`, `Auth:`)."""
    return _EMPTY_LABEL.match(" ".join(text.replace("*", "").split())) is not None


def _says_more(rest: str) -> bool:
    """What follows a status word says more than how it ended: a means or a reason, or three
    content terms beyond statuses and counts (`done in a worker, so the page stays fast`)."""
    if _REASON.search(rest):
        return True
    plain = _BOOKKEEPING.sub(" ", re.sub(rf"\b(?:{_STATUS_WORDS})\b", " ", rest, flags=re.I))
    return len(content_terms(plain)) >= _MORE_TERMS


def is_file_list(text: str) -> bool:
    """Whether `text` only names files: take its paths away and fewer than three content terms
    are left."""
    paths = find_paths(text)
    if not paths:
        return False
    rest = text
    for path in sorted(paths, key=len, reverse=True):
        rest = rest.replace(path, " ")
    rest = re.sub(r"\b(?:files?|created|modified|changed|added|updated|deleted|key|and)\b",
                  " ", rest, flags=re.I)  # fmt: skip
    return len(content_terms(rest)) < _MIN_LIST_TERMS


# ---------------------------------------------------------------- where the summaries are


def phase_sources(phase: Phase) -> list[SummarySource]:
    """Every plan summary of the phase as a source, in plan order."""
    found = []
    for plan, path in phase.summaries:
        source = summary_source(plan, phase.key, path, topic=folder_slug(phase.folder.name))
        if source is not None:
            found.append(source)
    return found


def plan_sources(root: Path, plans: list[tuple[str, str]]) -> dict[tuple[str, str], SummarySource]:
    """The summaries outcomes name, keyed by (phase key, plan id): the plan's summary in the
    phase folder the outcome's Phase column names (a phase that cannot be found, or is
    ambiguous, gives nothing: the outcome row alone is the source)."""
    found: dict[tuple[str, str], SummarySource] = {}
    phases: dict[str, list[SummarySource] | None] = {}
    for phase_spec, plan in plans:
        key = phase_key(phase_spec)
        if key not in phases:
            try:
                phases[key] = phase_sources(find_phase(root, key))
            except LegionError:
                phases[key] = None
        for source in phases[key] or []:
            if source.plan == plan.strip():
                found[(key, source.plan)] = source
    return found
