"""Grounding: does every claim of a proposed digest follow from the plan summaries?

Presence (verify.py) asks whether every id and path survived; this module asks whether what the
digest says about them is supported. The rules, the same for every engine (offline included),
read the same facts the offline engine writes from (memory/phases/statements.py):

- a text is supported when it is an excerpt of the summary it is attributed to (its words, in
  order, are a run of that summary's words: `PlanStatements.says`), or when it shares enough
  substantive content with that summary (memory/terms.py: `grounded`); a text of several `; `
  parts is supported when each part is;
- verification: PASS, FAIL or PARTIAL only when a summary of this phase reports the id that way
  (`PhaseFacts.grounded`: requirements lists, requirement lines, requirement-context sentences,
  bounded by the plan's outcome); otherwise NOT VERIFIED. A NOT VERIFIED for an id a summary
  reports is repaired to the reported verdict (the verdicts are the summaries', whoever
  proposes the text). A verdict's evidence cites a reporting
  plan and says only what those plans' summaries say (or that the id was reported, passed, is
  open).
- deliverables: each names a plan of this phase; every plan with a summary has one; its text is
  supported by that plan's summary and not only by another plan's. A plan whose summary says
  nothing of substance gets `NOT_RECORDED`.
- decisions: a plan of this phase, supported by that plan's decisions (bullets, tables and
  frontmatter of statements.py, plus sentences that decide, choose or reject); when the
  summaries record decisions, the section is not empty.
- files: the path is an extracted path (or a member of an extracted brace list); the change
  text is supported by what the summaries say of that path, or is a short neutral phrase.
- checks and agents: a plan or agent of this phase; text supported by its summaries.
- no placeholder anywhere (`x`, "(no deliverable proposed)", "None recorded", "Plan x" ...), and
  no text over its length (render.LIMITS).

Each problem is data (kind, section, plan/id/path, message). `REPAIRABLE` kinds are fixed
deterministically (repair.py); the others need the model: a re-ask, else the offline digest's
section (settle.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from legion_llm.memory.entities import new_entities
from legion_llm.memory.phases.extract import PhaseFacts, expand_braces, find_paths
from legion_llm.memory.phases.paths import paths_per_line
from legion_llm.memory.phases.statements import (
    PlanDoc,
    PlanStatements,
    deciding_lines,
    first_content,
    plan_statements,
    says,
    token_line,
)
from legion_llm.memory.terms import (
    STRICT_THRESHOLD,
    THRESHOLD,
    content_terms,
    grounded,
    is_placeholder,
    terms_of,
)
from legion_llm.pipeline.compact.render import LIMITS, NOT_RECORDED, PhaseDigest

SECTION_NAMES = ("deliverables", "decisions", "files", "verification", "checks", "agents")
REPAIRABLE = frozenset(
    {"missing-id", "missing-path", "invented-id", "invented-path", "unknown-path",
     "unknown-requirement", "unknown-agent", "uncited-evidence", "duplicate-id", "long-text",
     "new-entity", "placeholder-change", "unclaimed-verdict"}
)  # fmt: skip
# problems of form, not of fact: repair fixes them for free, and a file that has them claims
# nothing false (verify-compaction reports them without failing the file; a NOT VERIFIED for
# a reported id claims less than the summaries, never more)
FORM_KINDS = frozenset({"long-text", "uncited-evidence", "duplicate-id", "unclaimed-verdict"})
NEEDS_MODEL = frozenset(
    {"ungrounded-verdict", "placeholder", "unknown-plan", "missing-deliverable",
     "ungrounded-text", "wrong-plan", "empty-section", "too-long"}
)  # fmt: skip
_NEUTRAL_WORDS = """named mentioned referenced listed touched new edited deleted removed renamed
    moved generated read tested configured documented file only summaries verification recorded
    noted cited kept replaced split merged check checks checked checklist passed failed failing
    open more self-check"""
_NEUTRAL = terms_of(_NEUTRAL_WORDS.split())
_VERDICT_WORDS = """report reported reports roadmap requirement verified verify pass passed passing
    fail failed failing partial partially satisfied satisfies satisfy covered cover covers open
    unclear yet only listed named summary"""
_EVIDENCE_NEUTRAL = _NEUTRAL | terms_of(_VERDICT_WORDS.split())
_PLAN_ID = re.compile(r"(?<![\w.])\d+(?:\.\d+)*-\d+[a-z]?(?![\w])")
_PARTS = re.compile(r";\s+")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a proposal, precise enough to re-ask for exactly that."""

    kind: str
    section: str
    message: str
    plan: str | None = None
    id: str | None = None
    path: str | None = None
    agent: str | None = None

    @property
    def repairable(self) -> bool:
        return self.kind in REPAIRABLE

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if v is not None}
        return {**data, "repairable": self.repairable}


@dataclass(frozen=True)
class Source:
    """What a claim may rest on: content terms, and the words in order (for excerpts)."""

    terms: frozenset[str]
    tokens: str = ""

    def supports(self, text: str, threshold: float = THRESHOLD) -> bool:
        return says(text, self.tokens) or grounded(text, self.terms, threshold)

    def __or__(self, other: Source) -> Source:
        return Source(self.terms | other.terms, f"{self.tokens} \x00 {other.tokens}")


_EMPTY = Source(frozenset())


@dataclass(frozen=True)
class Evidence:
    """The originals as the rules read them: per plan, per plan's decisions, per path."""

    statements: dict[str, tuple[PlanStatements, ...]]  # plan -> its summary (or its parts)
    plans: dict[str, Source]
    decisions: dict[str, Source]
    lines: dict[str, list[str]]  # path -> the summary texts that name or describe it
    agents: dict[str, tuple[str, ...]]
    owner: dict[str, str] = field(default_factory=dict)  # term -> the one plan holding it
    recorded: frozenset[str] = frozenset()  # plans whose summaries record decisions
    texts: dict[str, str] = field(default_factory=dict)  # plan -> its summary as written
    _paths: dict[str, Source] = field(default_factory=dict)

    def text_of(self, plans: Iterable[str]) -> str:
        """The summaries of these plans as written (every plan's when none is named)."""
        wanted = [p for p in plans if p in self.texts] or list(self.texts)
        return "\n".join(self.texts[p] for p in wanted)

    def path_source(self, path: str) -> Source:
        """What the summaries say of `path` (made when a change text needs it)."""
        if path not in self._paths:
            texts = self.lines.get(path, [])
            self._paths[path] = Source(terms_of(texts), " \x00 ".join(map(token_line, texts)))
        return self._paths[path]

    @cached_property
    def phase(self) -> Source:
        """Every plan's summary as one source."""
        found = _EMPTY
        for source in self.plans.values():
            found = found | source
        return found

    def has_content(self, plan: str) -> bool:
        """Whether the plan's summary says anything a deliverable could be (else NOT_RECORDED)."""
        return any(
            s.one_liner or s.deliverables or first_content(s.parts)
            for s in self.statements.get(plan, ())
        )

    @classmethod
    def build(cls, docs: Sequence[PlanDoc], paths: Iterable[str]) -> Evidence:
        statements: dict[str, list[PlanStatements]] = {}
        for doc in docs:
            statements.setdefault(doc.facts.id, []).append(plan_statements(doc.facts, doc.text))
        plans = {pid: _source(d.text for d in docs if d.facts.id == pid) for pid in statements}
        decisions = {pid: _source(_decision_texts(found)) for pid, found in statements.items()}
        recorded = frozenset(pid for pid, found in statements.items()
                             if any(s.decisions for s in found))  # fmt: skip
        agents: dict[str, list[str]] = {}
        for doc in docs:
            if doc.facts.agent and doc.facts.id not in agents.get(doc.facts.agent, []):
                agents.setdefault(doc.facts.agent, []).append(doc.facts.id)
        counts = Counter(t for source in plans.values() for t in source.terms)
        owner = {t: pid for pid, src in plans.items() for t in src.terms if counts[t] == 1}
        texts: dict[str, str] = {}
        for doc in docs:
            texts[doc.facts.id] = f"{texts.get(doc.facts.id, '')}\n{doc.text}"
        return cls({pid: tuple(found) for pid, found in statements.items()}, plans, decisions,
                   _path_lines(docs, statements, paths), {a: tuple(p) for a, p in agents.items()},
                   owner, recorded, texts)  # fmt: skip


def _source(texts: Iterable[str]) -> Source:
    texts = list(texts)
    return Source(terms_of(texts), " \x00 ".join(map(token_line, texts)))


def _decision_texts(found: Sequence[PlanStatements]) -> list[str]:
    """A plan's decision material: its recorded decisions and the sentences that decide."""
    texts = [d.text for s in found for d in s.decisions]
    return texts + [line for s in found for line in deciding_lines(s.parts)]


def _path_lines(
    docs: Sequence[PlanDoc], statements: dict[str, list[PlanStatements]], paths: Iterable[str]
) -> dict[str, list[str]]:
    """path -> every summary line that names it and every Files text that describes it (a
    brace list's members name it too)."""
    wanted: dict[str, list[str]] = {}
    for path in paths:
        for name in {path, *expand_braces(path)}:
            wanted.setdefault(name, []).append(path)
    found: dict[str, list[str]] = {}
    for doc in docs:
        for line, named in paths_per_line(doc.text):
            for name in named:
                for path in wanted.get(name, []):
                    found.setdefault(path, []).append(line)
    for fact in (f for group in statements.values() for s in group for f in s.files):
        for path in wanted.get(fact.path, []):
            # the list's line, and the note it gives the path (a mapping's `change:` line)
            found.setdefault(path, []).extend([fact.source, fact.change])
    return found


# ---------------------------------------------------------------- the rules


def ground(digest: PhaseDigest, facts: PhaseFacts, evidence: Evidence) -> list[Problem]:
    """Every grounding problem of `digest` (see the module docstring)."""
    return [
        *_deliverables(digest, facts, evidence),
        *_decisions(digest, facts, evidence),
        *_files(digest, facts, evidence),
        *_verification(digest, facts, evidence),
        *_checks(digest, facts, evidence),
        *_agents(digest, evidence),
        *_lengths(digest),
        *_new_entities(digest, facts, evidence),
    ]


def known_names(facts: PhaseFacts) -> frozenset[str]:
    """Names a compacted file may use whatever a plan's summary says: the phase's plans, its
    requirement ids and paths (their own checks hold them), the verdict words."""
    return frozenset({*(p.id for p in facts.plans), *facts.requirement_ids, *facts.paths})


def entity_sources(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence
                   ) -> Iterable[tuple[str, str, str, str, str]]:  # fmt: skip
    """(section, field, key, text, the originals it must be stated in) for every free text a
    reader takes facts from: a plan's texts against that plan's summary, a change against the
    phase's, evidence against the reporting plans', an agent's work against its plans'. Check
    lines are left out: their counts are derived from the summaries' tables."""
    for d in digest.deliverables:
        yield "deliverables", "summary", d.plan_id, d.summary, ev.text_of([d.plan_id])
        for f in d.follow_ups:
            yield "deliverables", "follow_up", d.plan_id, f, ev.text_of([d.plan_id])
    for c in digest.decisions:
        for name, text in (("decision", c.decision), ("rationale", c.rationale),
                           *(("rejected", r) for r in c.rejected_alternatives)):  # fmt: skip
            yield "decisions", name, c.plan_id, text, ev.text_of([c.plan_id])
    for item in digest.files:
        yield "files", "change", item.path, item.change, ev.text_of([])
    for r in digest.verification:
        plans = (
            facts.grounded(r.requirement_id).plans
            if r.requirement_id in facts.requirement_ids
            else ()
        )
        yield "verification", "evidence", r.requirement_id, r.evidence, ev.text_of(plans)
    for a in digest.agents:
        yield "agents", "work", a.agent, a.work, ev.text_of(ev.agents.get(a.agent, ()))


def entity_problems(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> list[Problem]:
    """The new-entity problems of a digest (what repair will cut)."""
    return list(_new_entities(digest, facts, ev))


def _new_entities(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    """A name, number, code span or identifier the cited originals do not state (repair cuts
    the clause that brings it: memory/entities.py)."""
    known = known_names(facts)
    for section, field_name, key, text, source in entity_sources(digest, facts, ev):
        if is_placeholder(text):
            continue  # a placeholder is that problem, not a fact
        new = new_entities(text, source, known)
        if new:
            yield Problem("new-entity", section,
                          f"{key}: the {field_name} names {', '.join(new)}, which its originals "
                          "do not state", **_key_of(section, key))  # fmt: skip


def _plan_ids(facts: PhaseFacts) -> set[str]:
    return {p.id for p in facts.plans}


def supported(text: str, source: Source, threshold: float = THRESHOLD) -> bool:
    """The whole text, or each of its `; ` parts, is supported by the source."""
    if source.supports(text, threshold):
        return True
    parts = [p for p in _PARTS.split(text) if p.strip()]
    return len(parts) > 1 and all(source.supports(p, threshold) for p in parts)


def _text_problem(
    section: str, plan: str, text: str, source: Source, what: str, agent: str = ""
) -> Problem | None:
    who = agent or plan
    where = {"plan": plan or None, "agent": agent or None}
    if is_placeholder(text):
        return Problem("placeholder", section, f"{who}: {what} {text!r} is a placeholder", **where)
    if not supported(text, source):
        return Problem("ungrounded-text", section,
                       f"{who}: {what} {_short(text)!r} shares too little with the summary "
                       f"of {'its plans' if agent else 'that plan'}", **where)  # fmt: skip
    return None


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _wrong_plan(plan: str, text: str, evidence: Evidence) -> str | None:
    """The other plan whose summary alone holds the text's distinctive terms, if any."""
    owners = Counter(evidence.owner[t] for t in content_terms(text) if t in evidence.owner)
    if not owners or owners.get(plan, 0) > 0:
        return None
    other, hits = owners.most_common(1)[0]
    return other if hits >= 2 else None


def _own_text(
    section: str, pid: str, text: str, source: Source, ev: Evidence, what: str
) -> Problem | None:
    """A placeholder, text of another plan, or text its own plan does not support (or None)."""
    found = _text_problem(section, pid, text, source, what)
    if (
        found
        and found.kind == "ungrounded-text"
        and supported(text, ev.plans[pid], STRICT_THRESHOLD)
    ):
        found = None  # said almost word for word elsewhere in that plan's summary
    if found is None or found.kind == "ungrounded-text":
        other = _wrong_plan(pid, text, ev)
        if other:
            return Problem("wrong-plan", section, f"{pid}: the {what} is about plan {other}", pid)
    return found


def _deliverables(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    known, seen = _plan_ids(facts), set()
    for item in digest.deliverables:
        pid = item.plan_id.strip()
        seen.add(pid)
        if pid not in known:
            yield Problem("unknown-plan", "deliverables",
                          f"deliverable for {pid!r}, which is not a plan of this phase", pid)  # fmt: skip
            continue
        if item.summary.strip() == NOT_RECORDED and not ev.has_content(pid):
            continue  # the summary says nothing a deliverable could be: the honest minimum
        found = _own_text("deliverables", pid, item.summary, ev.plans[pid], ev, "deliverable")
        yield from [found] if found else []
        for follow in item.follow_ups:
            problem = _text_problem("deliverables", pid, follow, ev.plans[pid], "follow-up")
            yield from [problem] if problem else []
    for pid in sorted(known - seen):
        yield Problem("missing-deliverable", "deliverables", f"plan {pid} has no deliverable", pid)


def _decisions(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    known = _plan_ids(facts)
    if not digest.decisions and ev.recorded & known:
        yield Problem(
            "empty-section", "decisions", "no decisions, though the summaries record some"
        )
    for item in digest.decisions:
        pid = item.plan_id.strip()
        if pid not in known:
            yield Problem("unknown-plan", "decisions",
                          f"decision for {pid!r}, which is not a plan of this phase", pid)  # fmt: skip
            continue
        source = ev.decisions.get(pid, _EMPTY)
        found = _own_text("decisions", pid, item.decision, source, ev, "decision")
        extra = [item.rationale] if item.rationale.strip() else []
        for text in [*extra, *item.rejected_alternatives]:
            found = found or _text_problem("decisions", pid, text, ev.plans[pid], "rationale")
        yield from [found] if found else []


@lru_cache(maxsize=4096)
def _neutral(change: str, vocabulary: frozenset[str] = _NEUTRAL) -> bool:
    """A short phrase that claims nothing beyond the path being named (`named in 03-01`), or
    counts in the words of a check line (`12/12 checks passed`)."""
    plain = _PLAN_ID.sub(" ", " ".join(p for p in change.split() if not find_paths(p)))
    words_ = re.findall(r"[^\W\d_]{2,}", plain)
    return 0 < len(words_) <= 6 and content_terms(plain) <= vocabulary


def _files(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    known = set(facts.paths) | {m for p in facts.paths for m in expand_braces(p)}
    for item in digest.files:
        path = item.path.strip().strip("`")
        if path not in known:
            kind = "unknown-path" if find_paths(path) else "placeholder"
            yield Problem(kind, "files", f"file row {path!r} is not a path the summaries name",
                          path=path)  # fmt: skip
            continue
        change = item.change
        parts = [part for part in _PARTS.split(change) if part.strip()]  # merged: each holds
        if not parts or any(is_placeholder(p) and not _neutral(p) for p in parts):
            yield Problem("placeholder-change", "files",
                          f"{path}: change {change!r} is a placeholder", path=path)  # fmt: skip
        elif not all(_neutral(p) or _change_supported(p, path, ev) for p in parts):
            yield Problem("ungrounded-text", "files",
                          f"{path}: change {_short(change)!r} is not what the summaries say "
                          "about it", path=path)  # fmt: skip


def _change_supported(part: str, path: str, ev: Evidence) -> bool:
    """A change part (`03-01: ...` prefixes aside) said of the path, or by the plan it names."""
    plan = re.match(r"^\s*(\d+(?:\.\d+)*-\d+[a-z]?):\s*", part)
    text = part[plan.end() :] if plan else part
    source = ev.path_source(path)
    if plan and plan.group(1) in ev.plans:
        source = source | ev.plans[plan.group(1)]
    return source.supports(text)


def _verification(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    ids, seen = set(facts.requirement_ids), set()
    for item in digest.verification:
        rid = item.requirement_id.strip()
        if rid in seen:
            yield Problem(
                "duplicate-id", "verification", f"{rid} has more than one verdict", id=rid
            )
            continue
        seen.add(rid)
        if rid not in ids:
            yield Problem("unknown-requirement", "verification",
                          f"{rid} is not a requirement of this phase", id=rid)  # fmt: skip
            continue
        truth = facts.grounded(rid)
        if not truth.allows(item.verdict):
            why = (f"reported as {truth.verdict.upper()} by {', '.join(truth.plans)}"
                   if truth.plans else "no summary of this phase reports it")  # fmt: skip
            yield Problem("ungrounded-verdict", "verification",
                          f"{rid}: {item.verdict.upper()} is not grounded ({why}); "
                          f"use {truth.verdict.upper()}", id=rid)  # fmt: skip
        elif item.verdict == "not verified" and truth.verdict != "not verified":
            yield Problem("unclaimed-verdict", "verification",
                          f"{rid}: NOT VERIFIED, though {', '.join(truth.plans)} report it "
                          f"{truth.verdict.upper()}", id=rid)  # fmt: skip
        elif _placeholder_evidence(item.evidence):
            yield Problem("placeholder", "verification",
                          f"{rid}: evidence {item.evidence!r} is a placeholder", id=rid)  # fmt: skip
        elif not _evidence_grounded(item.evidence, truth.plans or tuple(ev.plans), ev):
            yield Problem("ungrounded-text", "verification",
                          f"{rid}: evidence {_short(item.evidence)!r} is not what the summaries "
                          f"of {', '.join(truth.plans) or 'this phase'} say", id=rid)  # fmt: skip
        elif item.verdict != "not verified" and not any(p in item.evidence for p in truth.plans):
            yield Problem("uncited-evidence", "verification",
                          f"{rid}: the evidence does not cite {', '.join(truth.plans)}", id=rid)  # fmt: skip


def _evidence_grounded(evidence: str, plans: Sequence[str], ev: Evidence) -> bool:
    """Each `; ` part of the evidence (plan ids aside) says only that the id was reported,
    passed, is open... or is supported by the summaries of the plans that report the id (any
    plan of the phase, for an id none reports)."""
    source = _EMPTY
    for pid in plans:
        source = source | ev.plans.get(pid, _EMPTY)
    plain = _PLAN_ID.sub(" ", evidence)
    parts = [part for part in _PARTS.split(plain) if part.strip()]
    return all(content_terms(p) <= _EVIDENCE_NEUTRAL or source.supports(p) for p in parts)


def _placeholder_evidence(evidence: str) -> bool:
    """Filler such as `x` or `n/a` (empty evidence is uncited, a bare plan id is a citation)."""
    return bool(evidence.strip()) and not _PLAN_ID.search(evidence) and is_placeholder(evidence)


def _checks(digest: PhaseDigest, facts: PhaseFacts, ev: Evidence) -> Iterable[Problem]:
    known = _plan_ids(facts)
    for item in digest.checks:
        pid = item.plan_id.strip()
        if pid not in known:
            yield Problem("unknown-plan", "checks",
                          f"check result for {pid!r}, which is not a plan of this phase", pid)  # fmt: skip
            continue
        parts = [p for p in _PARTS.split(item.result) if p.strip()]
        if parts and all(_neutral(p) or ev.plans[pid].supports(_failing(p)) for p in parts):
            continue
        found = _text_problem("checks", pid, item.result, ev.plans[pid], "check result")
        yield from [found] if found else []


def _failing(part: str) -> str:
    """A check part as the summary says it (`FAIL: lint (exit 1)` names `lint`)."""
    return re.sub(r"^FAIL:\s*|\s*\(exit \d+\)$", "", part)


def _agents(digest: PhaseDigest, ev: Evidence) -> Iterable[Problem]:
    for item in digest.agents:
        if item.agent not in ev.agents:
            yield Problem("unknown-agent", "agents",
                          f"{item.agent!r} executed no plan of this phase", agent=item.agent)  # fmt: skip
        elif item.work.strip():
            source = _EMPTY
            for pid in ev.agents[item.agent]:
                source = source | ev.plans[pid]
            found = _text_problem("agents", "", item.work, source, "work", agent=item.agent)
            yield from [found] if found else []


def _lengths(digest: PhaseDigest) -> Iterable[Problem]:
    """A text over its field's limit (repair cuts it at a sentence boundary)."""
    for section, field_name, key, text in digest_texts(digest):
        limit = LIMITS.get(field_name)
        if limit and len(text) > limit:
            yield Problem("long-text", section,
                          f"{key}: the {field_name} is {len(text)} characters (at most {limit})",
                          **_key_of(section, key))  # fmt: skip


def _key_of(section: str, key: str) -> dict[str, str]:
    name = {"files": "path", "verification": "id", "agents": "agent"}.get(section, "plan")
    return {name: key}


def digest_texts(digest: PhaseDigest) -> Iterable[tuple[str, str, str, str]]:
    """(section, field, key, text) for every free text of the digest."""
    for d in digest.deliverables:
        yield "deliverables", "summary", d.plan_id, d.summary
        yield from (("deliverables", "follow_up", d.plan_id, f) for f in d.follow_ups)
    for c in digest.decisions:
        yield "decisions", "decision", c.plan_id, c.decision
        yield "decisions", "rationale", c.plan_id, c.rationale
        yield from (("decisions", "rejected", c.plan_id, r) for r in c.rejected_alternatives)
    yield from (("files", "change", f.path, f.change) for f in digest.files)
    yield from (("verification", "evidence", r.requirement_id, r.evidence)
                for r in digest.verification)  # fmt: skip
    yield from (("checks", "result", c.plan_id, c.result) for c in digest.checks)
    yield from (("agents", "work", a.agent, a.work) for a in digest.agents)
