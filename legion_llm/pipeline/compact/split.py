"""The compaction prompt's variables, and splitting a phase that is too large for one call.

A phase over one call's budget is sent plan by plan; a plan that alone is too large is cut at
its `##` sections, and a section that alone is too large at line boundaries. Every part carries
a header naming its plan and part, so nothing is dropped and nothing is cut mid-line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from legion_llm.llm.budget import check_fits
from legion_llm.memory.phases.extract import (
    PhaseFacts,
    file_paths,
    find_paths,
    requirement_ids,
    sort_ids,
    unique,
)
from legion_llm.memory.phases.find import Phase
from legion_llm.memory.phases.statements import PlanDoc

Count = Callable[[str], int]
FIRST_ASK = "Propose the digest: every section, following the rules."
# room for a part's header (`# Plan 03-01: ... (continued)`, `part 2 of 3`)
SPLIT_HEADER_TOKENS = 100


def _plan_line(doc: PlanDoc) -> str:
    """`- 03-01: Name (Complete, success, agent x, part 1 of 2)`: what is known, tersely."""
    plan = doc.facts
    known = [plan.status or "no status recorded", plan.outcome]
    known += [f"agent {plan.agent}"] if plan.agent else []
    known += [doc.part] if doc.part else []
    return f"- {plan.id}: {plan.name or '(no title)'} ({', '.join(known)})"


def prompt_variables(
    phase: Phase,
    docs: Sequence[PlanDoc],
    facts: PhaseFacts,
    target_tokens: int,
    phase_facts: PhaseFacts | None = None,
) -> dict[str, str]:
    """The strings `prompts/compact-phase.md` is rendered with. Each requirement id is listed
    once, with its verdict (`phase_facts`, the whole phase's when `facts` are one part's, decides
    which verdict each id may be given); file paths are not listed: they are in the summaries
    as sent (logs.py keeps every line that names one), and repair restores any left out."""
    summaries = "\n\n".join(
        f"===== {d.facts.file}{f' ({d.part})' if d.part else ''} =====\n{d.text.strip()}"
        for d in docs
    )
    return {
        "phase": f"Phase {phase.key}: {phase.name}",
        "plans": "\n".join(_plan_line(d) for d in docs) or "(none)",
        "verdicts": _verdicts(facts.requirement_ids, phase_facts or facts),
        "target_tokens": str(target_tokens),
        "summaries": summaries,
        "feedback": FIRST_ASK,
    }


def _verdicts(ids: Sequence[str], facts: PhaseFacts) -> str:
    """Per id, the verdict the summaries support and the plans that report it."""
    lines = []
    for rid in ids:
        truth = facts.grounded(rid)
        if truth.plans:
            lines.append(f"- {rid}: {truth.verdict} ({', '.join(truth.plans)})")
        else:
            lines.append(f"- {rid}: not verified (no summary of this phase reports it)")
    return "\n".join(lines) or "(none)"


def chunk_facts(docs: Sequence[PlanDoc], phase: PhaseFacts | None = None) -> PhaseFacts:
    """The ids and paths the given plans (or parts) name: what one map call must keep (of the
    phase's own, when `phase` is given: the same precision rules as the whole phase)."""
    ids = sort_ids(unique(i for d in docs for i in requirement_ids(d.text)))
    paths = file_paths(p for d in docs for p in find_paths(d.text))
    if phase is not None:
        ids = [i for i in ids if i in phase.requirement_ids]
        paths = [p for p in paths if p in phase.paths]
    plans = {doc.facts.id: doc.facts for doc in docs}
    return PhaseFacts(tuple(ids), tuple(paths), tuple(plans.values()))


def _blocks(lines: list[str]) -> list[list[int]]:
    """Line numbers grouped into blocks that start at each `## ` heading outside fences."""
    blocks: list[list[int]] = [[]]
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"^##\s", line) and blocks[-1]:
            blocks.append([])
        blocks[-1].append(index)
    return blocks


def _inside_fence(lines: list[str]) -> list[bool]:
    """For each line (and one past the end): whether a fenced block is open before it."""
    state = [False]
    for line in lines:
        state.append(state[-1] != line.lstrip().startswith("```"))
    return state


def _pack(groups: list[list[int]], sizes: list[int], budget: int) -> list[list[int]]:
    """Consecutive groups of lines joined while their summed size fits; a group too large alone
    is cut at line boundaries (a single line too large is a TokenBudgetError, never cut)."""
    pieces: list[list[int]] = []
    used = budget + 1
    for group in groups:
        size = sum(sizes[i] for i in group)
        units = [group] if size <= budget else [[i] for i in group]
        for unit in units:
            unit_size = sum(sizes[i] for i in unit)
            check_fits(unit_size, budget, "one line of a plan summary")
            if used + unit_size > budget:
                pieces.append([])
                used = 0
            pieces[-1] += unit
            used += unit_size
    return pieces


def split_doc(doc: PlanDoc, budget: int, count: Count) -> list[PlanDoc]:
    """The plan as one part when it fits, else parts that each fit `budget`.

    Sizes are summed per line (an over-estimate of the joined text), so every part fits.
    """
    if count(doc.text) <= budget:
        return [doc]
    lines = doc.text.split("\n")
    sizes = [count(line) + 1 for line in lines]
    pieces = _pack(_blocks(lines), sizes, budget - SPLIT_HEADER_TOKENS)
    title = doc.facts.name or doc.facts.id
    inside = _inside_fence(lines)
    parts = []
    for number, piece in enumerate(pieces, start=1):
        # a cut inside a fenced block closes it and opens it again in the next part
        body = [lines[i] for i in piece]
        opened = ["```"] if inside[piece[0]] else []
        closed = ["```"] if inside[piece[-1] + 1] else []
        text = "\n".join([*opened, *body, *closed])
        if number > 1:
            text = f"# Plan {doc.facts.id}: {title} (continued)\n\n{text}"
        parts.append(PlanDoc(doc.facts, text, f"part {number} of {len(pieces)}"))
    return parts
