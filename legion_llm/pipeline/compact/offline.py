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
from legion_llm.memory.phases.extract import PhaseFacts
from legion_llm.memory.phases.markdown import first_clause
from legion_llm.memory.phases.statements import (
    DecisionFact,
    PlanDoc,
    PlanStatements,
    first_content,
    is_content,
    plan_statements,
)
from legion_llm.pipeline.compact.files import file_items
from legion_llm.pipeline.compact.render import (
    NOT_RECORDED,
    AgentItem,
    CheckItem,
    DecisionItem,
    DeliverableItem,
    FileItem,
    PhaseDigest,
    RequirementItem,
    fit_lengths,
)

PROMPT = "compact-phase"
TARGET_RATIO = 0.40
MAX_RATIO = 0.50
MINIMAL_WORDS = 12  # a deliverable at the least detail: its first words, never nothing
MINIMAL_DECISIONS = 2  # per plan, at the least detail (the first ones a summary lists)
# the evidence of an id no summary of the phase reports (the ROADMAP's or a declared one)
UNREPORTED = "not reported by the summaries"


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


def _deliverable(plan: PlanStatements, detail: Detail) -> DeliverableItem:
    lead = plan.one_liner if plan.one_liner and is_content(plan.one_liner) else None
    found = list(plan.deliverables)
    chosen = ([lead] if lead else []) + (found if detail.all_deliverables or not lead else [])
    if not detail.all_deliverables:
        chosen = chosen[:1]
    summary = "; ".join(chosen) or first_content(plan.parts) or NOT_RECORDED
    follow = list(plan.follow_ups) if detail.follow_ups or plan.facts.outcome != "success" else []
    if not detail.follow_ups:
        follow = [first_clause(f) for f in follow]
        summary = first_clause(summary) if not detail.all_deliverables else summary
    if detail.minimal:
        summary = " ".join(summary.split()[:MINIMAL_WORDS]).rstrip(",;:")
    return DeliverableItem(plan_id=plan.plan, summary=summary, follow_ups=follow)


# ---------------------------------------------------------------- decisions


def _decisions(plan: PlanStatements, detail: Detail) -> list[DecisionItem]:
    found = [_decision(plan.plan, fact, detail) for fact in plan.decisions]
    return found[:MINIMAL_DECISIONS] if detail.minimal else found


def _decision(plan_id: str, fact: DecisionFact, detail: Detail) -> DecisionItem:
    decision, rejected = fact.decision, list(fact.rejected)
    if detail.minimal:
        decision = re.split(r",? (?:so that|so|because|which|since) ", decision, maxsplit=1)[0]
        rejected = []
    rationale = fact.rationale if detail.rationale else ""
    return DecisionItem(plan_id=plan_id, decision=decision, rationale=rationale,
                        rejected_alternatives=rejected)  # fmt: skip


# ---------------------------------------------------------------- verification


def _requirement(rid: str, plans: list[PlanStatements], detail: Detail) -> RequirementItem:
    """The grounded verdict (extract.py decides it for every engine) and its evidence."""
    facts = PhaseFacts((), (), tuple({p.plan: p.facts for p in plans}.values()))
    grounded = facts.grounded(rid)
    if not grounded.plans:
        return RequirementItem(requirement_id=rid, verdict="not verified", evidence=UNREPORTED)
    reporting = [p for p in plans if p.plan in grounded.plans]
    notes = [] if detail.minimal else [_note(p, rid, detail) for p in reporting]
    where = ", ".join(dict.fromkeys(p.plan for p in reporting))
    kept = list(dict.fromkeys(n for n in notes if n))
    evidence = f"{'; '.join(kept)} ({where})" if kept else f"reported by {where}"
    return RequirementItem(requirement_id=rid, verdict=grounded.verdict, evidence=evidence)


def _note(plan: PlanStatements, rid: str, detail: Detail) -> str:
    """A requirements-section note for the id, else the status sentence reporting it, if open."""
    note = plan.note(rid)
    if note is None:
        prose = [r for r in plan.facts.reports if r.id == rid and r.source == "prose"]
        stated = [r.text for r in prose if r.stated != "pass"]
        note = stated[0] if stated else None
    if not note or not is_content(note):
        return ""
    return note if detail.evidence else first_clause(note)


def _check(plan: PlanStatements, detail: Detail) -> CheckItem:
    return CheckItem(plan_id=plan.plan, result=plan.check.sentence(1 if detail.minimal else 2))


# ---------------------------------------------------------------- the step


def digest_at(ctx: CompactContext, detail: Detail) -> PhaseDigest:
    """The digest at one level of detail, every text within its limit (render.LIMITS)."""
    plans = [plan_statements(doc.facts, doc.text) for doc in ctx.docs]
    agents = dict.fromkeys(p.facts.agent for p in plans if p.facts.agent)
    digest = PhaseDigest(
        deliverables=_merge_parts([_deliverable(p, detail) for p in plans]),
        decisions=[d for p in plans for d in _decisions(p, detail)],
        files=file_items(plans, ctx.paths, full=detail.full_files, brief=detail.minimal),
        verification=[_requirement(rid, plans, detail) for rid in ctx.requirement_ids],
        checks=[_check(p, detail) for p in plans],
        agents=[AgentItem(agent=a, work="") for a in agents if a],
    )
    return fit_lengths(digest)[0]


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
    """The most detailed level whose rendered size stays near the target share (see LEVELS);
    for a phase so small that even the least detail is longer than its originals, the minimal
    digest when it is shorter (a compacted file is never longer than what it compacts)."""
    chosen = digest_at(ctx, LEVELS[0])
    budget = max(ctx.tokens_original, 1)
    if ctx.measure(chosen) > budget:
        least = minimal_digest(ctx)
        return least if ctx.measure(least) < ctx.measure(chosen) else chosen
    for detail in LEVELS[1:]:
        if ctx.measure(chosen) / budget >= ctx.target:
            break
        candidate = digest_at(ctx, detail)
        if ctx.measure(candidate) / budget > MAX_RATIO:
            break
        chosen = candidate
    return chosen


def minimal_digest(ctx: CompactContext) -> PhaseDigest:
    """The least a compacted file can honestly say, the last rung of settle.py's ladder: each
    plan's first words (or NOT_RECORDED), its first decision, every path `named`,
    every id with its grounded verdict and the plans reporting it; no checks, no agent notes."""
    plans = [plan_statements(doc.facts, doc.text) for doc in ctx.docs]
    least = LEVELS[0]
    return PhaseDigest(
        deliverables=_merge_parts(
            [DeliverableItem(plan_id=p.plan, summary=_first_words(p), follow_ups=[]) for p in plans]
        ),
        decisions=[_decision(p.plan, p.decisions[0], least) for p in plans if p.decisions],
        files=[FileItem(path=path, change="named") for path in ctx.paths],
        verification=[_requirement(rid, plans, least) for rid in ctx.requirement_ids],
        checks=[],
        agents=[
            AgentItem(agent=a, work="") for a in dict.fromkeys(p.facts.agent for p in plans) if a
        ],
    )


def _first_words(plan: PlanStatements) -> str:
    lead = plan.one_liner if plan.one_liner and is_content(plan.one_liner) else None
    text = lead or next(iter(plan.deliverables), None) or first_content(plan.parts)
    words = first_clause(text).split()[:MINIMAL_WORDS] if text else []
    return " ".join(words).rstrip(",;:") or NOT_RECORDED


@offline_step(PROMPT)
def compact_offline(call: OfflineCall) -> PhaseDigest:
    if not isinstance(call.context, CompactContext):
        raise TypeError("the offline compaction step needs a CompactContext")
    return compact_extractive(call.context)
