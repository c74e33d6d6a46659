"""The offline engine's compaction: an extractive digest, no network, no key.

It keeps what Section 12 preserves and drops what it trims: deliverables (a GSD one-liner or
the first items of What Was Done / Accomplishments / Completed Tasks), decisions with their
rejected alternatives, every file with the description its Files section gives, verdicts per
requirement and per plan (FAIL rows of Verification Commands tables included), and the open
issues of partial and failed plans. Command output, step logs, diffs, selection tables and
repeated context are never copied.

Detail is added level by level (rationale, more deliverable items, full file descriptions,
follow-ups, evidence) while the rendered document stays under the target share of the
originals; every level keeps every requirement id and path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from legion_llm.llm.offline import OfflineCall, offline_step
from legion_llm.memory.phases.extract import PhaseFacts, PlanFacts, Section, ids_in_line
from legion_llm.pipeline.compact.files import file_items
from legion_llm.pipeline.compact.render import (
    AgentItem,
    CheckItem,
    DecisionItem,
    DeliverableItem,
    PhaseDigest,
    RequirementItem,
)
from legion_llm.pipeline.compact.text import PlanParts, first_clause, items, sentences, table_rows
from legion_llm.pipeline.grounding import content_terms, is_placeholder

PROMPT = "compact-phase"
TARGET_RATIO = 0.40
MAX_RATIO = 0.50
MINIMAL_WORDS = 12  # a deliverable at the least detail: its first words, never nothing
MINIMAL_DECISIONS = 2  # per plan, at the least detail (the first ones a summary lists)
_DELIVER = ("what was", "what changed", "accomplishment", "deliverable", "changes", "tasks completed",
            "completed tasks", "summary", "what")  # fmt: skip
_FOLLOW = ("issue", "escalation", "deviation", "error details", "known stub", "handoff")


@dataclass(frozen=True)
class PlanDoc:
    """One plan summary (or one part of a very long one) as the engine sees it."""

    facts: PlanFacts
    text: str
    part: str = ""


@dataclass(frozen=True)
class CompactContext:
    """What the offline step gets besides the prompt variables."""

    docs: tuple[PlanDoc, ...]
    requirement_ids: tuple[str, ...]
    paths: tuple[str, ...]
    tokens_original: int
    measure: Callable[[PhaseDigest], int]
    target: float = TARGET_RATIO
    problems: tuple[dict[str, Any], ...] = ()  # on a re-ask: what the last proposal got wrong


@dataclass(frozen=True)
class Detail:
    minimal: bool = False
    rationale: bool = False
    all_deliverables: bool = False
    full_files: bool = False
    follow_ups: bool = False
    evidence: bool = False


LEVELS = (
    Detail(minimal=True),
    Detail(),
    Detail(rationale=True),
    Detail(rationale=True, all_deliverables=True),
    Detail(rationale=True, all_deliverables=True, full_files=True),
    Detail(rationale=True, all_deliverables=True, full_files=True, follow_ups=True),
    Detail(rationale=True, all_deliverables=True, full_files=True, follow_ups=True, evidence=True),
)


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


def _deliverable(plan: PlanParts, detail: Detail) -> DeliverableItem:
    found = [i for s in plan.matching(_DELIVER) for i in items(s)]
    lead = _one_liner(plan)
    chosen = ([lead] if lead else []) + (found if detail.all_deliverables or not lead else [])
    chosen = [c for c in chosen if content_terms(c)]  # never a generic line ("Followed plan")
    if not detail.all_deliverables:
        chosen = chosen[:1]
    summary = "; ".join(chosen) or _first_content(plan)
    follow = _follow_ups(plan) if detail.follow_ups or plan.facts.outcome != "success" else []
    if not detail.follow_ups:
        follow = [first_clause(f) for f in follow]
        summary = first_clause(summary) if not detail.all_deliverables else summary
    if detail.minimal:
        summary = " ".join(summary.split()[:MINIMAL_WORDS]).rstrip(",;:")
    return DeliverableItem(plan_id=plan.facts.id, summary=summary, follow_ups=follow)


def _first_content(plan: PlanParts) -> str:
    """The plan's name, else its first list item or paragraph that says something."""
    candidates = [plan.facts.name or "", *(i for s in plan.sections for i in items(s))]
    return next((c for c in candidates if content_terms(c)), plan.facts.name or plan.facts.id)


def _follow_ups(plan: PlanParts) -> list[str]:
    found: list[str] = []
    for section in plan.matching(_FOLLOW):
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
    return [f for f in found if not _is_none(f) and not is_placeholder(f)]


def _error_lines(section: Section) -> list[str]:
    """`**Failing task**`, `**Root cause**` and `**State left behind**` lines of Error Details."""
    wanted = ("failing", "root cause", "state left")
    lines = [line.strip().replace("**", "") for line in section.lines]
    return [line for line in lines if line.lower().startswith(wanted)]


def _escalation(row: dict[str, str]) -> str:
    status = row.get("status", "")
    return f"Escalation: {row['decision']} — {status}: {row.get('resolution', '')}".rstrip(": ")


def _is_none(text: str) -> bool:
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


def _decisions(plan: PlanParts, detail: Detail) -> list[DecisionItem]:
    body = [i for s in plan.matching(("decision",)) for i in items(s)]
    if not body or any("frontmatter" in i.lower() for i in body):
        body = _frontmatter_decisions(plan.frontmatter) or body
    found = [_decision(plan.facts.id, text, detail) for text in body if not _is_none(text)]
    kept = [d for d in found if content_terms(d.decision)]
    return kept[:MINIMAL_DECISIONS] if detail.minimal else kept


def _decision(plan_id: str, text: str, detail: Detail) -> DecisionItem:
    parts = sentences(text)
    rejected = [re.sub(r"^Rejected(?: alternatives?)?:?\s*", "", s) for s in parts
                if s.lower().startswith("rejected")]  # fmt: skip
    kept = [s for s in parts if not s.lower().startswith("rejected")]
    while len(kept) > 1 and not content_terms(kept[0]):
        kept.pop(0)  # "Followed plan. Idempotency key is ..." decides the second sentence
    rest = " ".join(kept) or text
    decision = first_clause(rest)
    if detail.minimal:
        decision = re.split(r",? (?:so that|so|because|which|since) ", decision, maxsplit=1)[0]
        rejected = []
    rationale = rest[len(decision) :].strip(" .;—") if detail.rationale else ""
    return DecisionItem(plan_id=plan_id, decision=decision, rationale=rationale,
                        rejected_alternatives=rejected)  # fmt: skip


# ---------------------------------------------------------------- verification


def _requirement_notes(plan: PlanParts) -> dict[str, str]:
    notes: dict[str, str] = {}
    for section in plan.matching(("requirement",)):
        for item in items(section):
            head, rest = _split_head(item)
            for rid in ids_in_line(head):
                notes.setdefault(rid, rest)
    return notes


def _split_head(item: str) -> tuple[str, str]:
    match = re.match(r"^(.*?)(?:\s[—–]\s|:\s)(.*)$", item)
    return (match.group(1), match.group(2)) if match else (item, "")


def _requirement(rid: str, plans: list[PlanParts], detail: Detail) -> RequirementItem:
    """The grounded verdict (extract.py decides it for every engine) and its evidence."""
    facts = PhaseFacts((), (), tuple({p.facts.id: p.facts for p in plans}.values()))
    grounded = facts.grounded(rid)
    if not grounded.plans:
        return RequirementItem(requirement_id=rid, verdict="not verified",
                               evidence="named in ROADMAP.md; no plan summary reports it")  # fmt: skip
    reporting = [p for p in plans if p.facts.id in grounded.plans]
    notes = [] if detail.minimal else [_note(p, rid, detail) for p in reporting]
    where = ", ".join(dict.fromkeys(p.facts.id for p in reporting))
    kept = list(dict.fromkeys(n for n in notes if n))
    evidence = f"{'; '.join(kept)} ({where})" if kept else f"reported by {where}"
    return RequirementItem(requirement_id=rid, verdict=grounded.verdict, evidence=evidence)


def _note(plan: PlanParts, rid: str, detail: Detail) -> str:
    """A requirements-section note for the id, else the status sentence reporting it, if open."""
    note = _requirement_notes(plan).get(rid)
    if note is None:
        prose = [r for r in plan.facts.reports if r.id == rid and r.source == "prose"]
        stated = [r.text for r in prose if r.stated != "pass"]
        note = stated[0] if stated else None
    if not note:
        return ""
    return note if detail.evidence else first_clause(note)


def _check(plan: PlanParts, detail: Detail) -> CheckItem:
    lines: list[str] = []
    for section in plan.matching(("verification", "self-check", "verify")):
        if section.title.lower().startswith("self-check"):
            lines.append(section.title)
        found = [i for i in items(section) if not i.endswith(":")]
        verdicts = _table_verdicts(table_rows(section))
        if not (detail.minimal and verdicts):
            lines += found if detail.evidence else [first_clause(f) for f in found[:1]]
        if verdicts and any(re.search(r"\d+/\d+ .*pass", line) for line in lines):
            verdicts = verdicts[1:]  # the summary already says how many passed
        lines += verdicts
    result = "; ".join(dict.fromkeys(lines)) or "no verification recorded"
    return CheckItem(plan_id=plan.facts.id, result=result)


def _table_verdicts(rows: list[dict[str, str]]) -> list[str]:
    """`n/m checks passed` for a table with a Result column, plus every failing row."""
    judged = [r for r in rows if r.get("result")]
    if not judged:
        return []
    failed = [r for r in judged if "fail" in r["result"].lower()]
    lines = [f"{len(judged) - len(failed)}/{len(judged)} checks passed"]
    for row in failed:
        what = row.get("command") or row.get("check") or next(iter(row.values()))
        lines.append(
            f"FAIL: {what} (exit {row['exit_code']})" if row.get("exit_code") else f"FAIL: {what}"
        )
    return lines


# ---------------------------------------------------------------- the step


def digest_at(ctx: CompactContext, detail: Detail) -> PhaseDigest:
    plans = [PlanParts.of(doc.facts, doc.text) for doc in ctx.docs]
    agents = dict.fromkeys(p.facts.agent for p in plans if p.facts.agent)
    return PhaseDigest(
        deliverables=_merge_parts([_deliverable(p, detail) for p in plans]),
        decisions=[d for p in plans for d in _decisions(p, detail)],
        files=file_items(plans, ctx.paths, full=detail.full_files, brief=detail.minimal),
        verification=[_requirement(rid, plans, detail) for rid in ctx.requirement_ids],
        checks=[_check(p, detail) for p in plans],
        agents=[AgentItem(agent=a, work="") for a in agents if a],
    )


def _merge_parts(found: list[DeliverableItem]) -> list[DeliverableItem]:
    merged: dict[str, DeliverableItem] = {}
    for item in found:
        old = merged.get(item.plan_id)
        merged[item.plan_id] = item if old is None else _add_follow_ups(old, item)
    return list(merged.values())


def _add_follow_ups(old: DeliverableItem, new: DeliverableItem) -> DeliverableItem:
    return DeliverableItem(plan_id=old.plan_id, summary=old.summary,
                           follow_ups=[*old.follow_ups, *new.follow_ups])  # fmt: skip


def compact_extractive(ctx: CompactContext) -> PhaseDigest:
    """The most detailed level whose rendered size stays near the target share (see LEVELS)."""
    chosen = digest_at(ctx, LEVELS[0])
    budget = max(ctx.tokens_original, 1)
    for detail in LEVELS[1:]:
        if ctx.measure(chosen) / budget >= ctx.target:
            break
        candidate = digest_at(ctx, detail)
        if ctx.measure(candidate) / budget > MAX_RATIO:
            break
        chosen = candidate
    return chosen


@offline_step(PROMPT)
def compact_offline(call: OfflineCall) -> PhaseDigest:
    if not isinstance(call.context, CompactContext):
        raise TypeError("the offline compaction step needs a CompactContext")
    return compact_extractive(call.context)
