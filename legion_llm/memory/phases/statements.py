"""What one plan summary says, extracted once: the facts model that compaction's writer (the
offline engine) and its verifier (the grounding rules) share.

For each plan summary (`plan_statements`):

- `deliverables`: the bold one-liner (GSD) and the items of What Was Done / Accomplishments /
  Completed Tasks / Deliverables ... sections;
- `decisions`: bullets of a Decisions section, rows of a decisions table (`| Decision |
  Rationale |`), and a `key-decisions:` / `decisions:` frontmatter list, each split into the
  decision, its rationale and the alternatives it rejects;
- `files`: every file the summary declares (filelists.py: frontmatter lists, Files sections,
  change lines), with the note its list gives it and the line it was read from;
- `check`: how verification went: counts of a results table or a checklist, failing checks, a
  Self-Check verdict, else the first short sentence of the verification section;
- `follow_ups`: open issues, deviations, escalations, error details and handoff questions;
- `requirement_notes`: the note a Requirements section gives each id.

Every text is an excerpt of a summary line (inline markup cleaned, never re-worded). `says`
tells whether a text is such an excerpt, so the writer's text is grounded by construction and a
model that quotes a summary is grounded too. Candidates that are placeholders or carry no
content term (`is_placeholder`, `content_terms`, memory/terms.py) are never facts, for both
readers alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from legion_llm.memory.phases.extract import PlanFacts, Section
from legion_llm.memory.phases.filelists import MOVED_AWAY, listed_files
from legion_llm.memory.phases.markdown import PlanParts, first_clause, items, sentences, table_rows
from legion_llm.memory.phases.requirements import ids_in_line
from legion_llm.memory.terms import content_terms, is_placeholder

DELIVERABLE_HEADINGS = ("what was", "what changed", "accomplishment", "deliverable", "changes",
                        "tasks completed", "completed tasks", "completed", "summary", "what")  # fmt: skip
FOLLOW_UP_HEADINGS = ("issue", "escalation", "deviation", "error details", "known stub", "handoff")
CHECK_HEADINGS = ("verification", "self-check", "verify", "test result")
MOVED = MOVED_AWAY  # a move's source: named in its destination's row, no row of its own
_MIN_EXCERPT_TOKENS = 2
_TOKEN = re.compile(r"[^\W_]+")
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX✓✔])\]\s*(.*)$")
_COUNT = re.compile(
    r"(?i)\b(\d+)\s*(?:/|of|out of)\s*(\d+)\s+(?:[\w-]+\s+){0,2}(?:pass(?:ed|ing)?|succeeded|ok)\b"
    r"|\b(\d+)\s+(?:[\w-]+\s+){0,1}(?:tests?\s+)?(?:passed|passing)\b"
)
_RESULT_KEYS = ("result", "status", "outcome", "verdict")


@dataclass(frozen=True)
class PlanDoc:
    """One plan summary (or one part of a very long one) as an engine sees it."""

    facts: PlanFacts
    text: str
    part: str = ""


@dataclass(frozen=True)
class DecisionFact:
    """One decision as the summary records it."""

    text: str  # the item or row as written, inline markup cleaned
    decision: str  # its first sentence
    rationale: str  # the rest (empty when none)
    rejected: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileFact:
    """One path a Files section describes."""

    path: str
    change: str  # what the summary says changed ("" when it only names the path)
    source: str  # the item or row it was read from


@dataclass(frozen=True)
class CheckFact:
    """How one plan's verification went, as the summary reports it."""

    passed: int | None = None
    total: int | None = None
    failures: tuple[str, ...] = ()
    verdict: str | None = None  # a `Self-Check: PASSED` heading
    lead: str | None = None  # the first short sentence of the verification section

    def sentence(self, limit: int = 2) -> str:
        """One short sentence: counts and failing checks, else the verdict or lead sentence."""
        parts: list[str] = []
        if self.total is not None and self.passed is not None:
            parts.append(f"{self.passed}/{self.total} checks passed")
        elif self.passed is not None:
            parts.append(f"{self.passed} checks passed")
        elif self.verdict:
            parts.append(self.verdict)
        elif self.lead:
            parts.append(self.lead)
        parts += [f"FAIL: {f}" for f in self.failures[:limit]]
        if len(self.failures) > limit:
            parts.append(f"{len(self.failures) - limit} more failing")
        return "; ".join(parts) or NO_CHECK


NO_CHECK = "no verification recorded"


@dataclass(frozen=True)
class PlanStatements:
    """Everything one plan summary says that a compacted summary may keep (module docstring)."""

    facts: PlanFacts
    parts: PlanParts
    one_liner: str | None
    deliverables: tuple[str, ...]
    decisions: tuple[DecisionFact, ...]
    files: tuple[FileFact, ...]
    check: CheckFact
    follow_ups: tuple[str, ...]
    requirement_notes: tuple[tuple[str, str], ...]
    _tokens: str = field(default="", repr=False)

    @property
    def plan(self) -> str:
        return self.facts.id

    def file(self, path: str) -> FileFact | None:
        return next((f for f in self.files if f.path == path), None)

    def note(self, rid: str) -> str | None:
        return next((note for i, note in self.requirement_notes if i == rid), None)

    def says(self, text: str) -> bool:
        """Whether `text` is an excerpt of this summary: its words, in order, are a run of the
        summary's words (markup, punctuation and case aside); at least two words."""
        return says(text, self._tokens)


def token_line(text: str) -> str:
    """The words of a text in order, lower-cased, one space apart (the form excerpts compare)."""
    return " ".join(_TOKEN.findall(text.lower()))


def says(text: str, tokens: str) -> bool:
    """`text` is a run of the words in `tokens` (a `token_line`)."""
    part = token_line(text)
    if len(part.split()) < _MIN_EXCERPT_TOKENS:
        return False
    return f" {part} " in f" {tokens} "


def is_content(text: str) -> bool:
    """A candidate fact says something: not a placeholder, and at least one content term."""
    return not is_placeholder(text) and bool(content_terms(text))


# ---------------------------------------------------------------- deliverables


def _one_liner(plan: PlanParts) -> str | None:
    for section in plan.sections:
        if section.level > 1:
            break
        for line in section.lines:
            if re.match(r"^\*\*(?!One-liner:)[\w -]+:\*\*", line.strip()):
                continue  # a field such as **Agent:** or **Status:**, not a one-liner
            match = re.match(r"^\*\*(?:One-liner:\*\*\s*)?(.+?)(?:\*\*)?$", line.strip())
            if match and len(match.group(1)) > 20:
                return match.group(1).strip(" *")
    return None


def _deliverables(plan: PlanParts) -> tuple[str, ...]:
    found = [i for s in plan.matching(DELIVERABLE_HEADINGS) for i in items(s)]
    return tuple(dict.fromkeys(i for i in found if is_content(i)))


def first_content(plan: PlanParts) -> str:
    """The plan's name, else its first list item or paragraph that says something."""
    candidates = [plan.facts.name or "", *(i for s in plan.sections for i in items(s))]
    return next((c for c in candidates if is_content(c)), "")


# ---------------------------------------------------------------- follow-ups


def _follow_ups(plan: PlanParts) -> tuple[str, ...]:
    found: list[str] = []
    for section in plan.matching(FOLLOW_UP_HEADINGS):
        title = section.title.lower()
        if "escalation" in title:
            found += [_escalation(row) for row in table_rows(section) if row.get("decision")]
        elif "handoff" in title:
            found += [i for i in items(section) if i.lower().startswith("open question")]
        elif "error details" in title:
            found += _error_lines(section)
        elif "deviation" in title:
            found += [i for i in items(section) if re.match(r"^\d+\.\s*\[", i)]
        else:
            found += items(section)
    return tuple(f for f in found if not is_none(f) and is_content(f))


def _error_lines(section: Section) -> list[str]:
    """`**Failing task**`, `**Root cause**` and `**State left behind**` lines of Error Details."""
    wanted = ("failing", "root cause", "state left")
    lines = [line.strip().replace("**", "") for line in section.lines]
    return [line for line in lines if line.lower().startswith(wanted)]


def _escalation(row: dict[str, str]) -> str:
    status = row.get("status", "")
    return f"Escalation: {row['decision']} — {status}: {row.get('resolution', '')}".rstrip(": ")


def is_none(text: str) -> bool:
    tail = text.split(":", 1)[-1] if text.lower().startswith("open question") else text
    return tail.strip().strip(".").lower() in ("", "none", "n/a", "none beyond the deviation above")


# ---------------------------------------------------------------- decisions


def _frontmatter_decisions(frontmatter: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    inside = False
    for line in frontmatter:
        if not line.startswith((" ", "\t", "-")):
            inside = bool(re.match(r"^(key[-_])?decisions\s*:", line))
            continue
        if not inside:
            continue
        text = line.strip().lstrip("-").strip()
        key, _, value = text.partition(":")
        if key.strip() in ("decision", "rationale") and value.strip():
            value = value.strip().strip("\"'")
            if key.strip() == "decision" or not found:
                found.append(value)
            else:
                found.append(f"{found.pop().rstrip('.')}. {value}")
        elif text and not re.match(r"^[\w-]+\s*:", text):
            found.append(text.strip("\"'"))
    return found


_DECISION_COLUMNS = ("decision", "choice", "what")
_WHY_COLUMNS = ("rationale", "why", "reason", "reasoning", "because")
_REJECTED_COLUMNS = ("rejected", "alternatives", "alternatives considered", "rejected alternatives")


def _row_decision(row: dict[str, str]) -> str | None:
    """`| Decision | Rationale |` (or Choice/Why ...): `decision. rationale. Rejected: x`."""
    decision = next((row[k] for k in _DECISION_COLUMNS if row.get(k)), None)
    if decision is None:
        cells = [c for k, c in row.items() if c and k not in ("#", "id", "no", "plan")]
        decision = next((c for c in cells if is_content(c)), None)
        if decision is None:
            return None
    why = next((row[k] for k in _WHY_COLUMNS if row.get(k)), "")
    rejected = next((row[k] for k in _REJECTED_COLUMNS if row.get(k)), "")
    text = decision.rstrip(". ")
    text += f". {why.rstrip('. ')}" if why else ""
    text += f". Rejected: {rejected}" if rejected else ""
    return text


def _decision_texts(plan: PlanParts) -> list[str]:
    sections = list(plan.matching(("decision",)))
    body = [i for s in sections for i in items(s)]
    rows = [t for s in sections for row in table_rows(s) if (t := _row_decision(row))]
    if not body or any("frontmatter" in i.lower() for i in body):
        body = _frontmatter_decisions(plan.frontmatter) or body
    return [t for t in dict.fromkeys([*body, *rows]) if not is_none(t)]


def parse_decision(text: str) -> DecisionFact:
    """The decision (first sentence), its rationale (the rest) and what it rejects."""
    parts = sentences(text)
    rejected = tuple(re.sub(r"^Rejected(?: alternatives?)?:?\s*", "", s) for s in parts
                     if s.lower().startswith("rejected"))  # fmt: skip
    kept = [s for s in parts if not s.lower().startswith("rejected")]
    while len(kept) > 1 and not content_terms(kept[0]):
        kept.pop(0)  # "Followed plan. Idempotency key is ..." decides the second sentence
    rest = " ".join(kept) or text
    decision = first_clause(rest)
    rationale = rest[len(decision) :].strip(" .;—")
    return DecisionFact(text, decision, rationale, tuple(r for r in rejected if r))


def _decisions(plan: PlanParts) -> tuple[DecisionFact, ...]:
    found = [parse_decision(text) for text in _decision_texts(plan)]
    return tuple(d for d in found if is_content(d.decision))


def deciding_lines(plan: PlanParts) -> list[str]:
    """Lines anywhere in the summary that say a choice was made (rationale material)."""
    return [line for s in plan.sections for line in s.lines if _DECIDING.search(line)]


_DECIDING = re.compile(
    r"\b(?:decid|chose|choos|choice|reject|instead of|rather than|opt(?:ed)?)", re.I
)


# ---------------------------------------------------------------- files


def _files(text: str) -> tuple[FileFact, ...]:
    """Each file the summary declares (filelists.py: frontmatter lists, Files sections, change
    lines), with the note its list gives it as the change text."""
    return tuple(FileFact(item.path, item.change, item.source) for item in listed_files(text))


# ---------------------------------------------------------------- verification


def _check(plan: PlanParts) -> CheckFact:
    """Counts from a results table, else a checklist, else the first count a verification
    section states; the failing rows or open items; a Self-Check verdict; the lead sentence."""
    sections = list(plan.matching(CHECK_HEADINGS))
    rows = [r for s in sections for r in table_rows(s) if _result(r)]
    boxes = [m for s in sections for line in s.lines if (m := _CHECKBOX.match(line))]
    verdict = next((" ".join(s.title.replace("*", "").split()) for s in sections
                    if s.title.lower().startswith("self-check")), None)  # fmt: skip
    lead = next((_short(i) for s in sections for i in items(s) if is_content(i)), None)
    if rows:
        failed = [r for r in rows if "fail" in _result(r).lower()]
        failures = [_failing_row(r) for r in failed]
        return CheckFact(len(rows) - len(failed), len(rows), tuple(failures), verdict, lead)
    if boxes:
        open_ = [first_clause(m.group(2)) for m in boxes if m.group(1) == " "]
        failures = [o for o in open_ if is_content(o)]
        return CheckFact(len(boxes) - len(open_), len(boxes), tuple(failures), verdict, lead)
    counted = next((c for s in sections if (c := _counted(s.text))[0] is not None), (None, None))
    return CheckFact(counted[0], counted[1], (), verdict, lead)


def _result(row: dict[str, str]) -> str:
    return next((row[k] for k in _RESULT_KEYS if row.get(k)), "")


def _failing_row(row: dict[str, str]) -> str:
    what = row.get("command") or row.get("check") or next(iter(row.values()))
    code = row.get("exit_code") or row.get("exit code")
    return f"{what} (exit {code})" if code else what


def _counted(text: str) -> tuple[int | None, int | None]:
    """`12/12 tests pass`, `3 of 4 checks passed`, `142 passed`: the first count in the text."""
    match = _COUNT.search(text)
    if not match:
        return None, None
    if match.group(1):
        return int(match.group(1)), int(match.group(2))
    return int(match.group(3)), None


SHORT_CHARACTERS = 160


def _short(text: str) -> str:
    """The first clause of a text, at most SHORT_CHARACTERS (cut at a word, never mid-word)."""
    clause = first_clause(text)
    if len(clause) <= SHORT_CHARACTERS:
        return clause
    return clause[:SHORT_CHARACTERS].rsplit(" ", 1)[0].rstrip(",;:")


def _requirement_notes(plan: PlanParts) -> tuple[tuple[str, str], ...]:
    notes: dict[str, str] = {}
    for section in plan.matching(("requirement",)):
        for item in items(section):
            match = re.match(r"^(.*?)(?:\s[—–]\s|:\s)(.*)$", item)
            head, rest = (match.group(1), match.group(2)) if match else (item, "")
            for rid in ids_in_line(head):
                notes.setdefault(rid, rest)
    return tuple(notes.items())


# ---------------------------------------------------------------- the model


@lru_cache(maxsize=256)
def plan_statements(facts: PlanFacts, text: str) -> PlanStatements:
    """What one plan summary says (module docstring); remembered per summary text."""
    parts = PlanParts.of(facts, text)
    return PlanStatements(
        facts=facts,
        parts=parts,
        one_liner=_one_liner(parts),
        deliverables=_deliverables(parts),
        decisions=_decisions(parts),
        files=_files(text),
        check=_check(parts),
        follow_ups=_follow_ups(parts),
        requirement_notes=_requirement_notes(parts),
        _tokens=token_line(text),
    )
