"""Distillation from plan summaries: what worked, as the summaries write it (issue 33).

A one-line outcome says how a plan ended (`...: Complete`, `Phase 1 review PASSED in 1
cycle(s)`); the plan's summary says what worked. The sources (memory/phases/patterns.py) are the
summaries the candidate outcomes name (the Plan column `01-01` is `01-01-SUMMARY.md` of the
outcome's phase), or, with `--phase`, every summary of the phases named, with or without an
OUTCOMES.md.

Grouping: every candidate entry is its own pattern, except that entries on one topic (the topic
matcher, memory/signatures/topics.py: the measure that refuses a near-duplicate pattern) become
one group citing every plan they come from; the others are quoted in its context.

Grounding, for every proposal whoever wrote it (`entity_check`): every name, number, path and
identifier of its Pattern, Context and Reuse Criteria occurs in the sources it cites (the
outcome rows, the whole summaries: memory/entities.py, compaction's rule); a field naming more is
repaired by cutting the clauses that name it, or the proposal is refused with the reason. A
pattern that is a status or a file list is refused too (`not_a_pattern`).

The offline engine writes each group's pattern from the sources' own sentences: the entry as
written, the plan it came from with its status and verification, and when to reuse it in the
words of the plan's name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from legion_llm.memory.entities import cut_new_entities, new_entities
from legion_llm.memory.phases.markdown import cut_to
from legion_llm.memory.phases.patterns import (
    DECISION,
    DEVIATION,
    ESTABLISHED,
    MARKED,
    PatternEntry,
    SummarySource,
    is_empty_label,
    is_file_list,
    is_status,
    topic_words,
)
from legion_llm.memory.signatures.topics import TopicIndex, topic_terms

PLAN_ID = re.compile(r"^\d+(?:\.\d+)*-\d+[a-z]?$|^\d+(?:\.\d+)*$")
_CITED_PLAN = re.compile(r"(?<![\w.\-/])(\d+(?:\.\d+)*-\d+[a-z]?)(?![\w\-]|\.\w)")
_KIND_ORDER = {ESTABLISHED: 0, MARKED: 1, DECISION: 2, DEVIATION: 3}
_KIND_WORDS = {
    ESTABLISHED: "established by",
    MARKED: "marked reusable in",
    DECISION: "decided in",
    DEVIATION: "fixed and held in",
}
_TAG_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#-]{3,}")
_TAG_STOP = frozenset(
    re.findall(r"\w+", "with from that this when into used uses using each were have been they "
               "them their only also than then over more must should would could pattern "
               "patterns established")
)  # fmt: skip


@dataclass(frozen=True)
class Item:
    source: SummarySource
    entry: PatternEntry


@dataclass
class SummaryGroup:
    """Entries of one approach: the lead's text is the pattern, the others cite the same."""

    key: str
    items: list[Item]
    outcomes: list[str] = field(default_factory=list)  # O-IDs naming these plans (candidates)
    reviews: list[str] = field(default_factory=list)  # of them, first-cycle reviews of the phase
    tags: list[str] = field(default_factory=list)  # the outcomes' specific tags

    @property
    def plans(self) -> list[str]:
        return list(dict.fromkeys(i.source.plan for i in self.items))

    @property
    def ids(self) -> list[str]:
        return [*self.outcomes, *self.plans]


def phase_names(ids: list[str]) -> list[str]:
    """The phase numbers cited plan ids carry (`07-01` -> `07`, `7`): a pattern may name the
    phase of a plan it cites."""
    found = []
    for value in ids:
        head = value.rsplit("-", 1)[0] if "-" in value else value
        if re.fullmatch(r"\d+(?:\.\d+)*", head):
            found += [head, ".".join(str(int(p)) for p in head.split("."))]
    return list(dict.fromkeys(found))


def cited_plans(text: str) -> set[str]:
    """Plan ids (`01-01`, `6.1-02a`) a pattern's Source names."""
    return set(_CITED_PLAN.findall(text))


def parts_of(text: str, longest: int) -> list[str]:
    """An entry as patterns that fit: whole when it fits, else its clauses (split after `;` and
    sentence ends) packed in order into parts of at most `longest` characters; a clause longer
    than that is a part of its own (the writer cuts it). Taken whole, an entry is taken whole:
    every word of it is in some part."""
    if len(text) <= longest:
        return [text]
    parts: list[str] = []
    for clause in re.split(r"(?<=[;.!?])\s+", text):
        if parts and len(parts[-1]) + 1 + len(clause) <= longest:
            parts[-1] = f"{parts[-1]} {clause}"
        else:
            parts.append(clause)
    return [p.rstrip(";").strip() for p in parts if p.strip(" ;")]


def group_entries(
    sources: list[SummarySource],
    background: Sequence[tuple[str, str]] = (),
    *,
    longest: int,
) -> list[SummaryGroup]:
    """One group per entry, an entry on the topic of an earlier group's lead joined to it
    (module docstring). The measure is verify's own: the lead's words and tags against the
    patterns before it (`background`: the existing ones and those the outcome groups give, as
    (key, terms)) and the leads before it, so the offline writer's lead is not refused as a
    near-duplicate of another lead; declared entries come first, so they lead. An entry longer
    than a pattern holds (`longest`) enters as its parts (`parts_of`)."""
    items = sorted((Item(s, replace(e, text=part)) for s in sources for e in s.entries
                    if not_a_pattern(e.text) is None  # never written: no lead, no member
                    for part in parts_of(e.text, longest)),
                   key=lambda i: _KIND_ORDER[i.entry.kind])  # fmt: skip
    groups: list[SummaryGroup] = []
    leads: list[tuple[str, str]] = []
    for item in items:
        terms = topic_terms(item.entry.text, extra=_item_tags(item))
        index = TopicIndex([*background, *leads])
        best = index.best(terms) if len(index) else None
        if best is not None and best.same and best.key.isdigit():
            groups[int(best.key)].items.append(item)
            continue
        leads.append((str(len(groups)), terms))
        groups.append(SummaryGroup(f"plans/{len(groups) + 1}", [item]))
    return groups


def render_summary_group(group: SummaryGroup) -> str:
    lines = [f"## Group {group.key} (from plan summaries; cite {', '.join(group.ids)})"]
    for item in group.items:
        s = item.source
        lines.append(
            f"- plan {s.plan} | phase {s.phase} | {s.name or s.file} | status {s.status or '-'}"
            f" | {s.check or 'no verification recorded'} | {item.entry.kind}: {item.entry.text}"
        )
    if group.outcomes:
        lines.append(f"- outcomes naming these plans: {', '.join(group.outcomes)}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the offline writer


def summary_pattern(group: SummaryGroup, limits: dict[str, int]) -> dict[str, object]:
    """The group's pattern from the sources' own sentences (module docstring)."""
    lead = group.items[0]
    s = lead.source
    pattern = cut_to(lead.entry.text, limits["pattern"])
    label = _label(s)
    how = ", ".join(x for x in (s.status, s.check) if x)
    context = f"Plan {s.plan}" + (f" ({label})" if label else "") + (f", {how}" if how else "")
    if lead.entry.why and lead.entry.why not in pattern:
        context += f"; why: {lead.entry.why.rstrip('.')}"
    if group.reviews:
        context += f"; the phase review passed on the first cycle ({', '.join(group.reviews)})"
    others = group.items[1:]
    if others:
        context += "; also " + "; ".join(
            f"{_KIND_WORDS[i.entry.kind]} plan {i.source.plan}: {i.entry.text.rstrip('.')}"
            for i in others
        )
    names = list(dict.fromkeys(_label(i.source) for i in group.items if _label(i.source)))
    reuse = "Reuse on work like " + ("; ".join(names) if names else f"plan {s.plan}")
    reuse += f" ({_KIND_WORDS[lead.entry.kind]} {', '.join(group.plans)})"
    return {
        "pattern": pattern,
        "context": cut_to(context, limits["context"]),
        "reuse_criteria": cut_to(reuse, limits["reuse_criteria"]),
        "source": group.ids,
        "tags": _tags(group),
    }


def _label(source: SummarySource) -> str:
    """What the plan is about in its summary's words: its name, else its phase folder's topic
    (`block-hour-retainer-agreements` -> "block hour retainer agreements"), else ""."""
    if source.name:
        return source.name
    return topic_words(source.topic)


def _tags(group: SummaryGroup) -> list[str]:
    """The lead entry's own keywords and its phase's topic (what grouping compared)."""
    return _item_tags(group.items[0])[:5]


def _item_tags(item: Item) -> list[str]:
    words = [w.lower().strip("-") for w in _TAG_WORD.findall(item.entry.text)]
    tags = [w for w in words if w not in _TAG_STOP and len(w) >= 5][:2]
    tags += [item.source.topic.lower()] if item.source.topic else []
    return _clean(tags) or ["pattern"]


def _clean(tags: list[str]) -> list[str]:
    clean = [re.sub(r"[^a-z0-9.+#_/-]+", "-", t).strip("-") for t in tags]
    return list(dict.fromkeys(t for t in clean if t))


# ---------------------------------------------------------------- checks for any proposal


def not_a_pattern(pattern: str) -> str | None:
    """Why a Pattern is no pattern: a status says how a plan ended, a file list what it touched;
    neither says what worked."""
    if is_status(pattern):
        return "is a status (how a plan ended), not what worked"
    if is_empty_label(pattern):
        return "is a name with nothing said of it, not what worked"
    if is_file_list(pattern):
        return "is a file list, not what worked"
    return None


def entity_check(
    fields: dict[str, str], source: str, known: list[str]
) -> tuple[dict[str, str], list[str], str | None]:
    """(the fields repaired, what was cut, the reason to refuse or None): every entity of every
    field must be stated by `source` (the cited sources' text); a field naming more loses the
    clauses naming it, and a pattern or context left with nothing to say is refused."""
    repaired = dict(fields)
    cut: list[str] = []
    for name, text in fields.items():
        new = new_entities(text, source, known)
        if not new:
            continue
        kept, named = cut_new_entities(text, source, known)
        cut += named
        if not kept:
            what = ", ".join(dict.fromkeys(named))
            return repaired, cut, (f"{name.replace('_', ' ')} names {what}, which the sources "
                                   "it cites do not state")  # fmt: skip
        repaired[name] = kept
    return repaired, list(dict.fromkeys(cut)), None
