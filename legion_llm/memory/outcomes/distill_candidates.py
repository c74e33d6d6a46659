"""Which outcomes are worth distilling into patterns, and how they group (spec section 8, "When
to store patterns").

A successful outcome with an O-ID is a candidate for one or more reasons:

- `review-first-cycle`: its phase's review passed on the first cycle (the review row's tags hold
  `1-cycle`, or its summary says "passed in 1 cycle"); the review row itself is a candidate too,
  as evidence, and joins the groups of its phase;
- `high-importance`: importance 4 or 5 on a success (the spec's "complex task with a novel
  approach");
- `cross-division`: an agent's division (CATALOG.md) differs from every division whose agents list
  the task type, or the row is tagged `cross-division`.

Never: failed or partial outcomes, importance 1 (trivial), rows without an ID, and outcomes that
an existing pattern already cites in its Source (so distilling twice proposes nothing new).

Groups: candidates of one task type, linked when they share a specific tag (not a division name,
not a review or cycle tag, not the task type itself, not the tag every row of their phase carries,
which is the phase's slug) or an agent within one phase.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter

from legion_llm.memory.catalog import CatalogAgent
from legion_llm.memory.knowledge.read import KnowledgeRecord
from legion_llm.memory.phases.planning import phase_key
from legion_llm.records import OutcomeRecord

REVIEW_FIRST_CYCLE = "review-first-cycle"
HIGH_IMPORTANCE = "high-importance"
CROSS_DIVISION = "cross-division"
_O_ID = re.compile(r"\bO-\d{3,}\b")
_FIRST_CYCLE = re.compile(r"passed (?:in|on) (?:the )?(?:1|one|first) cycle", re.IGNORECASE)
_CYCLE_TAG = re.compile(r"^(?:\d+-cycles?|cycle-\d+)$")
_GENERIC_TAGS = frozenset(
    {"review", "review-passed", "review-escalated", "engineering", "testing", "design",
     "marketing", "product", "support", "specialized", "project-management", "spatial-computing",
     "cross-division", "success", "general"}
)  # fmt: skip


@dataclass(frozen=True)
class DistillCandidate:
    record: OutcomeRecord
    reasons: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.record.id or ""

    @cached_property
    def is_review(self) -> bool:
        return is_review(self.record)

    @cached_property
    def specific(self) -> list[str]:
        """`specific_tags` of the record (asked for again and again while grouping)."""
        return specific_tags(self.record)


@dataclass
class CandidateGroup:
    key: str
    task_type: str
    candidates: list[DistillCandidate] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return sorted((c.id for c in self.candidates), key=_number)

    @property
    def agents(self) -> list[str]:
        return sorted({a for c in self.candidates if not c.is_review for a in c.record.agents})

    @property
    def tags(self) -> list[str]:
        """Specific tags of the group, the most shared first."""
        counts: dict[str, int] = {}
        for candidate in self.candidates:
            for tag in candidate.specific:
                counts[tag] = counts.get(tag, 0) + 1
        return sorted(counts, key=lambda t: (-counts[t], t))


@dataclass
class Selection:
    candidates: list[DistillCandidate]
    groups: list[CandidateGroup]
    excluded: dict[str, str]  # O-ID -> why it is not a candidate

    @cached_property
    def ids(self) -> set[str]:
        """Built once: every proposed Source ID is checked against it."""
        return {c.id for c in self.candidates}


def cited_ids(patterns: Iterable[KnowledgeRecord]) -> set[str]:
    """O-IDs named in existing patterns' Source (or, for /legion:learn entries, anywhere)."""
    found: set[str] = set()
    for record in patterns:
        text = record.values.get("source", "") if record.format == "table" else record.text()
        found.update(_O_ID.findall(text))
    return found


def is_review(record: OutcomeRecord) -> bool:
    return (
        "quality-review" in record.task_type.lower()
        or record.plan.strip().lower() in ("review", "review-fix")
        or bool({"review-passed", "review-escalated"} & {t.lower() for t in record.tags})
    )


def first_cycle_pass(record: OutcomeRecord, reviewing: bool | None = None) -> bool:
    """`reviewing`: is_review(record), when the caller knows it already."""
    if not (is_review(record) if reviewing is None else reviewing) or record.outcome != "success":
        return False
    tags = {t.lower() for t in record.tags}
    return bool({"1-cycle", "cycle-1"} & tags) or bool(_FIRST_CYCLE.search(record.summary))


def specific_tags(record: OutcomeRecord) -> list[str]:
    """The record's tags, lower-cased, without generic, task-type and cycle tags."""
    if not record.tags_text:
        return []
    task_types = {t.lower() for t in record.task_types}
    lowered = [tag.lower() for tag in record.tags]
    return [
        tag
        for tag in lowered
        if tag not in _GENERIC_TAGS and tag not in task_types and not _CYCLE_TAG.match(tag)
    ]


def task_type_divisions(catalog: dict[str, CatalogAgent]) -> dict[str, set[str]]:
    divisions: dict[str, set[str]] = {}
    for agent in catalog.values():
        for task_type in agent.task_types:
            divisions.setdefault(task_type.lower(), set()).add(agent.division)
    return divisions


def cross_division(
    record: OutcomeRecord,
    catalog: dict[str, CatalogAgent],
    owners: dict[str, set[str]] | None = None,
) -> bool:
    """`owners`: task_type_divisions(catalog), when the caller has it already."""
    if CROSS_DIVISION in {t.lower() for t in record.tags}:
        return True
    if not catalog:  # no agent has a division to leave
        return False
    owners = task_type_divisions(catalog) if owners is None else owners
    types = [t.lower() for t in record.task_types]
    for agent in record.agents:
        entry = catalog.get(agent)
        known = [owners[t] for t in types if t in owners]
        if entry is not None and known and all(entry.division not in d for d in known):
            return True
    return False


def _reasons(
    record: OutcomeRecord,
    clean_phases: set[str],
    catalog: dict[str, CatalogAgent],
    owners: dict[str, set[str]],
) -> list[str]:
    reasons = []
    if clean_phases and phase_key(record.phase) in clean_phases:
        reasons.append(REVIEW_FIRST_CYCLE)
    if record.importance >= 4:
        reasons.append(HIGH_IMPORTANCE)
    if cross_division(record, catalog, owners):
        reasons.append(CROSS_DIVISION)
    return reasons


def _exclusion(record: OutcomeRecord, cited: set[str]) -> str | None:
    if record.outcome != "success":
        return f"outcome {record.outcome or 'unknown'}"
    if record.id in cited:
        return "already distilled (cited by an existing pattern)"
    if record.importance <= 1:
        return "trivial (importance 1)"
    return None


def select_candidates(
    records: list[OutcomeRecord],
    catalog: dict[str, CatalogAgent] | None = None,
    cited: set[str] | None = None,
) -> Selection:
    """Candidates among `records` (OUTCOMES.md rows), grouped; every non-candidate with its reason."""
    catalog, cited = catalog or {}, cited or set()
    with_id = [r for r in records if r.id]
    reviewing = [is_review(r) for r in with_id]  # asked once per row: 100,000 rows are common
    passed = [first_cycle_pass(r, review) for r, review in zip(with_id, reviewing, strict=True)]
    clean_phases = {phase_key(r.phase) for r, ok in zip(with_id, passed, strict=True) if ok}
    owners = task_type_divisions(catalog)
    candidates: list[DistillCandidate] = []
    excluded: dict[str, str] = {}
    for record, review, first_cycle in zip(with_id, reviewing, passed, strict=True):
        assert record.id is not None
        reason = _exclusion(record, cited)
        if reason is None and review:
            reason = None if first_cycle else "a review that needed more than one cycle"
        reasons = [] if reason else _reasons(record, clean_phases, catalog, owners)
        if reasons and review:
            reasons = [REVIEW_FIRST_CYCLE]  # a review row is evidence for its phase, nothing more
        if reasons:
            candidates.append(DistillCandidate(record, tuple(reasons)))
        else:
            excluded[record.id] = reason or "no learning value (an ordinary success)"
    groups = group_candidates(candidates, phase_tags(with_id))
    grouped = {cid for g in groups for cid in g.ids}
    for candidate in candidates:
        if candidate.id not in grouped:
            excluded[candidate.id] = "a review with no plan outcome of its phase to distil"
    kept = [c for c in candidates if c.id in grouped]
    return Selection(kept, groups, excluded)


def phase_tags(records: list[OutcomeRecord]) -> dict[str, set[str]]:
    """Per phase with two or more rows, the specific tags every row carries (the phase slug)."""
    by_phase: dict[str, list[set[str]]] = {}
    for record in records:
        by_phase.setdefault(phase_key(record.phase), []).append(set(specific_tags(record)))
    return {
        phase: set.intersection(*tag_sets)
        for phase, tag_sets in by_phase.items()
        if len(tag_sets) > 1
    }


def group_candidates(
    candidates: list[DistillCandidate], common: dict[str, set[str]] | None = None
) -> list[CandidateGroup]:
    """Per task type, clusters of related candidates; each group also gets its phases' reviews."""
    plans = [c for c in candidates if not c.is_review]
    by_type: dict[str, list[DistillCandidate]] = {}
    for candidate in plans:
        task_type = (candidate.record.task_types or ["general"])[0].lower()
        by_type.setdefault(task_type, []).append(candidate)
    groups: list[CandidateGroup] = []
    for task_type, members in by_type.items():
        for n, cluster in enumerate(_clusters(members, common or {}), start=1):
            groups.append(CandidateGroup(f"{task_type}/{n}", task_type, cluster))
    reviews: dict[str, list[tuple[int, DistillCandidate]]] = {}  # phase -> (position, review)
    for position, candidate in enumerate(candidates):
        if candidate.is_review:
            reviews.setdefault(phase_key(candidate.record.phase), []).append((position, candidate))
    for group in groups:
        phases = {phase_key(c.record.phase) for c in group.candidates}
        found = sorted(
            (item for phase in phases for item in reviews.get(phase, [])), key=itemgetter(0)
        )
        group.candidates.extend(candidate for _, candidate in found)
    return sorted(groups, key=lambda g: _number(g.candidates[0].id))


def _clusters(
    members: list[DistillCandidate], common: dict[str, set[str]]
) -> list[list[DistillCandidate]]:
    """Connected members: two are linked when they share a specific tag (not their phase's own)
    or an agent within one phase. Each member is joined to the first member holding each of its
    keys, which links the same components as comparing every pair, in linear time."""
    parent = list(range(len(members)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, ...], int] = {}
    for i, member in enumerate(members):
        record = member.record
        phase = phase_key(record.phase)
        keys: list[tuple[str, ...]] = [
            ("tag", tag) for tag in set(member.specific) - common.get(phase, set())
        ]
        keys += [("hands", phase, agent) for agent in set(record.agents)]
        for key in keys:
            j = first.setdefault(key, i)
            if j != i:
                parent[root(i)] = root(j)
    clusters: dict[int, list[DistillCandidate]] = {}
    for i, member in enumerate(members):
        clusters.setdefault(root(i), []).append(member)
    return [sorted(c, key=lambda m: _number(m.id)) for c in clusters.values()]


def _number(record_id: str) -> int:
    digits = record_id.rpartition("-")[2]
    return int(digits) if digits.isdigit() else 0
