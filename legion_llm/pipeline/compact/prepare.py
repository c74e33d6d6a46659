"""prepare: read a phase's plan summaries (never modified) and extract what must survive.

Deterministic and engine-free: the facts (requirement ids and how each summary reports them,
paths, plans), the originals as checking sources and as grounding evidence, and the offline
engine's digest (the fallback for any section a proposal gets wrong).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from legion_llm.memory.files import read_text
from legion_llm.memory.phases.declared import declared_ids
from legion_llm.memory.phases.extract import PhaseFacts, normalise, phase_facts
from legion_llm.memory.phases.find import Phase
from legion_llm.memory.phases.statements import PlanDoc
from legion_llm.pipeline.compact.ground import Evidence
from legion_llm.pipeline.compact.offline import (
    LEVELS,
    CompactContext,
    compact_extractive,
    digest_at,
    minimal_digest,
)
from legion_llm.pipeline.compact.render import Header, PhaseDigest, render
from legion_llm.pipeline.compact.verify import Sources, originals_tokens, tokens_of


@dataclass(frozen=True)
class Prepared:
    phase: Phase
    facts: PhaseFacts
    docs: tuple[PlanDoc, ...]
    roadmap_text: str | None
    tokens_original: int
    sources: Sources
    evidence: Evidence


def prepare(phase: Phase) -> Prepared:
    """Read the plan summaries (never modified) and extract what must survive."""
    texts = [(pid, path.name, normalise(read_text(path) or "")) for pid, path in phase.summaries]
    facts = phase_facts(texts, phase.roadmap.requirement_ids, declared_ids(phase))
    roadmap = read_text(phase.roadmap.path) if phase.roadmap.path else None
    docs = tuple(PlanDoc(plan, text) for plan, (_, _, text) in zip(facts.plans, texts, strict=True))
    summaries = [text for _, _, text in texts]
    sources = Sources.build(summaries, roadmap, facts, _own_files(phase))
    evidence = Evidence.build(docs, facts.paths)
    return Prepared(phase, facts, docs, roadmap, originals_tokens(summaries), sources, evidence)


def _own_files(phase: Phase) -> list[str]:
    """Names a compacted summary may cite: its originals and the ROADMAP, as names and paths."""
    paths = [path for _, path in phase.summaries]
    if phase.roadmap.path:
        paths.append(phase.roadmap.path)
    names = [p.name for p in paths]
    return names + [str(p.relative_to(phase.root)) for p in paths if p.is_relative_to(phase.root)]


def precondition_problems(phase: Phase) -> list[str]:
    """Why the spec's preconditions do not hold (empty when they do)."""
    problems = []
    if not phase.roadmap.complete:
        where = "ROADMAP.md" if phase.roadmap.found else "ROADMAP.md (the phase is not in it)"
        problems.append(f"phase {phase.key} is not marked complete in {where}")
    if phase.missing_summaries:
        listed = ", ".join(phase.missing_summaries)
        problems.append(f"plan(s) {listed} have a PLAN but no SUMMARY")
    return problems


def header_for(prep: Prepared, today: date, forced_reason: str | None = None) -> Header:
    """What the pipeline decides for the rendered file: names, date, the --force note."""
    phase = prep.phase
    names = tuple(path.name for _, path in phase.summaries)
    return Header(phase.slug, phase.key, phase.name, names, prep.facts.plans, today, forced_reason)


def _context(prep: Prepared, header: Header) -> CompactContext:
    def measure(digest: PhaseDigest) -> int:
        return tokens_of(render(header, digest))

    return CompactContext(prep.docs, prep.facts.requirement_ids, prep.facts.paths,
                          prep.tokens_original, measure)  # fmt: skip


def offline_proposal(prep: Prepared, header: Header) -> PhaseDigest:
    """What the offline engine answers for the whole phase (the fallback of settle.py)."""
    return compact_extractive(_context(prep, header))


def minimal_proposal(prep: Prepared, header: Header) -> PhaseDigest:
    """The last rung of settle's ladder: the least the summaries honestly say (offline.py)."""
    return minimal_digest(_context(prep, header))


def offline_digest(prep: Prepared, header: Header, level: int = 1) -> PhaseDigest:
    """The offline step's digest of the whole phase at one detail level."""
    return digest_at(_context(prep, header), LEVELS[level])
