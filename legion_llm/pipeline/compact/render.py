"""The structured content an engine proposes for a compacted phase, and the exact file it becomes.

The engine (Claude or the offline step) fills a `PhaseDigest`; only this module writes markdown,
in the `{NN}-COMPACTED.md` format of memory-manager Section 12:

    ---
    phase: {NN}-{name}
    compacted: {date}
    original_summaries: [{list of summary files}]
    requirements_satisfied: [{list of requirement IDs}]
    ---

    # Phase {N}: {name} — Compacted Summary
    ## Deliverables / ## Decisions / ## Files Modified (| File | Change |) / ## Verification / ## Agents

Frontmatter keys added only when they carry something: `requirements_not_satisfied` (ids whose
verdict is not pass), `forced` / `forced_reason` (preconditions overridden) and `parts_from`
(which plans which engine proposed, when the cost cap left some to the offline engine).
Plan outcomes and agents come from the summaries themselves (deterministic), not the engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from pydantic import BaseModel, Field, field_validator

from legion_llm.memory.phases.extract import PlanFacts, Verdict, find_paths, sort_ids
from legion_llm.memory.phases.markdown import cut_to
from legion_llm.memory.table import encode_cell

SECTIONS = ("Deliverables", "Decisions", "Files Modified", "Verification", "Agents")
# the deliverable of a plan whose summary says nothing a deliverable could be
NOT_RECORDED = "not recorded in the summary"
# the longest text each field may hold, in characters (repair cuts a longer one at a sentence)
LIMITS = {
    "summary": 600, "follow_up": 300, "decision": 300, "rationale": 400, "rejected": 200,
    "change": 300, "evidence": 300, "result": 200, "work": 200,
}  # fmt: skip
MIN_LIMIT = 40  # no text is cut shorter than this to make a document fit


class DeliverableItem(BaseModel):
    """What one plan delivered."""

    plan_id: str = Field(description="The plan id exactly as given (for example 03-01 or 02-01a).")
    summary: str = Field(description="What the plan built or changed, in one or two sentences.")
    follow_ups: list[str] = Field(
        description="Open questions, deferrals, escalations and known issues worth keeping; "
        "an empty list when there are none."
    )


class DecisionItem(BaseModel):
    """A decision made during the phase, with why, and what was rejected."""

    plan_id: str = Field(description="The plan id the decision was made in.")
    decision: str = Field(description="The decision, one sentence.")
    rationale: str = Field(description="Why, one sentence; empty if the summary gives none.")
    rejected_alternatives: list[str] = Field(
        description="Alternatives the summary says were rejected; empty if none."
    )


class FileItem(BaseModel):
    """One file the phase touched or named."""

    path: str = Field(description="The path exactly as written in the summaries.")
    change: str = Field(description="What changed in it (or why it is named), a short phrase.")


class RequirementItem(BaseModel):
    """The verification verdict of one requirement id."""

    requirement_id: str = Field(description="The requirement id exactly as given.")
    verdict: Verdict = Field(description="pass, partial, fail, or not verified.")
    evidence: str = Field(description="One short line: what shows the verdict.")

    @field_validator("verdict", mode="before")
    @classmethod
    def _as_written(cls, value: object) -> object:
        """`PASS`, `Not Verified`, `not_verified`: the verdicts as the digest prints them."""
        if isinstance(value, str):
            return " ".join(value.replace("_", " ").split()).lower()
        return value


class CheckItem(BaseModel):
    """The verification result of one plan."""

    plan_id: str = Field(description="The plan id exactly as given.")
    result: str = Field(description="Pass/fail counts and any failing check, one line.")


class AgentItem(BaseModel):
    """What one agent did in the phase."""

    agent: str = Field(description="The agent id exactly as written in the summaries.")
    work: str = Field(description="What the agent executed, one short phrase.")


class PhaseDigest(BaseModel):
    """The structured content of a compacted phase summary."""

    deliverables: list[DeliverableItem] = Field(description="One entry per plan, in plan order.")
    decisions: list[DecisionItem] = Field(description="Key decisions with rationale.")
    files: list[FileItem] = Field(description="Every file path from the summaries, once.")
    verification: list[RequirementItem] = Field(description="One entry per requirement id.")
    checks: list[CheckItem] = Field(description="One entry per plan: its verification result.")
    agents: list[AgentItem] = Field(description="One entry per agent that executed plans.")


def fit_lengths(digest: PhaseDigest, scale: float = 1.0) -> tuple[PhaseDigest, list[str]]:
    """Every text cut to its field's limit (LIMITS, times `scale`) at a sentence boundary, and
    one note per text that was cut; a text whose first word alone is over it stays whole."""
    notes: list[str] = []

    def fit(text: str, name: str, key: str) -> str:
        limit = max(MIN_LIMIT, int(LIMITS[name] * scale))
        if len(text) <= limit:
            return text
        cut = cut_to(text, limit)
        if cut and cut != " ".join(text.split()):
            notes.append(f"cut the {name.replace('_', '-')} of {key} to {limit} characters")
            return cut
        return text

    return digest.model_copy(update={
        "deliverables": [d.model_copy(update={
            "summary": fit(d.summary, "summary", d.plan_id),
            "follow_ups": [fit(f, "follow_up", d.plan_id) for f in d.follow_ups]})
            for d in digest.deliverables],
        "decisions": [c.model_copy(update={
            "decision": fit(c.decision, "decision", c.plan_id),
            "rationale": fit(c.rationale, "rationale", c.plan_id),
            "rejected_alternatives": [fit(r, "rejected", c.plan_id)
                                      for r in c.rejected_alternatives]})
            for c in digest.decisions],
        "files": [f.model_copy(update={"change": fit(f.change, "change", f.path)})
                  for f in digest.files],
        "verification": [r.model_copy(update={
            "evidence": fit(r.evidence, "evidence", r.requirement_id)})
            for r in digest.verification],
        "checks": [c.model_copy(update={"result": fit(c.result, "result", c.plan_id)})
                   for c in digest.checks],
        "agents": [a.model_copy(update={"work": fit(a.work, "work", a.agent)})
                   for a in digest.agents],
    }), notes  # fmt: skip


@dataclass(frozen=True)
class Header:
    """What the pipeline (not the engine) decides: names, dates, the override note."""

    phase_slug: str
    phase_key: str
    phase_name: str
    summaries: tuple[str, ...]
    plans: tuple[PlanFacts, ...]
    compacted: date
    forced_reason: str | None = None
    parts_from: str | None = None  # which plans which engine wrote, when more than one did
    layout: str = "sections"  # or, for a phase the usual layout would outgrow: TERSE, PER_PLAN

    @property
    def terse(self) -> bool:
        return self.layout != "sections"


# the usual sections with their least words (no outcome words, no evidence-free filler)
TERSE = "terse"
# a phase so small that even the terse sections outgrow it: one short section per plan
# (its deliverable, decisions, files and check on a line each) and the Verification section
PER_PLAN = "per-plan"


def _flow(items: Iterable[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _frontmatter(header: Header, digest: PhaseDigest) -> list[str]:
    satisfied = [r.requirement_id for r in digest.verification if r.verdict == "pass"]
    other = [r.requirement_id for r in digest.verification if r.verdict != "pass"]
    lines = [
        "---",
        f"phase: {header.phase_slug}",
        f"compacted: {header.compacted.isoformat()}",
        f"original_summaries: {_flow(header.summaries)}",
        f"requirements_satisfied: {_flow(sort_ids(dict.fromkeys(satisfied)))}",
    ]
    if other and not header.terse:
        lines.append(f"requirements_not_satisfied: {_flow(sort_ids(dict.fromkeys(other)))}")
    if header.forced_reason:
        reason = _terse_reason(header.forced_reason) if header.terse else header.forced_reason
        lines += ["forced: true", f"forced_reason: {_yaml_text(reason)}"]
    if header.parts_from:
        lines.append(f"parts_from: {_yaml_text(header.parts_from)}")
    if header.layout == PER_PLAN:
        lines.append(f"layout: {PER_PLAN}")
    return [*lines, "---"]


def _terse_reason(reason: str) -> str:
    """The --force note in few words: which preconditions were overridden, not every plan."""
    parts = []
    for part in reason.split("; "):
        missing = re.match(r"^plan\(s\) (.+) have a PLAN but no SUMMARY$", part)
        if "not marked complete" in part:
            parts.append("incomplete")
        elif missing:
            parts.append(f"{missing.group(1).count(',') + 1} plan(s) lack a SUMMARY")
        else:
            parts.append(part)
    return "; ".join(parts)


def _yaml_text(text: str) -> str:
    return '"' + " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _deliverables(header: Header, digest: PhaseDigest) -> list[str]:
    by_plan = {d.plan_id: d for d in digest.deliverables}
    lines = []
    for plan in header.plans:
        item = by_plan.get(plan.id)
        label = f"**{plan.id} {plan.name}**" if plan.name else f"**{plan.id}**"
        status = plan.status or ("" if header.terse else plan.outcome)
        text = _one_line(item.summary) if item else "(no deliverable proposed)"
        text = text or NOT_RECORDED
        lines.append(f"- {label}" + (f" ({status})" if status else "") + f": {text}")
        lines += [f"  - {_one_line(f)}" for f in (item.follow_ups if item else []) if f.strip()]
    known = {p.id for p in header.plans}
    for item in digest.deliverables:
        if item.plan_id not in known:
            lines.append(f"- **{item.plan_id}**: {_one_line(item.summary)}")
    return lines


def _decisions(digest: PhaseDigest) -> list[str]:
    lines = []
    for item in digest.decisions:
        text = _one_line(item.decision)
        text += "" if text.endswith((".", "!", "?")) else "."
        if item.rationale.strip():
            why = _one_line(item.rationale)
            text += f" Why: {why}" + ("" if why.endswith((".", "!", "?")) else ".")
        if item.rejected_alternatives:
            text += " Rejected: " + "; ".join(_one_line(r) for r in item.rejected_alternatives)
        lines.append(f"- ({item.plan_id}) {text}")
    return lines or ["- None recorded."]


def _code(path: str) -> str:
    """A path as a table cell: bare unless markdown would mangle it (`*`, `__`)."""
    return f"`{path}`" if "*" in path or "__" in path or path.startswith("_") else path


def _files(digest: PhaseDigest, terse: bool = False) -> list[str]:
    """One row per file (a move is one `from → to` row): never a cell of many paths, never an
    empty or punctuation-only cell."""
    lines = ["| File | Change |", "|-|-|" if terse else "|------|--------|"]
    for item in digest.files:
        change = _one_line(item.change).strip(" -")
        moved = _MOVED.fullmatch(change) if change.startswith("moved from") else None
        if moved:
            cell, change = f"{_code(moved.group(1))} → {_code(item.path)}", "moved"
        else:
            cell = _code(item.path)
        if not _WORDISH.search(change):
            change = "named"
        lines.append(f"| {encode_cell(cell)} | {_cell(change)} |")
    return lines


_MOVED = re.compile(r"moved from `?([^`\s]+)`?")
_WORDISH = re.compile(r"\w")


@lru_cache(maxsize=1024)
def _cell(text: str) -> str:
    return encode_cell(text)


def _verification(digest: PhaseDigest) -> list[str]:
    lines = [
        f"- {r.requirement_id}: {r.verdict.upper()}"
        + (f" — {_one_line(r.evidence)}" if r.evidence.strip() else "")
        for r in digest.verification
    ]
    lines += [f"- Plan {c.plan_id}: {_one_line(c.result)}" for c in digest.checks]
    return lines or ["- No requirement ids recorded."]


def _agents(header: Header, digest: PhaseDigest) -> list[str]:
    plans_by_agent: dict[str, list[PlanFacts]] = {}
    for plan in header.plans:
        plans_by_agent.setdefault(plan.agent or "", []).append(plan)
    work = {a.agent: _one_line(a.work) for a in digest.agents if a.work.strip()}
    lines = []
    for agent, plans in plans_by_agent.items():
        names = ", ".join(p.id for p in plans)
        who = agent or ("none recorded" if header.terse else "(no agent recorded)")
        extra = f" — {work[agent]}" if agent in work else ""
        lines.append(f"- {who}: {names}{extra}")
    return lines


def render(header: Header, digest: PhaseDigest) -> str:
    """The complete `{NN}-COMPACTED.md` text."""
    body = [
        *_frontmatter(header, digest),
        "",
        f"# Phase {header.phase_key}: {header.phase_name} — Compacted Summary",
    ]
    if header.layout == PER_PLAN:
        body += _per_plan(header, digest)
        body += ["", "## Verification", *_verification(digest.model_copy(update={"checks": []}))]
        return "\n".join(body) + "\n"
    parts = {
        "Deliverables": _deliverables(header, digest),
        "Decisions": _decisions(digest),
        "Files Modified": _files(digest, header.terse),
        "Verification": _verification(digest),
        "Agents": _agents(header, digest),
    }
    for title in SECTIONS:
        body += ["", f"## {title}", *parts[title]]
    return "\n".join(body) + "\n"


def _per_plan(header: Header, digest: PhaseDigest) -> list[str]:
    """`## Plan 02-01 (status)` and its lines: deliverable, decisions, files, check, agent."""
    by_plan = {d.plan_id: d for d in digest.deliverables}
    owner = _file_owners(header, digest)
    lines: list[str] = []
    for plan in header.plans:
        item = by_plan.get(plan.id)
        lines += ["", f"## Plan {plan.id}" + (f" ({plan.status})" if plan.status else "")]
        text = _one_line(item.summary) if item and item.summary.strip() else NOT_RECORDED
        said = [f"- {text}"]
        said += [f"  - {_one_line(f)}" for f in (item.follow_ups if item else []) if f.strip()]
        said += [f"- Decision: {line[len(f'- ({plan.id}) '):]}" for line in _decisions(digest)
                 if line.startswith(f"- ({plan.id}) ")]  # fmt: skip
        lines += said
        named = set(find_paths("\n".join(said)))  # a path its lines name needs no repeat
        files = [_code(f.path) for f in digest.files
                 if owner.get(f.path) == plan.id and f.path not in named]  # fmt: skip
        lines += [f"- Files: {', '.join(files)}"] if files else []
        lines += [f"- Check: {_one_line(c.result)}" for c in digest.checks if c.plan_id == plan.id]
        if plan.agent:
            lines.append(f"- Agent: {plan.agent}")
    return lines


def _file_owners(header: Header, digest: PhaseDigest) -> dict[str, str]:
    """Each file under the first plan that names it (else the first plan)."""
    first = header.plans[0].id if header.plans else ""
    owners = {}
    for item in digest.files:
        naming = [p.id for p in header.plans if item.path in p.paths]
        owners[item.path] = naming[0] if naming else first
    return owners


# ---------------------------------------------------------------- merging map results


def _verdict(verdicts: Sequence[str]) -> Verdict:
    known = [v for v in verdicts if v != "not verified"]
    if not known:
        return "not verified"
    if all(v == known[0] for v in known):
        return known[0]  # type: ignore[return-value]
    return "partial" if any(v == "pass" for v in known) else "fail"


def merge(digests: Sequence[PhaseDigest]) -> PhaseDigest:
    """One digest from the plan-by-plan ones: entries joined by plan, path, id and agent."""
    deliverables: dict[str, DeliverableItem] = {}
    for item in (d for digest in digests for d in digest.deliverables):
        if item.plan_id in deliverables:
            old = deliverables[item.plan_id]
            deliverables[item.plan_id] = DeliverableItem(
                plan_id=item.plan_id,
                summary=f"{old.summary} {item.summary}".strip(),
                follow_ups=[*old.follow_ups, *item.follow_ups],
            )
        else:
            deliverables[item.plan_id] = item
    decisions = list({(d.plan_id, d.decision): d for g in digests for d in g.decisions}.values())
    files: dict[str, list[str]] = {}
    for file in (f for digest in digests for f in digest.files):
        changes = files.setdefault(file.path, [])
        if file.change not in changes:
            changes.append(file.change)
    requirements: dict[str, list[RequirementItem]] = {}
    for req in (r for digest in digests for r in digest.verification):
        requirements.setdefault(req.requirement_id, []).append(req)
    agents: dict[str, list[str]] = {}
    for agent in (a for digest in digests for a in digest.agents):
        agents.setdefault(agent.agent, []).append(agent.work)
    return PhaseDigest(
        deliverables=list(deliverables.values()),
        decisions=decisions,
        files=[FileItem(path=p, change="; ".join(c)) for p, c in files.items()],
        verification=[
            RequirementItem(
                requirement_id=rid,
                verdict=_verdict([i.verdict for i in items]),
                evidence="; ".join(dict.fromkeys(i.evidence for i in items if i.evidence)),
            )
            for rid, items in requirements.items()
        ],
        checks=list({c.plan_id + c.result: c for g in digests for c in g.checks}.values()),
        agents=[AgentItem(agent=a, work="; ".join(dict.fromkeys(w))) for a, w in agents.items()],
    )
