"""What must survive compaction, extracted deterministically from plan SUMMARY files.

Shared by the compactor, `verify-compaction` and the compaction eval:

- requirement ids and how each summary reports them (requirements.py, re-exported here):
  frontmatter `requirements*` keys, requirements sections, `**Requirement(s):**` lines and prose
  status lines, plus (through find.py) the phase's `**Requirements**:` line in ROADMAP.md;
- file paths anywhere in the text (paths.py, re-exported here);
- per plan: id, name, status as written, outcome (success | partial | failed), agent, and the
  requirement reports; per phase: the verdict the originals ground for each requirement id.

Everything here is pure text processing: no LLM, no network. CRLF input is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# re-exported: the one import surface for what compaction must keep
from legion_llm.memory.phases.filelists import listed_files
from legion_llm.memory.phases.paths import expand_braces as expand_braces
from legion_llm.memory.phases.paths import file_paths as file_paths
from legion_llm.memory.phases.paths import find_paths as find_paths
from legion_llm.memory.phases.paths import is_path as is_path
from legion_llm.memory.phases.paths import normalise as normalise
from legion_llm.memory.phases.paths import path_present as path_present
from legion_llm.memory.phases.paths import unique as unique
from legion_llm.memory.phases.requirements import DECLARING as DECLARING
from legion_llm.memory.phases.requirements import ID_RE as ID_RE
from legion_llm.memory.phases.requirements import NOT_REQUIREMENT as NOT_REQUIREMENT
from legion_llm.memory.phases.requirements import OUTPUT_ID_RE as OUTPUT_ID_RE
from legion_llm.memory.phases.requirements import RANGE_RE as RANGE_RE
from legion_llm.memory.phases.requirements import Report as Report
from legion_llm.memory.phases.requirements import Verdict as Verdict
from legion_llm.memory.phases.requirements import expand_range as expand_range
from legion_llm.memory.phases.requirements import ids_in_line as ids_in_line
from legion_llm.memory.phases.requirements import ids_present as ids_present
from legion_llm.memory.phases.requirements import keep_reports as keep_reports
from legion_llm.memory.phases.requirements import listed_ids as listed_ids
from legion_llm.memory.phases.requirements import range_members as range_members
from legion_llm.memory.phases.requirements import requirement_ids as requirement_ids
from legion_llm.memory.phases.requirements import requirement_reports as requirement_reports
from legion_llm.memory.phases.requirements import sort_ids as sort_ids
from legion_llm.memory.phases.requirements import split_frontmatter as split_frontmatter

# ---------------------------------------------------------------- per plan

_STATUS_LINE = re.compile(r"^\s*(?:>\s*)?\*\*Status:?\*\*\s*:?\s*(.+?)\s*$", re.IGNORECASE)
_STATUS_HEADING = re.compile(r"^#{2,3}\s+(?:Status|Result)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_AGENT_LINE = re.compile(
    r"^\s*(?:>\s*)?(?:\*\*Agent:?\*\*\s*:?|#{2,3}\s+Agent\s*:)\s*(.+?)\s*$", re.IGNORECASE
)
_NAME_PATTERNS = [
    re.compile(r"^(?:Plan|Phase)\s+\S+\s+Summary\s*(?:[:—–]|-\s)\s*(.+)$", re.IGNORECASE),
    re.compile(r"^Phase\s+\S+\s+Plan\s+\S+?\s*[:—–]\s*(.+?)(?:\s+Summary)?$", re.IGNORECASE),
    re.compile(r"^Plan\s+\S+?\s*[:—–]\s*(.+)$", re.IGNORECASE),
    re.compile(r"^\S+\s+Summary\s*[:—–]\s*(.+)$", re.IGNORECASE),
    re.compile(r"^Summary\s*[:—–]\s*\S+\s+(.+)$", re.IGNORECASE),
]


@dataclass(frozen=True)
class PlanFacts:
    id: str
    file: str
    name: str | None
    status: str | None
    outcome: str
    agent: str | None
    requirement_ids: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()  # every path the summary names: its declared files, then prose
    reports: tuple[Report, ...] = ()
    listed: tuple[str, ...] = ()  # the files its lists declare, as written (filelists.py)
    secondary: tuple[str, ...] = ()  # those of them only change lines or fences name

    def verdict(self, rid: str) -> Verdict | None:
        """What this summary reports for `rid` (None: it does not report it)."""
        found = [r.verdict(self.outcome) for r in self.reports if r.id == rid]
        return combine(found) if found else None


def combine(verdicts: Iterable[Verdict]) -> Verdict:
    """One verdict from several: agreeing ones stay, disagreeing ones are partial."""
    known = list(dict.fromkeys(v for v in verdicts if v != "not verified"))
    if not known:
        return "not verified"
    return known[0] if len(known) == 1 else "partial"


@dataclass(frozen=True)
class Grounded:
    """The verdict the originals support for one requirement id, and the plans reporting it."""

    id: str
    verdict: Verdict
    plans: tuple[str, ...]

    def allows(self, verdict: str) -> bool:
        """A proposal may give the grounded verdict, or say it is not verified."""
        return verdict in (self.verdict, "not verified")


@dataclass(frozen=True)
class PhaseFacts:
    """The facts a compacted summary must keep, and the plans they came from."""

    requirement_ids: tuple[str, ...]
    paths: tuple[str, ...]
    plans: tuple[PlanFacts, ...]
    roadmap_requirement_ids: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    def plan(self, plan_id: str) -> PlanFacts | None:
        return next((p for p in self.plans if p.id == plan_id), None)

    def grounded(self, rid: str) -> Grounded:
        """PASS/FAIL/PARTIAL only where a summary of this phase reports the id (a ROADMAP-only
        id, or one no summary reports, is not verified)."""
        by_plan = [(p.id, v) for p in self.plans if (v := p.verdict(rid)) is not None]
        by_plan = by_plan or self._within_range(rid)
        verdict = combine(v for _, v in by_plan)
        plans = tuple(pid for pid, v in by_plan if v != "not verified" or verdict == v)
        return Grounded(rid, verdict, plans)

    def _within_range(self, rid: str) -> list[tuple[str, Verdict]]:
        """A member of a range some summary reports (`R1.2` of `R1.1–R1.4`)."""
        found = []
        for plan in self.plans:
            for written in plan.requirement_ids:
                if rid in range_members(written) and (v := plan.verdict(written)) is not None:
                    found.append((plan.id, v))
        return found


def plan_name(title: str | None) -> str | None:
    if not title:
        return None
    title = title.strip().strip("*").strip()
    if re.fullmatch(r"(?:Plan\s+)?\S+\s+Summary", title, re.IGNORECASE):
        return None
    for pattern in _NAME_PATTERNS:
        match = pattern.match(title)
        if match:
            return match.group(1).strip() or None
    return re.sub(r"\s+Summary$", "", title).strip() or None


def outcome_of(status: str | None, body: str = "") -> str:
    """Status as written -> success | partial | failed (Complete with Warnings is partial)."""
    if status is None:
        return "partial" if re.search(r"^#+\s*Self-Check:\s*FAIL", body, re.M | re.I) else "success"
    low = status.lower()
    if any(word in low for word in ("fail", "block", "abandon", "escalat")):
        return "failed"
    if "partial" in low or "warning" in low:
        return "partial"
    if any(word in low for word in ("complete", "success", "done", "pass", "ship", "merged")):
        return "success"
    return "partial"


def _first(pattern: re.Pattern[str], lines: list[str]) -> tuple[int, str] | None:
    for index, line in enumerate(lines):
        match = pattern.match(line)
        if match:
            return index, match.group(1)
    return None


def _clean_value(value: str) -> str:
    value = re.sub(r"\s+\([^()]*\)$", "", value.strip()).replace("`", "").replace("**", "")
    return value.strip().rstrip(".").strip()


def _frontmatter_value(lines: list[str], key: str) -> str | None:
    for line in lines:
        match = re.match(rf"^{key}\s*:\s*(.+)$", line.strip(), re.IGNORECASE)
        if match and not line.startswith((" ", "\t")):
            return match.group(1).strip().strip("\"'") or None
    return None


def plan_facts(
    plan_id: str,
    file_name: str,
    text: str,
    declared: Iterable[str] = (),
    reports: Iterable[Report] | None = None,
) -> PlanFacts:
    """Id, name, status, outcome, agent, requirement ids and paths of one plan summary
    (`declared`: the ids the phase declares elsewhere, requirements.py's precision rule;
    `reports`: the summary's requirement reports, when the caller read them already)."""
    frontmatter, body = split_frontmatter(text)
    declared = frozenset(declared)
    reports = keep_reports(
        requirement_reports(text, declared) if reports is None else reports, declared
    )
    declared_files = listed_files(text)
    listed = [item.path for item in declared_files]
    lines = body.split("\n")
    title = next((line[2:] for line in lines if line.startswith("# ")), None)
    hits = [h for h in (_first(_STATUS_LINE, lines), _first(_STATUS_HEADING, lines)) if h]
    status = _clean_value(min(hits)[1]) if hits else _frontmatter_value(frontmatter, "status")
    agent_hit = _first(_AGENT_LINE, lines)
    agent = _clean_value(agent_hit[1]) if agent_hit else _frontmatter_value(frontmatter, "agent")
    return PlanFacts(
        id=plan_id,
        file=file_name,
        name=plan_name(title),
        status=status or None,
        outcome=outcome_of(status, body),
        agent=agent or None,
        requirement_ids=tuple(sort_ids(dict.fromkeys(r.id for r in reports))),
        paths=tuple(unique([*listed, *find_paths(text)])),
        reports=tuple(reports),
        listed=tuple(listed),
        secondary=tuple(item.path for item in declared_files if not item.primary),
    )


def phase_facts(
    summaries: Iterable[tuple[str, str, str]],
    roadmap_ids: Iterable[str] = (),
    declared: Iterable[str] = (),
) -> PhaseFacts:
    """Facts of a phase from (plan id, file name, text) triples, the ROADMAP's ids and the ids
    declared elsewhere (declared.py: PLAN files, the REQUIREMENTS.md traceability). The phase's
    requirements are exactly its declared ids, each with its own verdict line: these, and every
    id a summary's requirements list, line or section declares (for all of its plans); a report
    in prose counts only for one of them."""
    summaries = list(summaries)
    outside = tuple(unique([*roadmap_ids, *declared]))
    first = [requirement_reports(text) for _, _, text in summaries]
    known = {*outside, *(r.id for found in first for r in found if r.source in DECLARING)}
    # again, now that the declared ids are known: a status sentence reports one of any shape
    reports = [requirement_reports(text, known) for _, _, text in summaries]
    plans = tuple(plan_facts(pid, name, text, known, found)
                  for (pid, name, text), found in zip(summaries, reports, strict=True))  # fmt: skip
    ids = sort_ids(unique([*outside, *(i for p in plans for i in p.requirement_ids)]))
    roadmap = tuple(roadmap_ids)
    return PhaseFacts(tuple(ids), tuple(phase_paths(plans)), plans, roadmap)


def phase_paths(plans: Iterable[PlanFacts]) -> list[str]:
    """The paths a compacted phase keeps, each its own Files row: every declared file, as
    written, whatever its shape (filelists.py); then what prose names with its folder
    (`src/a.ts`, not a bare `CLAUDE.md`), neither a glob nor the tail of another path the phase
    names (`tests/x.py` beside `backend/tests/x.py`)."""
    plans = list(plans)
    secondary = {path for p in plans for path in p.secondary}
    primary = {path for p in plans for path in p.listed if path not in p.secondary}
    every = {path for p in plans for path in p.paths}

    def tail(path: str) -> bool:
        return any(o != path and o.endswith("/" + path) for o in every)

    listed = unique(path for p in plans for path in p.listed
                    if path in primary or not tail(path))  # fmt: skip
    named = unique(path for p in plans for path in p.paths)
    prose = [path for path in file_paths(p for p in named if p not in secondary | primary)
             if "/" in path and not tail(path)]  # fmt: skip
    return [*listed, *prose]


# ---------------------------------------------------------------- sections


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


_HEADING = re.compile(r"^(#{1,3})\s+(.*?)\s*#*\s*$")


def sections(body: str) -> list[Section]:
    """Split markdown into sections at `#`..`###` headings outside fenced blocks.

    Text before the first heading is a section with an empty title and level 0.
    """
    result: list[Section] = []
    title, level = "", 0
    current: list[str] = []
    in_fence = False
    for line in normalise(body).split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        match = None if in_fence or not line.startswith("#") else _HEADING.match(line)
        if match:
            result.append(Section(title, level, tuple(current)))
            title, level, current = match.group(2), len(match.group(1)), []
        else:
            current.append(line)
    result.append(Section(title, level, tuple(current)))
    return [s for s in result if s.title or s.text.strip()]
