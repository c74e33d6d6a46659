"""What must survive compaction, extracted deterministically from plan SUMMARY files.

Shared by the compactor, `verify-compaction` and the compaction eval:

- requirement ids from every place summaries put them: frontmatter keys `requirements*`
  (flow or block lists), `## Requirements Covered|Satisfied|...` sections, `**Requirement(s):**`
  lines, and (through phases.py) the phase's `**Requirements**:` line in ROADMAP.md. Styles
  `REQ-01`, `AUTH-02`, `L9I-01`, `R1`, `R1.1`; a range `R1.1–R1.4` is kept as written and
  expanded. Decision, threat, outcome, error and pattern ids (`D-05`, `T-01-01`, `O-014`,
  `E-002`, `PAT-003`) are not requirements.
- file paths anywhere in the text (extract_paths.py, re-exported here): decorations such as
  `(~370 lines)` are never part of a path; globs, brace expansions and absolute paths are kept
  as written; slash commands, scoped npm packages, dotted identifiers and fractions are not paths.
- per plan: id, name, status as written, outcome (success | partial | failed), agent.

Everything here is pure text processing: no LLM, no network. CRLF input is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# re-exported: the one import surface for what compaction must keep
from legion_llm.memory.phases.paths import expand_braces as expand_braces
from legion_llm.memory.phases.paths import find_paths as find_paths
from legion_llm.memory.phases.paths import is_path as is_path
from legion_llm.memory.phases.paths import normalise as normalise
from legion_llm.memory.phases.paths import path_present as path_present
from legion_llm.memory.phases.paths import unique as unique

# ---------------------------------------------------------------- requirement ids

_DASH_ID = r"[A-Z][A-Z0-9]{0,11}-\d{1,4}(?:\.\d+)?"
_DOT_ID = r"[A-Z]{1,4}\d+(?:\.\d+)*"
_ID = rf"(?:{_DASH_ID}|{_DOT_ID})"
_EDGE_BEFORE = r"(?<![\w.\-/])"
_EDGE_AFTER = r"(?![\w\-]|\.\d)"
ID_RE = re.compile(rf"{_EDGE_BEFORE}({_ID}){_EDGE_AFTER}")
RANGE_RE = re.compile(rf"{_EDGE_BEFORE}({_ID})\s*[–—-]\s*({_ID}){_EDGE_AFTER}")
# what an output may name as a requirement: dash-style ids anywhere, R-style ids
OUTPUT_ID_RE = re.compile(rf"{_EDGE_BEFORE}({_DASH_ID}|R\d+(?:\.\d+)*){_EDGE_AFTER}")
NOT_REQUIREMENT = re.compile(r"^(?:D|T|O|E|P|PAT)-\d")
_REQ_HEADING = re.compile(r"^#{2,4}\s+Requirements?\b", re.IGNORECASE)
_REQ_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)*(?:\*\*)?Requirements?(?:\*\*)?\s*:\s*(?:\*\*)?\s*:?\s*(.*)$",
    re.IGNORECASE,
)
_FM_REQ_KEY = re.compile(r"^requirements?(?:[-_][a-z_-]+)?\s*:(.*)$", re.IGNORECASE)
_PARENS = re.compile(r"\([^()]*\)")
_MAX_RANGE = 50


def _split_number(rid: str) -> tuple[str, str]:
    match = re.match(r"^(.*?)(\d+)$", rid)
    return (match.group(1), match.group(2)) if match else (rid, "")


def expand_range(first: str, last: str) -> list[str]:
    """`R1.1`..`R1.4` -> the four ids; [] when the two ends do not form a clear range."""
    head_a, num_a = _split_number(first)
    head_b, num_b = _split_number(last)
    if head_a != head_b or not num_a or not num_b:
        return []
    start, end = int(num_a), int(num_b)
    if not start < end <= start + _MAX_RANGE:
        return []
    width = len(num_a) if num_a.startswith("0") else 0
    return [f"{head_a}{n:0{width}d}" for n in range(start, end + 1)]


def ids_in_line(text: str) -> list[str]:
    """Requirement ids in a requirement source line: ranges as written plus their members."""
    text = _PARENS.sub(" ", text)
    found: list[str] = []
    for match in RANGE_RE.finditer(text):
        members = expand_range(match.group(1), match.group(2))
        if members:
            found += [match.group(0), *members]
    found += [m.group(1) for m in ID_RE.finditer(text)]
    return unique(i for i in found if not NOT_REQUIREMENT.match(i))


def split_frontmatter(text: str) -> tuple[list[str], str]:
    """(frontmatter lines, body) for text starting with a `---` YAML block."""
    text = normalise(text)
    if not text.startswith("---\n"):
        return [], text
    end = text.find("\n---", 4)
    if end < 0:
        return [], text
    after = text.find("\n", end + 4)
    body = text[after + 1 :] if after >= 0 else ""
    return text[4:end].split("\n"), body


def _frontmatter_requirements(lines: list[str]) -> list[str]:
    found: list[str] = []
    for index, line in enumerate(lines):
        match = _FM_REQ_KEY.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if not match:
            continue
        found += ids_in_line(match.group(1).strip().strip("[]"))
        for item in lines[index + 1 :]:
            if not item.startswith((" ", "\t", "-")):
                break
            found += ids_in_line(item.strip().lstrip("-").strip().strip("\"'"))
    return found


def requirement_ids(text: str) -> list[str]:
    """Every requirement id a summary names in a requirement source (not in prose)."""
    frontmatter, body = split_frontmatter(text)
    found = _frontmatter_requirements(frontmatter)
    in_section = in_fence = False
    for line in body.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.startswith("#"):
            in_section = bool(_REQ_HEADING.match(line))
            continue
        match = _REQ_LINE.match(line)
        if match:
            found += ids_in_line(match.group(1))
        elif in_section:
            found += ids_in_line(_section_item(line))
    return sort_ids(unique(found))


def _section_item(line: str) -> str:
    """The id part of a requirements-section line: a bullet's head or a table's first cell."""
    stripped = line.strip()
    if stripped.startswith("|"):
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        return cells[0] if cells else ""
    stripped = re.sub(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?", "", stripped)
    head = re.split(r"\s[—–]\s|:\s|\s-\s", stripped, maxsplit=1)[0]
    return head.replace("**", "").replace("`", "")


def _id_key(rid: str) -> tuple[object, ...]:
    parts = re.split(r"(\d+)", rid)
    return tuple(int(p) if p.isdigit() else p for p in parts)


def sort_ids(ids: Iterable[str]) -> list[str]:
    return sorted(ids, key=lambda i: (_id_key(re.split(r"\s*[–—-]\s*(?=[A-Z])", i)[0]), -len(i)))


def ids_present(rid: str, text: str) -> bool:
    """Whether `rid` occurs in `text` as a whole id (R1 is not found inside R14 or R1.2)."""
    if RANGE_RE.fullmatch(rid):
        match = RANGE_RE.fullmatch(rid)
        assert match is not None
        if rid in text:
            return True
        members = expand_range(match.group(1), match.group(2))
        return bool(members) and all(ids_present(m, text) for m in members)
    pattern = rf"{_EDGE_BEFORE}{re.escape(rid)}{_EDGE_AFTER}"
    return re.search(pattern, text) is not None


# ---------------------------------------------------------------- per plan

_STATUS_LINE = re.compile(r"^\s*(?:>\s*)?\*\*Status:?\*\*\s*:?\s*(.+?)\s*$", re.IGNORECASE)
_STATUS_HEADING = re.compile(r"^#{2,3}\s+(?:Status|Result)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_AGENT_LINE = re.compile(
    r"^\s*(?:>\s*)?(?:\*\*Agent:?\*\*\s*:?|#{2,3}\s+Agent\s*:)\s*(.+?)\s*$", re.IGNORECASE
)
_NAME_PATTERNS = [
    re.compile(r"^Plan\s+\S+\s+Summary\s*(?:[:—–]|-\s)\s*(.+)$", re.IGNORECASE),
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
    paths: tuple[str, ...] = ()


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


def plan_facts(plan_id: str, file_name: str, text: str) -> PlanFacts:
    """Id, name, status, outcome, agent, requirement ids and paths of one plan summary."""
    frontmatter, body = split_frontmatter(text)
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
        requirement_ids=tuple(requirement_ids(text)),
        paths=tuple(find_paths(text)),
    )


def phase_facts(
    summaries: Iterable[tuple[str, str, str]], roadmap_ids: Iterable[str] = ()
) -> PhaseFacts:
    """Facts of a phase from (plan id, file name, text) triples and the ROADMAP's ids."""
    plans = tuple(plan_facts(pid, name, text) for pid, name, text in summaries)
    roadmap = tuple(roadmap_ids)
    ids = sort_ids(unique([*roadmap, *(i for p in plans for i in p.requirement_ids)]))
    paths = unique(path for p in plans for path in p.paths)
    return PhaseFacts(tuple(ids), tuple(paths), plans, roadmap)


# ---------------------------------------------------------------- sections


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


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
        match = None if in_fence else re.match(r"^(#{1,3})\s+(.*?)\s*#*\s*$", line)
        if match:
            result.append(Section(title, level, tuple(current)))
            title, level, current = match.group(2), len(match.group(1)), []
        else:
            current.append(line)
    result.append(Section(title, level, tuple(current)))
    return [s for s in result if s.title or s.text.strip()]
