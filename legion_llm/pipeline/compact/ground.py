"""Grounding: does every claim of a proposed digest follow from the plan summaries?

Presence (verify.py) asks whether every id and path survived; this module asks whether what the
digest says about them is supported. The rules, the same for every engine (offline included):

- verification: PASS, FAIL or PARTIAL only when a summary of this phase reports the id that way
  (`PhaseFacts.grounded`: requirements lists, requirement lines, prose status lines, bounded
  by the plan's outcome); otherwise NOT VERIFIED. A verdict's evidence cites a reporting plan
  and says only what those plans' summaries say (or that the id was reported, passed, is open).
- deliverables: each names a plan of this phase; every plan with a summary has one; its text
  shares substantive content with that plan's summary (grounding.py) and not only with another
  plan's.
- decisions: a plan of this phase, grounded in that plan's decisions (a Decisions section, the
  frontmatter's key-decisions, sentences that decide, choose or reject).
- files: the path is an extracted path (or a member of an extracted brace list); the change
  text is grounded in the summary lines naming the path, or a short neutral phrase.
- checks and agents: a plan or agent of this phase; text grounded in its summaries.
- no placeholder anywhere (`x`, "(no deliverable proposed)", "None recorded", "Plan x" ...).

Each problem is data (kind, section, plan/id/path, message). `REPAIRABLE` kinds are fixed
deterministically (repair.py); the others need the model: a re-ask, else the offline digest's
section (settle.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from legion_llm.memory.phases.extract import PhaseFacts, expand_braces, find_paths
from legion_llm.memory.phases.paths import paths_per_line
from legion_llm.pipeline.compact.offline import PlanDoc
from legion_llm.pipeline.compact.render import PhaseDigest
from legion_llm.pipeline.compact.text import PlanParts
from legion_llm.pipeline.grounding import (
    STRICT_THRESHOLD,
    content_terms,
    grounded,
    is_placeholder,
    terms_of,
)

SECTION_NAMES = ("deliverables", "decisions", "files", "verification", "checks", "agents")
REPAIRABLE = frozenset(
    {"missing-id", "missing-path", "invented-id", "invented-path", "unknown-path",
     "unknown-requirement", "unknown-agent", "uncited-evidence", "duplicate-id"}
)  # fmt: skip
NEEDS_MODEL = frozenset(
    {"ungrounded-verdict", "placeholder", "unknown-plan", "missing-deliverable",
     "ungrounded-text", "wrong-plan", "empty-section", "too-long"}
)  # fmt: skip
_NEUTRAL_WORDS = """named mentioned referenced listed touched new edited deleted removed renamed
    moved generated read tested configured documented file only summaries verification recorded
    noted cited kept replaced split merged"""
_NEUTRAL = terms_of(_NEUTRAL_WORDS.split())
_VERDICT_WORDS = """report reported reports roadmap requirement verified verify pass passed passing
    fail failed failing partial partially satisfied satisfies satisfy covered cover covers open
    unclear yet only listed named summary"""
_EVIDENCE_NEUTRAL = _NEUTRAL | terms_of(_VERDICT_WORDS.split())
_DECIDING = re.compile(
    r"\b(?:decid|chose|choos|choice|reject|instead of|rather than|opt(?:ed)?)", re.I
)
_PLAN_ID = re.compile(r"(?<![\w.])\d+(?:\.\d+)?-\d+[a-z]?(?![\w])")


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
class Evidence:
    """The originals as content terms: per plan, per plan's decisions, per path."""

    plans: dict[str, frozenset[str]]
    decisions: dict[str, frozenset[str]]
    lines: dict[str, list[str]]  # path -> the summary lines that name it
    agents: dict[str, tuple[str, ...]]
    owner: dict[str, str] = field(default_factory=dict)  # term -> the one plan holding it
    recorded: frozenset[str] = frozenset()  # plans with a Decisions section or key-decisions
    _terms: dict[str, frozenset[str]] = field(default_factory=dict)

    def path_terms(self, path: str) -> frozenset[str]:
        """Content terms of the lines naming `path` (made when a change text needs them)."""
        if path not in self._terms:
            self._terms[path] = terms_of(self.lines.get(path, []))
        return self._terms[path]

    @classmethod
    def build(cls, docs: Sequence[PlanDoc], paths: Iterable[str]) -> Evidence:
        texts: dict[str, list[str]] = {}
        deciding: dict[str, list[str]] = {}
        recorded: set[str] = set()
        for doc in docs:
            texts.setdefault(doc.facts.id, []).append(doc.text)
            found, listed = _decision_texts(doc)
            deciding.setdefault(doc.facts.id, []).extend(found)
            recorded |= {doc.facts.id} if listed else set()
        plans = {pid: terms_of(parts) for pid, parts in texts.items()}
        decisions = {pid: terms_of(parts) for pid, parts in deciding.items()}
        agents: dict[str, list[str]] = {}
        for doc in docs:
            if doc.facts.agent and doc.facts.id not in agents.get(doc.facts.agent, []):
                agents.setdefault(doc.facts.agent, []).append(doc.facts.id)
        counts = Counter(t for terms in plans.values() for t in terms)
        owner = {t: pid for pid, terms in plans.items() for t in terms if counts[t] == 1}
        return cls(plans, decisions, _path_lines(docs, paths),
                   {a: tuple(p) for a, p in agents.items()}, owner, frozenset(recorded))  # fmt: skip


def _decision_texts(doc: PlanDoc) -> tuple[list[str], bool]:
    """(the plan's decision material, whether it records decisions in a section or key)."""
    parts = PlanParts.of(doc.facts, doc.text)
    found = [s.text for s in parts.matching(("decision",))]
    inside = False
    for line in parts.frontmatter:
        if not line.startswith((" ", "\t", "-")):
            inside = bool(re.match(r"^(key[-_])?decisions\s*:", line))
        elif inside:
            found.append(line)
    listed = any(content_terms(text) for text in found)
    found += [line for s in parts.sections for line in s.lines if _DECIDING.search(line)]
    return found, listed


def _path_lines(docs: Sequence[PlanDoc], paths: Iterable[str]) -> dict[str, list[str]]:
    """path -> every summary line that names it (a brace list's members name it too)."""
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
    ]


def _plan_ids(facts: PhaseFacts) -> set[str]:
    return {p.id for p in facts.plans}


def _text_problem(
    section: str, plan: str, text: str, source: frozenset[str], what: str, agent: str = ""
) -> Problem | None:
    who = agent or plan
    where = {"plan": plan or None, "agent": agent or None}
    if is_placeholder(text):
        return Problem("placeholder", section, f"{who}: {what} {text!r} is a placeholder", **where)
    if not grounded(text, source):
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
    section: str, pid: str, text: str, source: frozenset[str], ev: Evidence, what: str
) -> Problem | None:
    """A placeholder, text of another plan, or text its own plan does not support (or None)."""
    found = _text_problem(section, pid, text, source, what)
    if (
        found
        and found.kind == "ungrounded-text"
        and grounded(text, ev.plans[pid], STRICT_THRESHOLD)
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
        source = ev.decisions.get(pid, frozenset())
        found = _own_text("decisions", pid, item.decision, source, ev, "decision")
        extra = [item.rationale] if item.rationale.strip() else []
        for text in [*extra, *item.rejected_alternatives]:
            found = found or _text_problem("decisions", pid, text, ev.plans[pid], "rationale")
        yield from [found] if found else []


@lru_cache(maxsize=4096)
def _neutral(change: str) -> bool:
    """A short phrase that claims nothing beyond the path being named (`named in 03-01`)."""
    plain = _PLAN_ID.sub(" ", " ".join(p for p in change.split() if not find_paths(p)))
    words_ = re.findall(r"[A-Za-z]{2,}", plain)
    return 0 < len(words_) <= 6 and content_terms(plain) <= _NEUTRAL


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
        parts = [part for part in change.split("; ") if part.strip()]  # merged parts: each holds
        if not parts or (is_placeholder(change) and not _neutral(change)):
            yield Problem("placeholder", "files", f"{path}: change {change!r} is a placeholder",
                          path=path)  # fmt: skip
        elif not all(_neutral(p) or grounded(p, ev.path_terms(path)) for p in parts):
            yield Problem("ungrounded-text", "files",
                          f"{path}: change {_short(change)!r} is not what the summaries say "
                          "about it", path=path)  # fmt: skip


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
    passed, is open... or is grounded in the summaries of the plans that report the id (any
    plan of the phase, for an id none reports)."""
    source = terms_of([])
    for pid in plans:
        source |= ev.plans.get(pid, frozenset())
    parts = [part for part in _PLAN_ID.sub(" ", evidence).split("; ") if part.strip()]
    return all(content_terms(p) <= _EVIDENCE_NEUTRAL or grounded(p, source) for p in parts)


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
        elif not _neutral(item.result):
            found = _text_problem("checks", pid, item.result, ev.plans[pid], "check result")
            yield from [found] if found else []


def _agents(digest: PhaseDigest, ev: Evidence) -> Iterable[Problem]:
    for item in digest.agents:
        if item.agent not in ev.agents:
            yield Problem("unknown-agent", "agents",
                          f"{item.agent!r} executed no plan of this phase", agent=item.agent)  # fmt: skip
        elif item.work.strip():
            source = terms_of([])
            for pid in ev.agents[item.agent]:
                source |= ev.plans[pid]
            found = _text_problem("agents", "", item.work, source, "work", agent=item.agent)
            yield from [found] if found else []
