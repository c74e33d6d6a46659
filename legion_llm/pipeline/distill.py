"""Pattern distillation after a build: outcomes -> candidate groups -> proposals -> verified writes.

prepare (memory/distill_candidates.py): read OUTCOMES.md (and ARCHIVE.md for the IDs that exist),
PATTERNS.md and CATALOG.md; select the candidates the spec names and group them.
engine: `distill-patterns` proposes patterns for a batch of groups (Claude), or the offline step
below distils one pattern per group from its records.
verify (deterministic, here): every Source ID exists and is a candidate; tags are non-empty and
lowercase; the text fields are neither empty nor placeholders; the pattern is not a near-duplicate
(the topic matcher, memory/topics.py) of an existing pattern or of one accepted earlier in the
run; and it is grounded: its content words are mostly found in the summaries, task types and
tags of the outcomes it cites (memory/terms.py).
write: the Store Pattern operation (`add_knowledge`), unless `dry_run`.

Beside the outcomes, the plan summaries they name, or with `phases` every summary of those
phases (pipeline/distill_sources.py): `patterns-established` entries, key decisions of plans that
succeeded, fixes that held, what a summary marks as reusable. Every proposal, from either source
and whoever wrote it, is refused when its Pattern is a status or a file list, and must name
nothing (no name, number, path or identifier) its cited sources do not state: repaired by
cutting the clause, or refused with the reason.

A second run over the same outcomes proposes nothing: outcomes and plans cited by a pattern are
no longer candidates, so there is nothing to ask and nothing to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from legion_llm.llm.engine import Engine
from legion_llm.llm.offline import OfflineCall, offline_step
from legion_llm.memory.catalog import CatalogAgent, load_catalog
from legion_llm.memory.knowledge.read import PATTERNS, KnowledgeRecord
from legion_llm.memory.knowledge.store import read_for_write
from legion_llm.memory.outcomes.distill_candidates import (
    CROSS_DIVISION,
    HIGH_IMPORTANCE,
    REVIEW_FIRST_CYCLE,
    CandidateGroup,
    Selection,
    cited_ids,
    select_candidates,
)
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.phases.find import find_phase
from legion_llm.memory.phases.patterns import SummarySource, phase_sources, plan_sources
from legion_llm.memory.phases.planning import phase_key
from legion_llm.memory.redact import project_redactor, write_warning
from legion_llm.memory.signatures.topics import TopicIndex, topic_terms
from legion_llm.memory.terms import content_terms, grounded, is_placeholder, support, terms_of
from legion_llm.pipeline.distill_sources import (
    PLAN_ID,
    SummaryGroup,
    cited_plans,
    entity_check,
    group_entries,
    not_a_pattern,
    phase_names,
    render_summary_group,
    summary_pattern,
)
from legion_llm.project import MemoryPaths

PROMPT = "distill-patterns"
GROUPS_PER_CALL = 8
PATTERN_THRESHOLD = 0.3  # patterns generalise: calibrated good 0.44-1.0, unrelated 0-0.17
# the context (where and why it worked) may also speak of the agents, the phases and why the
# outcomes were chosen; the reuse criteria look ahead, so one shared term in five is enough
# (calibrated in tests/pipeline/test_distill.py: paraphrases kept, injections and other topics not)
CONTEXT_THRESHOLD = 0.3
REUSE_SHARE = 0.2
# the longest a proposal's field may be (the offline engine's longest over the fixtures: 139,
# 210 and 116); a PATTERNS.md row is read at a glance
MAX_CHARS = {"pattern": 500, "context": 800, "reuse_criteria": 500}
MAX_QUOTING_PLANS = 5  # a context may quote each plan it cites, up to this many


def limits_for(ids: list[str]) -> dict[str, int]:
    """The bounds of a row citing `ids`: its context may quote what each cited plan established
    (the same approach, several summaries), so its bound grows with the plans it cites."""
    plans = min(MAX_QUOTING_PLANS, max(1, sum(bool(PLAN_ID.match(i)) for i in ids)))
    return {**MAX_CHARS, "context": MAX_CHARS["context"] * plans}


SHOWN_CHARS = 300  # of a refused proposal, what the report repeats (a broken model's can be huge)
_WHY_WORDS = (
    "review reviewed passed first cycle importance important succeeded outside division cross "
    "pairing repeat repeating worth reuse reused involving tasks task type work agent agents "
    "phase phases candidate distilled pattern patterns approach"
)
_O_ID = re.compile(r"^O-\d{3,}$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9.+#_/-]*$")


class ProposedPattern(BaseModel):
    """One reusable pattern distilled from candidate outcomes."""

    pattern: str = Field(description="What was done that worked, in one sentence.")
    context: str = Field(description="The situation where it proved effective.")
    reuse_criteria: str = Field(description="When a future agent should apply it again.")
    source: list[str] = Field(
        description="IDs of the candidate outcomes (O-012) and plans (01-02) it rests on."
    )
    tags: list[str] = Field(description="2 to 5 lowercase keywords.")


class PatternProposals(BaseModel):
    """Patterns distilled from the candidate groups; empty when none has learning value."""

    patterns: list[ProposedPattern] = Field(description="The proposed patterns, possibly none.")


@dataclass
class DistillResult:
    written: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    dry_run: bool = False
    prompt_sha256: str | None = None
    warnings: list[str] = field(default_factory=list)
    plans: list[str] = field(default_factory=list)  # candidate plan summaries

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "skipped": self.skipped,
            "dry_run": self.dry_run,
            "candidates": self.candidates,
            "plans": self.plans,
            "groups": self.groups,
            "prompt_sha256": self.prompt_sha256,
        }


@dataclass
class Prepared:
    selection: Selection
    existing: list[KnowledgeRecord]
    known_ids: set[str]
    warnings: list[str]
    summary_groups: list[SummaryGroup] = field(default_factory=list)
    sources: dict[str, list[SummarySource]] = field(default_factory=dict)  # plan id -> summaries
    cited_plans: set[str] = field(default_factory=set)

    def refused_entries(self) -> list[dict[str, str]]:
        """The entries of the summaries read that no group took because they are no pattern
        (a status, a file list): reported as skipped with the reason, never dropped unsaid."""
        return [{"pattern": e.text, "reason": f"an entry of plan {s.plan} ({e.kind}) that {why}"}
                for found in self.sources.values() for s in found for e in s.entries
                if (why := not_a_pattern(e.text)) is not None]  # fmt: skip

    @property
    def groups(self) -> list[CandidateGroup | SummaryGroup]:
        return [*self.selection.groups, *self.summary_groups]


# ---------------------------------------------------------------- prepare


def prepare(
    paths: MemoryPaths, catalog: dict[str, CatalogAgent], phases: list[str] | None = None
) -> Prepared:
    """The candidates: outcome groups and the summaries their plans name, or (`phases`) every
    summary of the phases named, linked to the candidate outcomes naming their plans."""
    outcomes = read_outcomes(paths.outcomes)
    archive = read_outcomes(paths.archive)
    patterns = read_for_write(PATTERNS, paths.patterns)  # refused now, not after the engine's work
    known = {r.id for r in [*outcomes.records, *archive.records] if r.id}
    selection = select_candidates(outcomes.records, catalog, cited_ids(patterns.records))
    warnings = [*outcomes.warnings, *archive.warnings, *patterns.warnings]
    cited = {p for r in patterns.records for p in cited_plans(_source_text(r))}
    plans = [c for c in selection.candidates if not c.is_review]
    if phases:
        found = [s for spec in phases for s in phase_sources(find_phase(paths.root, spec))]
    else:
        named = plan_sources(paths.root, [(c.record.phase, c.record.plan) for c in plans])
        found = list({id(s): s for s in named.values()}.values())
    found = [s for s in found if s.plan not in cited and s.entries]
    by_plan: dict[str, list[SummarySource]] = {}
    for source in found:
        by_plan.setdefault(source.plan, []).append(source)
    naming: dict[tuple[str, str], list[str]] = {}
    for group in selection.groups:  # a plan's outcome, and the reviews of its phase beside it
        for c in group.candidates:
            if c.is_review:
                continue
            key = (phase_key(c.record.phase), c.record.plan.strip())
            naming.setdefault(key, []).append(c.id)
            naming[key] += [r.id for r in group.candidates
                            if r.is_review and phase_key(r.record.phase) == key[0]]  # fmt: skip
    linked = {(s.phase, s.plan) for s in found}
    covered = {o for key, ids in naming.items() if key in linked for o in ids}
    if phases:  # the phases' summaries alone
        selection.groups[:] = []
    elif covered:  # an outcome whose summary speaks is cited by the summary's patterns
        selection.groups[:] = _uncovered(selection.groups, covered)
    background = [(f"p:{r.id or n}", pattern_terms(r.title, r.tags))
                  for n, r in enumerate(patterns.records)]  # fmt: skip
    for group in selection.groups:  # what the offline writer proposes before the summaries
        lead = offline_pattern(group)
        background.append((f"g:{group.key}", pattern_terms(lead.pattern, lead.tags)))
    groups = group_entries(found, background, longest=MAX_CHARS["pattern"])
    for entries in groups:
        ids = [o for i in entries.items for o in naming.get((i.source.phase, i.source.plan), [])]
        entries.outcomes = sorted(dict.fromkeys(ids), key=_number)
        entries.reviews = [c.id for c in selection.candidates
                           if c.is_review and c.id in entries.outcomes]  # fmt: skip
        entries.tags = list(dict.fromkeys(
            t for c in plans if c.id in entries.outcomes for t in c.specific))  # fmt: skip
    prepared = Prepared(selection, patterns.records, known, warnings, groups, by_plan, cited)
    return prepared


def _source_text(record: KnowledgeRecord) -> str:
    return record.values.get("source", "") if record.format == "table" else ""


def _uncovered(groups: list[CandidateGroup], covered: set[str]) -> list[CandidateGroup]:
    """The outcome groups without the outcomes a summary's pattern cites; a group left with
    reviews alone has nothing to distil."""
    kept = []
    for group in groups:
        members = [c for c in group.candidates if c.id not in covered]
        if any(not c.is_review for c in members):
            kept.append(CandidateGroup(group.key, group.task_type, members))
    return kept


def render_group(group: CandidateGroup) -> str:
    lines = [f"## Group {group.key} (task type {group.task_type})"]
    for candidate in group.candidates:
        r = candidate.record
        lines.append(
            f"- {r.id} | phase {r.phase} | plan {r.plan} | agent {r.agent} | {r.task_type} | "
            f"{r.outcome} | importance {r.importance} | tags: {r.tags_text} | {r.summary} "
            f"[why a candidate: {', '.join(candidate.reasons)}]"
        )
    return "\n".join(lines)


def render_existing(records: list[KnowledgeRecord]) -> str:
    if not records:
        return "(none)"
    return "\n".join(f"- {r.id}: {r.title} (tags: {', '.join(r.tags)})" for r in records)


# ---------------------------------------------------------------- offline engine


@offline_step(PROMPT)
def distill_offline(call: OfflineCall) -> PatternProposals:
    """One pattern per group: the lead outcome's summary, where and why it worked, its IDs; for
    a group of summary entries, the lead entry as written (pipeline/distill_sources.py)."""
    groups: list[CandidateGroup | SummaryGroup] = call.context
    return PatternProposals(patterns=[offline_pattern(group) for group in groups])


def offline_pattern(group: CandidateGroup | SummaryGroup) -> ProposedPattern:
    if isinstance(group, SummaryGroup):
        return ProposedPattern.model_validate(summary_pattern(group, limits_for(group.ids)))
    plans = [c for c in group.candidates if not c.is_review]
    best = max(range(len(plans)), key=lambda n: (not _is_status(plans[n].record.summary),
                                                 plans[n].record.importance,
                                                 len(plans[n].reasons), -n))  # fmt: skip
    lead = plans[best]
    phases = sorted({c.record.phase for c in plans})
    others = [c.record.summary.rstrip(". ") for c in plans if c is not lead]
    context = (
        f"Phase {', '.join(phases)}, {group.task_type} work by {', '.join(group.agents)}: "
        + "; ".join(_why(group))
    )
    if others:
        context += ". Also: " + "; ".join(others)
    topics = group.tags[:3]
    reuse = f"Reuse on {group.task_type} tasks" + (
        f" involving {', '.join(topics)}" if topics else ""
    )
    if any(CROSS_DIVISION in c.reasons for c in plans):
        reuse += "; the same cross-division pairing is worth repeating"
    tags = list(dict.fromkeys([group.task_type.lower(), *topics]))[:5]
    return ProposedPattern(
        pattern=lead.record.summary.rstrip(". "),
        context=context,
        reuse_criteria=reuse,
        source=group.ids,
        tags=tags,
    )


def _why(group: CandidateGroup) -> list[str]:
    why = []
    reviews = [c.id for c in group.candidates if c.is_review]
    if reviews or any(REVIEW_FIRST_CYCLE in c.reasons for c in group.candidates):
        why.append(
            "review passed on the first cycle" + (f" ({', '.join(reviews)})" if reviews else "")
        )
    top = max(c.record.importance for c in group.candidates)
    if any(HIGH_IMPORTANCE in c.reasons for c in group.candidates):
        why.append(f"importance {top} success")
    if any(CROSS_DIVISION in c.reasons for c in group.candidates):
        why.append("an agent succeeded outside its division")
    return why


# ---------------------------------------------------------------- verify


def pattern_terms(pattern: str, tags: list[str]) -> str:
    return topic_terms(pattern, extra=tags)


def verify(
    proposal: ProposedPattern, prepared: Prepared, index: TopicIndex
) -> tuple[list[str], str | None]:
    """(normalised source IDs, the reason to skip it or None)."""
    ids = [s.strip().upper() for s in proposal.source if s.strip()]
    if not ids:
        return ids, "cites no source outcome"
    for value in ids:
        if PLAN_ID.match(value):
            if value in prepared.cited_plans:
                return ids, f"cites plan {value}, which a pattern already cites"
            if value not in prepared.sources:
                return ids, f"cites plan {value}, which is not a candidate plan summary"
            continue
        if not _O_ID.match(value):
            return ids, f"source {value!r} is not an outcome ID"
        if value not in prepared.known_ids:
            return ids, f"cites {value}, which does not exist in OUTCOMES.md or ARCHIVE.md"
        if value not in prepared.selection.ids:
            why = prepared.selection.excluded.get(value, "not in OUTCOMES.md")
            return ids, f"cites {value}, which is not a distillation candidate ({why})"
    if not proposal.tags or any(not t.strip() for t in proposal.tags):
        return ids, "has no tags"
    bad = [t for t in proposal.tags if t != t.lower() or not _TAG.match(t.strip())]
    if bad:
        return ids, f"tags must be lowercase keywords: {', '.join(bad)}"
    limits = limits_for(ids)
    for name in ("pattern", "context", "reuse_criteria"):
        text = getattr(proposal, name)
        if not text.strip():
            return ids, f"{name.replace('_', ' ')} is empty"
        if is_placeholder(text):
            return ids, f"{name.replace('_', ' ')} is a placeholder ({text.strip()!r})"
        if len(text) > limits[name]:
            return ids, (f"{name.replace('_', ' ')} is {len(text)} characters long (at most "
                         f"{limits[name]}: a sentence or two)")  # fmt: skip
    not_one = not_a_pattern(proposal.pattern)
    if not_one is not None:
        return ids, f"the pattern {not_one}"
    found = index.best(pattern_terms(proposal.pattern, proposal.tags))
    if found is not None and found.same:
        return ids, f"near-duplicate of {found.key} (score {found.score:.2f})"
    return ids, _ungrounded(proposal, ids, prepared)


def source_texts(ids: list[str], prepared: Prepared) -> list[str]:
    """What the cited sources say: each outcome row (summary, task type, tags, agents, phase,
    plan, importance) and each cited plan's whole summary with its phase folder's topic."""
    cited = [c.record for c in prepared.selection.candidates if c.id in ids]
    rows = [f"{r.id} {r.summary} {r.task_type} {' '.join(r.tags)} {' '.join(r.agents)} "
            f"phase {r.phase} plan {r.plan} importance {r.importance}" for r in cited]  # fmt: skip
    return rows + [s.cited_text for i in ids for s in prepared.sources.get(i, [])]


def _ungrounded(proposal: ProposedPattern, ids: list[str], prepared: Prepared) -> str | None:
    """Why the pattern does not rest on the sources it cites (their summaries, task types and
    tags share too little of its content), or why its context or reuse criteria do not (they
    may also name the agents, the phases and why the outcomes were chosen), or None."""
    cited = [c.record for c in prepared.selection.candidates if c.id in ids]
    source = terms_of(f"{r.summary} {r.task_type} {' '.join(r.tags)}" for r in cited)
    summaries = [s for i in ids for s in prepared.sources.get(i, [])]
    source |= terms_of(s.cited_text for s in summaries)
    if not grounded(proposal.pattern, source, PATTERN_THRESHOLD):
        return f"the pattern shares too little with the outcomes it cites ({', '.join(ids)})"
    where = source | terms_of(
        [_WHY_WORDS, *(f"{' '.join(r.agents)} phase {r.phase} {r.plan}" for r in cited),
         *(f"plan {s.plan} phase {s.phase} why also decided established marked reusable fixed "
           "held" for s in summaries)]
    )  # fmt: skip
    reuse = support(proposal.reuse_criteria, source)
    if content_terms(proposal.context) and not grounded(proposal.context, where, CONTEXT_THRESHOLD):
        # a context of ids and statuses alone (`Plan 01-01, Complete`) claims nothing to refuse
        return f"the context shares too little with the outcomes it cites ({', '.join(ids)})"
    if reuse.shared < 1 or reuse.share < REUSE_SHARE:
        return f"the reuse criteria share nothing with the outcomes they cite ({', '.join(ids)})"
    return None


# ---------------------------------------------------------------- run


def run_distill(
    paths: MemoryPaths,
    engine: Engine,
    *,
    today: date,
    dry_run: bool = False,
    catalog_path: Path | None = None,
    branch: str | None = None,
    phases: list[str] | None = None,
) -> DistillResult:
    catalog = load_catalog(catalog_path) if catalog_path else {}
    prepared = prepare(paths, catalog, phases)
    selection = prepared.selection
    groups = prepared.groups
    result = DistillResult(dry_run=dry_run, warnings=list(prepared.warnings))
    redactor = project_redactor(paths.root)  # what the report repeats of a proposal, too
    result.skipped += [{"pattern": _shown(redactor.text(r["pattern"])),
                        "reason": redactor.text(r["reason"])}
                       for r in prepared.refused_entries()]  # fmt: skip
    in_groups = {i for g in groups for i in g.ids}
    result.candidates = sorted((i for i in selection.ids if i in in_groups), key=_number)
    result.plans = list(prepared.sources)
    result.groups = [{"key": g.key, "ids": g.ids} for g in groups]
    existing = [
        (r.id or f"row-{n}", pattern_terms(r.title, r.tags))
        for n, r in enumerate(prepared.existing)
    ]
    accepted: list[tuple[str, str]] = []
    for start in range(0, len(groups), GROUPS_PER_CALL):
        batch = groups[start : start + GROUPS_PER_CALL]
        variables = {
            "groups": "\n\n".join(_render(g) for g in batch),
            "existing_patterns": render_existing(prepared.existing),
        }
        answer = engine.ask(PatternProposals, PROMPT, variables, context=batch)
        result.prompt_sha256 = answer.prompt_sha256
        for proposal in answer.output.patterns:
            index = TopicIndex([*existing, *accepted])
            ids, reason = verify(proposal, prepared, index)
            if reason is None:
                original = proposal.pattern
                proposal, reason, cut = _grounded_entities(proposal, ids, prepared)
                if reason is None and cut:  # the repaired text passes every check again
                    ids, reason = verify(proposal, prepared, index)
                if reason is None and cut:
                    result.warnings.append(f"pattern {original[:60]!r}: cut what its sources "
                                           f"do not state ({', '.join(cut)})")  # fmt: skip
            shown = redactor.text(proposal.pattern)  # before it is cut: no token cut in two
            if reason is not None:
                result.skipped.append({"pattern": _shown(shown), "reason": redactor.text(reason)})
                continue
            label = f'"{shown[:60]}", proposed earlier in this run'
            accepted.append((label, pattern_terms(proposal.pattern, proposal.tags)))
            result.written.append(_store(paths, proposal, ids, today, branch, dry_run, result))
    return result


def _grounded_entities(
    proposal: ProposedPattern, ids: list[str], prepared: Prepared
) -> tuple[ProposedPattern, str | None, list[str]]:
    """The proposal with every clause naming what its sources do not state cut, the reason it
    is refused (distill_sources.entity_check), and what was cut."""
    fields = {"pattern": proposal.pattern, "context": proposal.context,
              "reuse_criteria": proposal.reuse_criteria}  # fmt: skip
    source = "\n".join(source_texts(ids, prepared))
    cited = [c.record for c in prepared.selection.candidates if c.id in ids]
    known = [*ids, *phase_names(ids), *(phase_key(r.phase) for r in cited), *_WHY_WORDS.split()]
    repaired, cut, reason = entity_check(fields, source, known)
    if reason is not None:
        return proposal, reason, cut
    return (proposal.model_copy(update=repaired) if cut else proposal), None, cut


def _render(group: CandidateGroup | SummaryGroup) -> str:
    return render_summary_group(group) if isinstance(group, SummaryGroup) else render_group(group)


def _is_status(text: str) -> bool:
    return not_a_pattern(text) is not None


def _store(
    paths: MemoryPaths,
    proposal: ProposedPattern,
    ids: list[str],
    today: date,
    branch: str | None,
    dry_run: bool,
    result: DistillResult,
) -> dict[str, Any]:
    values = {
        "pattern": proposal.pattern.strip(),
        "context": proposal.context.strip(),
        "reuse_criteria": proposal.reuse_criteria.strip(),
        "source": ", ".join(ids),
        "tags": ", ".join(t.strip() for t in proposal.tags),
    }
    if dry_run:  # show what would be written: redacted as the store would redact it
        redactor = project_redactor(paths.root)
        values, hits = redactor.values(values)
        result.warnings += write_warning(redactor, hits, f"{PATTERNS.file_name} (dry run)")
        return {**values, "tags": values["tags"].split(", "), "id": None}
    from legion_llm.memory.knowledge.store import add_knowledge

    stored = add_knowledge(paths, PATTERNS, values, today=today, branch=branch)
    result.warnings += stored.warnings
    return stored.record.to_dict()


def _number(record_id: str) -> int:
    digits = record_id.rpartition("-")[2]
    return int(digits) if digits.isdigit() else 0


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"
