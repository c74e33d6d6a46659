"""Deterministic repair of a digest: what the review marks repairable, fixed without a model.

- a requirement id missing from Verification gets the offline step's line for it: its grounded
  verdict and the plan(s) that report it;
- a path missing from Files Modified gets its own row: the offline step's change text (from its
  summary line) and the plan(s) that name it;
- an id or path the originals never name is struck: its row goes, and every sentence that
  mentions it is rewritten without it (`in src/x.py`, `(src/x.py)`, `, src/x.py` go), or dropped
  when nothing of substance is left;
- a row for a path the summaries do not list as a file, a verdict for another phase's
  requirement, a second verdict for one id and an agent that ran no plan are dropped;
- a verdict's evidence that cites no reporting plan gets the plans appended;
- a NOT VERIFIED for an id a summary reports takes the offline step's line (the reported
  verdict and the plans that report it);
- a placeholder change text (`updated`, `n/a`) takes the summaries' own change text for that
  path (the offline engine's);
- a text longer than its field's limit is cut at a sentence boundary (render.LIMITS);
- a clause that names an entity its originals do not state (a name, a number, a code span, an
  identifier: memory/entities.py) is cut; a text with nothing left keeps its problem, and the
  item takes the offline text (settle's ladder).

Each change is reported in one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from legion_llm.memory.entities import cut_new_entities
from legion_llm.memory.phases.extract import PhaseFacts, expand_braces
from legion_llm.memory.phases.markdown import sentences
from legion_llm.memory.terms import content_terms, is_placeholder
from legion_llm.pipeline.compact.ground import (
    Evidence,
    Problem,
    Source,
    entity_sources,
    known_names,
)
from legion_llm.pipeline.compact.render import FileItem, PhaseDigest, RequirementItem, fit_lengths


def repair(
    digest: PhaseDigest,
    problems: list[Problem],
    facts: PhaseFacts,
    fallback: Callable[[], PhaseDigest],
    evidence: Evidence | None = None,
) -> tuple[PhaseDigest, list[str]]:
    """The digest with every repairable problem fixed, and one note per fix; `fallback` gives
    the offline engine's digest (made only when a missing line is needed)."""
    kinds: dict[str, list[Problem]] = {}
    for problem in problems:
        kinds.setdefault(problem.kind, []).append(problem)
    notes: list[str] = []
    ids = [p.id for p in kinds.get("invented-id", []) if p.id]
    paths = [p.path for p in kinds.get("invented-path", []) if p.path]
    if ids or paths:
        digest = strike(digest, ids, paths, evidence)
        notes += [f"removed {x}: the originals never name it" for x in [*ids, *paths]]
    kinds["unknown-path"] = [p for p in kinds.get("unknown-path", []) if p.path not in paths]
    kinds["unknown-requirement"] = [
        p for p in kinds.get("unknown-requirement", []) if p.id not in ids
    ]
    digest, dropped = _drop(digest, kinds)
    notes += dropped
    digest, cited = _cite(digest, kinds.get("uncited-evidence", []), facts)
    notes += cited
    placeholders = {p.path for p in kinds.get("placeholder-change", []) if p.path}
    if placeholders:
        digest, changed = _own_change_texts(digest, placeholders, fallback())
        notes += changed
    if kinds.get("new-entity") and evidence is not None:
        digest, cut_notes = cut_entities(digest, facts, evidence)
        notes += cut_notes
    if kinds.get("long-text"):
        digest, cut = fit_lengths(digest)
        notes += cut
    unclaimed = [p.id for p in kinds.get("unclaimed-verdict", []) if p.id]
    if unclaimed:
        digest = _offline_lines(digest, unclaimed, facts, fallback())
        notes += [f"{rid}: the verdict the summaries report replaces NOT VERIFIED"
                  for rid in unclaimed]  # fmt: skip
    missing_ids = [p.id for p in kinds.get("missing-id", []) if p.id]
    if missing_ids:
        digest = _offline_lines(digest, missing_ids, facts, fallback())
        notes += [f"requirement {rid} added to Verification (the proposal left it out)"
                  for rid in missing_ids]  # fmt: skip
    missing_paths = [p.path for p in kinds.get("missing-path", []) if p.path]
    if missing_paths:
        digest = _add_files(digest, missing_paths, facts, fallback())
        notes += [f"path {p} added to Files Modified (the proposal left it out)"
                  for p in missing_paths]  # fmt: skip
    return digest, notes


def _drop(digest: PhaseDigest, kinds: dict[str, list[Problem]]) -> tuple[PhaseDigest, list[str]]:
    rows = {p.path for p in kinds.get("unknown-path", [])}
    foreign = {p.id for p in kinds.get("unknown-requirement", [])}
    agents = {p.agent for p in kinds.get("unknown-agent", []) if p.agent}
    seen: set[str] = set()
    verification = []
    for item in digest.verification:
        rid = item.requirement_id.strip()
        if rid not in foreign and rid not in seen:
            verification.append(item)
        seen.add(rid)
    notes = [f"dropped the file row {p}: the summaries do not list it as a file" for p in rows]
    notes += [f"dropped the verdict for {i}: not a requirement of this phase" for i in foreign]
    if kinds.get("duplicate-id"):
        notes.append("dropped repeated verdicts (the first one for each id is kept)")
    notes += [f"dropped the agent {a}: it executed no plan of this phase" for a in agents]
    update = {
        "files": [f for f in digest.files if f.path.strip().strip("`") not in rows],
        "verification": verification,
        "agents": [a for a in digest.agents if a.agent not in agents],
    }
    return digest.model_copy(update=update), notes


def _cite(
    digest: PhaseDigest, uncited: list[Problem], facts: PhaseFacts
) -> tuple[PhaseDigest, list[str]]:
    wanted = {p.id for p in uncited if p.id}
    if not wanted:
        return digest, []
    items, notes = [], []
    for item in digest.verification:
        if item.requirement_id in wanted:
            plans = ", ".join(facts.grounded(item.requirement_id).plans)
            said = item.evidence.strip().rstrip(".")
            evidence = f"{said} ({plans})" if said else f"reported by {plans}"
            item = item.model_copy(update={"evidence": evidence})
            notes.append(f"cited {plans} in the evidence for {item.requirement_id}")
        items.append(item)
    return digest.model_copy(update={"verification": items}), notes


def _offline_lines(
    digest: PhaseDigest, missing: list[str], facts: PhaseFacts, fallback: PhaseDigest
) -> PhaseDigest:
    """The digest with the offline step's verification line for each id, in place of the
    digest's own when it has one."""
    known = {r.requirement_id: r for r in fallback.verification}
    kept = [r for r in digest.verification if r.requirement_id not in set(missing)]
    added = [known.get(rid) or _not_verified(rid, facts) for rid in missing]
    order = {rid: i for i, rid in enumerate(facts.requirement_ids)}
    merged = sorted([*kept, *added], key=lambda r: order.get(r.requirement_id, len(order)))
    return digest.model_copy(update={"verification": merged})


def _not_verified(rid: str, facts: PhaseFacts) -> RequirementItem:
    grounded = facts.grounded(rid)
    where = ", ".join(grounded.plans) or "no plan summary"
    return RequirementItem(requirement_id=rid, verdict=grounded.verdict,
                           evidence=f"reported by {where}")  # fmt: skip


def plans_by_path(facts: PhaseFacts) -> dict[str, list[str]]:
    """path (and each member of a brace list) -> the plans whose summaries name it."""
    found: dict[str, list[str]] = {}
    for plan in facts.plans:
        for path in plan.paths:
            for name in dict.fromkeys([path, *expand_braces(path)]):
                if plan.id not in found.setdefault(name, []):
                    found[name].append(plan.id)
    return found


def _add_files(
    digest: PhaseDigest, missing: list[str], facts: PhaseFacts, fallback: PhaseDigest
) -> PhaseDigest:
    known = {f.path: f for f in fallback.files}
    naming = plans_by_path(facts)
    kept = [f for f in digest.files if f.path not in set(missing)]
    added = [_file_row(path, known.get(path), naming.get(path, [])) for path in missing]
    order = {path: i for i, path in enumerate(facts.paths)}
    merged = sorted([*kept, *added], key=lambda f: order.get(f.path, len(order)))
    return digest.model_copy(update={"files": merged})


def _file_row(path: str, offline: FileItem | None, plans: list[str]) -> FileItem:
    """Its own row: the summary line's change text and the plans that name the path."""
    change = offline.change if offline else ""
    if not change or change.startswith("named"):
        return FileItem(path=path, change=f"named in {', '.join(plans) or 'the summaries'}")
    if plans and not any(p in change for p in plans):
        change = f"{change} ({', '.join(plans)})"
    return FileItem(path=path, change=change)


Judge = Callable[[str], bool]


def strike(
    digest: PhaseDigest, ids: list[str], paths: list[str], evidence: Evidence | None = None
) -> PhaseDigest:
    """Remove rows keyed by an invented id or path; rewrite every other text without it. With
    `evidence`, a rewritten sentence stays only when its plan's summary still supports it (the
    rest of a sentence about a file that does not exist is no claim to keep)."""
    names = [
        rf"(?<![\w./\-]){re.escape(p)}(?![\w/\-])" for p in sorted(paths, key=len, reverse=True)
    ]
    names += [rf"(?<![\w.\-/]){re.escape(i)}(?![\w\-]|\.\d)" for i in ids]
    rows = {
        "files": [f for f in digest.files if f.path not in paths],
        "verification": [r for r in digest.verification if r.requirement_id not in ids],
    }
    digest = digest.model_copy(update=rows)
    if not names:
        return digest
    rewrites = _mention(r"(?:" + "|".join(names) + r")")

    def judge(source: Source | None) -> Judge:
        return lambda sentence: source is None or source.supports(sentence)

    plan = (lambda pid: judge(evidence.plans.get(pid))) if evidence else (lambda pid: judge(None))
    phase = judge(evidence.phase) if evidence else judge(None)
    path = (lambda p: judge(evidence.path_source(p) | evidence.phase)) if evidence else (
        lambda p: judge(None))  # fmt: skip
    return _rewrite_items(digest, rewrites, plan, path, phase)


def _rewrite_items(
    digest: PhaseDigest,
    rewrites: list[tuple[re.Pattern[str], str]],
    plan: Callable[[str], Judge],
    path: Callable[[str], Judge],
    phase: Judge,
) -> PhaseDigest:
    def fix(text: str, keep: Judge) -> str:
        return _rewrite(text, rewrites, keep)

    return digest.model_copy(update={
        "deliverables": [d.model_copy(update={
            "summary": fix(d.summary, plan(d.plan_id)),
            "follow_ups": [t for f in d.follow_ups if (t := fix(f, plan(d.plan_id)))]})
            for d in digest.deliverables],
        "decisions": [c.model_copy(update={
            "decision": fix(c.decision, plan(c.plan_id)),
            "rationale": fix(c.rationale, plan(c.plan_id)),
            "rejected_alternatives": [t for r in c.rejected_alternatives
                                      if (t := fix(r, plan(c.plan_id)))]})
            for c in digest.decisions],
        "files": [f.model_copy(update={"change": fix(f.change, path(f.path))})
                  for f in digest.files],
        "verification": [r.model_copy(update={"evidence": fix(r.evidence, phase)})
                         for r in digest.verification],
        "checks": [c.model_copy(update={"result": fix(c.result, plan(c.plan_id))})
                   for c in digest.checks],
        "agents": [a.model_copy(update={"work": fix(a.work, phase)}) for a in digest.agents],
    })  # fmt: skip


_PREPOSITION = r"(?:in|into|to|from|at|under|inside|via|with|of|for|on|by|as)"


def _mention(name: str) -> list[tuple[re.Pattern[str], str]]:
    """Rewrites that take a name out of a sentence with the words that only served it."""
    quoted = rf"`?{name}`?"
    return [
        (re.compile(rf"\s*\(\s*{quoted}\s*\)"), ""),  # `helper (src/x.py)`
        (re.compile(rf"\s+{_PREPOSITION}\s+(?:the\s+)?{quoted}(?=[\s.,;:!?)]|$)"), ""),
        (re.compile(rf"{quoted}\s*(?:,|\band\b|&|\+|/)\s*"), ""),  # `x, y` and `x and y`
        (re.compile(rf"\s*(?:,|\band\b|&|\+|/)\s*{quoted}"), ""),
        (re.compile(quoted), ""),
    ]


def _rewrite(text: str, rewrites: list[tuple[re.Pattern[str], str]], keep: Judge) -> str:
    """`text` with the name taken out of each sentence; a sentence left with nothing of
    substance, or that `keep` refuses, is dropped."""
    first = rewrites[-1][0]
    if not first.search(text):
        return text
    kept = []
    for sentence in sentences(text) or [text]:
        if not first.search(sentence):
            kept.append(sentence)
            continue
        for pattern, replacement in rewrites:
            sentence = pattern.sub(replacement, sentence)
        sentence = _tidy(sentence)
        if content_terms(sentence) and not is_placeholder(sentence) and keep(sentence):
            kept.append(sentence)
    return " ".join(kept)


def _tidy(sentence: str) -> str:
    sentence = re.sub(r"\(\s*\)|`\s*`", "", sentence)
    sentence = re.sub(r"\s+([,.;:!?)])", r"\1", sentence)
    sentence = re.sub(r"([,;:])(?=[,.;:!?])", "", sentence)
    sentence = re.sub(rf"\s+(?:{_PREPOSITION}|and|or|the)([.;:!?]|$)", r"\1", sentence)
    return " ".join(sentence.split()).strip(" ,;:")


def cut_entities(
    digest: PhaseDigest, facts: PhaseFacts, evidence: Evidence
) -> tuple[PhaseDigest, list[str]]:
    """Every free text without the clauses that bring an entity its originals do not state
    (ground.entity_sources says which originals); a text that would be left saying nothing
    stays as it was (its problem sends the item down the ladder)."""
    known = known_names(facts)
    notes: list[str] = []
    cuts: dict[tuple[str, str, str, str], str] = {}
    for section, field_name, key, text, source in entity_sources(digest, facts, evidence):
        left, new = cut_new_entities(text, source, known)
        if new and left:
            cuts[(section, field_name, key, text)] = left
            notes.append(f"cut from the {field_name} of {key} what names {', '.join(new)} "
                         "(not in its originals)")  # fmt: skip
    if not cuts:
        return digest, notes

    def fix(section: str, field_name: str, key: str, text: str) -> str:
        return cuts.get((section, field_name, key, text), text)

    return digest.model_copy(update={
        "deliverables": [d.model_copy(update={
            "summary": fix("deliverables", "summary", d.plan_id, d.summary),
            "follow_ups": [fix("deliverables", "follow_up", d.plan_id, f) for f in d.follow_ups]})
            for d in digest.deliverables],
        "decisions": [c.model_copy(update={
            "decision": fix("decisions", "decision", c.plan_id, c.decision),
            "rationale": fix("decisions", "rationale", c.plan_id, c.rationale),
            "rejected_alternatives": [fix("decisions", "rejected", c.plan_id, r)
                                      for r in c.rejected_alternatives]})
            for c in digest.decisions],
        "files": [f.model_copy(update={"change": fix("files", "change", f.path, f.change)})
                  for f in digest.files],
        "verification": [r.model_copy(update={
            "evidence": fix("verification", "evidence", r.requirement_id, r.evidence)})
            for r in digest.verification],
        "agents": [a.model_copy(update={"work": fix("agents", "work", a.agent, a.work)})
                   for a in digest.agents],
    }), notes  # fmt: skip


def _own_change_texts(
    digest: PhaseDigest, paths: set[str], offline: PhaseDigest
) -> tuple[PhaseDigest, list[str]]:
    """Each placeholder change text replaced by what the summaries say of that path."""
    theirs = {item.path: item.change for item in offline.files}
    files = [f.model_copy(update={"change": theirs[f.path]})
             if f.path in paths and f.path in theirs else f for f in digest.files]  # fmt: skip
    notes = [f"the change of {p} was a placeholder: the summaries' own text is written"
             for p in sorted(paths) if p in theirs]  # fmt: skip
    return digest.model_copy(update={"files": files}), notes
