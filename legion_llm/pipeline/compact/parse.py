"""Read a COMPACTED.md (ours, or written by hand) back into the claims it makes.

`verify-compaction` holds an existing file to the same grounding rules as a fresh proposal, so
the file is read into a PhaseDigest: deliverable bullets (`- **03-01 Name** (status): text`,
`- Plan 03-01: text`), decision bullets (`- (03-01) text. Why: ... Rejected: ...`), the
`| File | Change |` rows (one item per path in a cell; a cell naming no path is kept as written),
verdict lines (`- R1: PASS — evidence`, or a table row holding an id and a verdict), plan check
lines (`- Plan 03-01: result`) and agent lines (`- agent: 03-01 — work`); in the per-plan
layout of a very small phase, each `## Plan` section's lines. What a hand-made file
says in other shapes is not read, and therefore not held against it; the frontmatter's
`requirements_satisfied` list is a claim of PASS for each id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from legion_llm.memory.phases.extract import (
    PhaseFacts,
    Section,
    Verdict,
    find_paths,
    sections,
    split_frontmatter,
)
from legion_llm.memory.table import parse_markdown
from legion_llm.pipeline.compact.ground import Problem
from legion_llm.pipeline.compact.render import (
    PER_PLAN,
    AgentItem,
    CheckItem,
    DecisionItem,
    DeliverableItem,
    FileItem,
    PhaseDigest,
    RequirementItem,
)

_PLAN = r"\d+(?:\.\d+)*(?:-\d+[a-z]?)?"
_ITEM = re.compile(r"^[-*+]\s+(.*)$")
_PLAN_HEAD = re.compile(
    rf"^(?:\*\*)?(?:Plan\s+)?(?P<plan>{_PLAN}|\S+?)(?P<name>[^*:]*?)(?:\*\*)?"
    r"(?:\s*\((?P<status>[^()]*)\))?\s*(?::|\s[—–]\s|$)\s*(?P<text>.*)$",
    re.IGNORECASE,
)
_DECISION = re.compile(rf"^\(({_PLAN}|[^)]*)\)\s*(.*)$")
# `- AUTH-01: PASS — evidence`: the id is the line's first word, whatever its shape (`UX-STATES`,
# `REQ-sizes-five`, `R1.1–R1.4`): which ids are requirements is the facts' to say, not a regex's
_VERDICT = re.compile(
    r"^(?:\*\*|`)?(?P<id>(?!Plan\b)[^\s:*`|]+)(?:\*\*|`)?\s*(?::|\s[—–-])\s*(?:\*\*)?"
    r"(?P<verdict>PASS|FAIL|PARTIAL|NOT VERIFIED)(?:\*\*)?\b\s*(?:[—–:-]\s*)?(?P<evidence>.*)$",
    re.IGNORECASE,
)
_CHECK = re.compile(rf"^Plan\s+(?P<plan>{_PLAN}|\S+?)\s*:\s*(?P<result>.*)$", re.IGNORECASE)
_AGENT = re.compile(r"^(?P<agent>[^:]+?):\s*(?P<plans>[^—]*?)(?:\s+—\s+(?P<work>.*))?$")
_WORDS: dict[str, Verdict] = {
    "pass": "pass", "fail": "fail", "partial": "partial", "not verified": "not verified"
}  # fmt: skip


@dataclass
class Claimed:
    """What a compacted file claims, read back as a digest."""

    digest: PhaseDigest
    satisfied: list[str] = field(default_factory=list)

    def verdict_problems(self, facts: PhaseFacts) -> list[Problem]:
        """`requirements_satisfied` ids that no summary of this phase reports as satisfied."""
        problems = []
        for rid in self.satisfied:
            if rid not in facts.requirement_ids:
                continue  # reported by the presence check as an invention, or a range literal
            truth = facts.grounded(rid)
            if truth.verdict != "pass":
                why = f"the summaries say {truth.verdict.upper()}" if truth.plans else (
                    "no summary of this phase reports it")  # fmt: skip
                problems.append(Problem("ungrounded-verdict", "verification",
                                        f"{rid} is listed as satisfied, but {why}", id=rid))  # fmt: skip
        return problems


def _items(section: Section) -> list[tuple[str, list[str]]]:
    """Top-level bullets with their nested bullets."""
    found: list[tuple[str, list[str]]] = []
    for line in section.lines:
        match = _ITEM.match(line.strip())
        if not match:
            continue
        if line[:1] in (" ", "\t") and found:
            found[-1][1].append(match.group(1).strip())
        else:
            found.append((match.group(1).strip(), []))
    return found


# render.py's own head: `**03-01 Name**` (a name may hold `:`), an optional `(status)`, `: `
_BOLD_HEAD = re.compile(
    rf"^\*\*(?:Plan\s+)?(?P<plan>{_PLAN}|\S+?)(?P<name>(?:\s[^*]*)?)\*\*"
    r"(?:\s*\((?P<status>.*?)\))?:\s*(?P<text>.*)$"
)


def _deliverables(section: Section) -> list[DeliverableItem]:
    out = []
    for head, nested in _items(section):
        match = _BOLD_HEAD.match(head) or _PLAN_HEAD.match(head)
        if not match:
            continue
        text = match.group("text").strip() or match.group("name").strip()
        out.append(DeliverableItem(plan_id=match.group("plan"), summary=text, follow_ups=nested))
    return out


def _decisions(section: Section) -> list[DecisionItem]:
    out = []
    for head, _ in _items(section):
        match = _DECISION.match(head)
        if not match:
            continue  # a decision that names no plan cannot be held to one plan's decisions
        plan, text = match.group(1), match.group(2)
        text, _, rejected = text.partition(" Rejected: ")
        decision, _, why = text.partition(" Why: ")
        # render.py ends a decision and its rationale with a period: not the author's words
        decision, why = decision.strip().removesuffix("."), why.strip().removesuffix(".")
        out.append(DecisionItem(plan_id=plan, decision=decision.strip(), rationale=why.strip(),
                                rejected_alternatives=[r for r in rejected.split("; ") if r]))  # fmt: skip
    return out


def _rows(section: Section) -> list[list[str]]:
    """The cells of every table row in the section."""
    doc = parse_markdown(section.text + "\n")
    return [list(cells.values()) for table in doc.tables for _, cells in doc.rows(table)]


def _files(section: Section) -> list[FileItem]:
    """One item per row: the first cell is the path as written, whatever its shape (render.py
    writes one path a row; a move's row, `old → new`, is the new path moved from the old)."""
    out = []
    for values in _rows(section):
        if len(values) >= 2:
            cell, change = values[0], values[1]
            old, arrow, new = cell.rpartition(" → ")
            path = _cell_path(new if arrow else cell)
            if arrow and change.strip() == "moved":
                change = f"moved from {_cell_path(old)}"
            out.append(FileItem(path=path, change=change))
    return out


def _cell_path(cell: str) -> str:
    """A Files cell's path: backticks around it dropped (render._code adds them)."""
    cell = cell.strip()
    return cell[1:-1] if len(cell) > 1 and cell[0] == cell[-1] == "`" else cell


def _verification(section: Section) -> tuple[list[RequirementItem], list[CheckItem]]:
    verdicts, checks = [], []
    for head, _ in _items(section):
        if match := _VERDICT.match(head):
            verdict = _WORDS[match.group("verdict").lower()]
            verdicts.append(RequirementItem(requirement_id=match.group("id"), verdict=verdict,
                                            evidence=match.group("evidence").strip()))  # fmt: skip
        elif match := _CHECK.match(head):
            checks.append(CheckItem(plan_id=match.group("plan"), result=match.group("result")))
    verdicts += _table_verdicts(section)
    return verdicts, checks


def _table_verdicts(section: Section) -> list[RequirementItem]:
    out = []
    for values in _rows(section):
        head = values[0].strip(" *`") if values else ""
        ids = [head] if head and not re.search(r"\s", head) else []
        said = [v.strip(" *").lower() for v in values[1:] if v.strip(" *").lower() in _WORDS]
        if ids and said:
            rest = " ".join(v for v in values[1:] if v.strip(" *").lower() not in _WORDS)
            out.append(RequirementItem(requirement_id=ids[0], verdict=_WORDS[said[0]],
                                       evidence=rest))  # fmt: skip
    return out


def _agents(section: Section) -> list[AgentItem]:
    out = []
    for head, _ in _items(section):
        match = _AGENT.match(head)
        if match and match.group("work"):
            out.append(AgentItem(agent=match.group("agent").strip(), work=match.group("work")))
    return out


def _satisfied(frontmatter: list[str]) -> list[str]:
    for line in frontmatter:
        match = re.match(r"^requirements_satisfied\s*:\s*\[(.*)\]\s*$", line.strip())
        if match:
            return [i.strip().strip("\"'") for i in match.group(1).split(",") if i.strip()]
    return []


_PLAN_SECTION = re.compile(rf"^Plan\s+(?P<plan>{_PLAN})(?:\s*\((?P<status>[^()]*)\))?\s*$")


def _per_plan(body: str) -> PhaseDigest:
    """The claims of the per-plan layout (render.PER_PLAN): `## Plan 02-01 (status)` sections of
    a deliverable line with its follow-ups, `Decision:`, `Files:`, `Check:` and `Agent:` lines."""
    digest = PhaseDigest(deliverables=[], decisions=[], files=[], verification=[], checks=[],
                         agents=[])  # fmt: skip
    for section in sections(body):
        head = _PLAN_SECTION.match(section.title) if section.level == 2 else None
        if not head:
            continue
        plan = head.group("plan")
        for text, nested in _items(section):
            label, _, rest = text.partition(": ")
            if label == "Decision":
                digest.decisions += _decisions(Section("", 2, (f"- ({plan}) {rest}",)))
            elif label == "Files":
                digest.files += [FileItem(path=_cell_path(p), change="named")
                                 for p in rest.split(", ") if p.strip()]  # fmt: skip
            elif label == "Check":
                digest.checks.append(CheckItem(plan_id=plan, result=rest))
            elif label == "Agent":
                digest.agents.append(AgentItem(agent=rest.split(" — ")[0], work=""))
            elif not any(d.plan_id == plan for d in digest.deliverables):
                digest.deliverables.append(DeliverableItem(plan_id=plan, summary=text,
                                                           follow_ups=nested))  # fmt: skip
                digest.files += [FileItem(path=p, change="named") for p in find_paths(text)]
    return digest


def parse_document(text: str) -> Claimed:
    """The claims of a compacted file (see the module docstring)."""
    frontmatter, body = split_frontmatter(text)
    if any(line.strip() == f"layout: {PER_PLAN}" for line in frontmatter):
        digest = _per_plan(body)
        verification = next((s for s in sections(body) if s.title.lower() == "verification"),
                            Section("", 2, ()))  # fmt: skip
        digest.verification, _ = _verification(verification)
        return Claimed(digest, _satisfied(frontmatter))
    found: dict[str, Section] = {}
    for section in sections(body):
        if section.level == 2:
            for name in ("Deliverables", "Decisions", "Files", "Verification", "Agents"):
                if section.title.lower().startswith(name.lower()) and name not in found:
                    found[name] = section
    empty = Section("", 2, ())
    verdicts, checks = _verification(found.get("Verification", empty))
    digest = PhaseDigest(
        deliverables=_deliverables(found.get("Deliverables", empty)),
        decisions=_decisions(found.get("Decisions", empty)),
        files=_files(found.get("Files", empty)),
        verification=verdicts,
        checks=checks,
        agents=_agents(found.get("Agents", empty)),
    )
    return Claimed(digest, _satisfied(frontmatter))
