"""settle: the only road from a proposed digest to a file that may be written.

    settle(prepared, header, [proposal, ...], ask_again=...) -> Settled

A `Proposal` is a PhaseDigest from any source: an engine's answer, a host agent's JSON, a batch
result collected later. settle

1. reviews the latest proposal: presence (verify.py) and grounding (ground.py), each problem
   marked repairable or needing the model;
2. decides, from that review alone (`should_reask`: only for problems repair cannot fix),
   whether to ask once more; `ask_again` gets the review (its `problems` say exactly what to
   redo) and returns a new proposal or None;
3. takes each section (deliverables, decisions, files, verification, checks, agents) from the
   newest proposal in which nothing needs the model, else from the offline engine's digest;
4. repairs what is repairable (repair.py) and reviews the result again;
5. degrades, never refuses: an item still wrong takes the offline engine's item, and one the
   offline engine cannot ground either takes its minimal honest form (the plan's first words,
   `named in 03-01`, NOT VERIFIED ...: `minimal_proposal`), each with a warning. A phase the
   parser accepts always gets a file; only a bug can make this step fail (CompactionError,
   exit 70);
6. renders the file and redacts it (secrets the originals held become markers).

`Settled` says which section came from where and why (`sections`: source, rung, because),
what was repaired, and whether any text is the offline engine's (`fell_back`); `engine` never
names a model for offline text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from legion_llm.errors import EXIT_INTERNAL, LegionError
from legion_llm.llm.tokens import count_tokens
from legion_llm.memory.redact import project_redactor, redacted_data, text_hits, write_warning
from legion_llm.pipeline.compact.ground import SECTION_NAMES, Problem, entity_problems, ground
from legion_llm.pipeline.compact.offline import MAX_RATIO, TARGET_RATIO
from legion_llm.pipeline.compact.prepare import Prepared, minimal_proposal, offline_proposal
from legion_llm.pipeline.compact.render import (
    PER_PLAN,
    TERSE,
    Header,
    PhaseDigest,
    fit_lengths,
    render,
)
from legion_llm.pipeline.compact.repair import cut_entities, repair, strike
from legion_llm.pipeline.compact.verify import (
    Review,
    presence_problems,
    tokens_of,
    verify_document,
)

OFFLINE = "offline"
# a phase shorter than this compacts to little more than its headings and one row per id and
# path: its length is reported (the band warning), never a reason to pay for a re-ask
LENGTH_MIN_TOKENS = 1_500
# a proposal over REASK_RATIO of its originals (10% past the 0.50 target) is asked once to be
# shorter; one still over BLOAT_RATIO after repair has its most bloated sections replaced
REASK_RATIO = MAX_RATIO * 1.1
BLOAT_RATIO = 0.6
# a document over its length has its own texts cut at sentence boundaries to these shares of
# each field's limit (form, repaired for free) before any section takes offline text
SHRINK_SCALES = (0.6, 0.35, 0.2)


class CompactionError(LegionError):
    """The ladder's last rung failed its own review: a bug in legion-llm, never the input's."""

    exit_code = EXIT_INTERNAL


@dataclass(frozen=True)
class Proposal:
    """A digest and who proposed it ("anthropic", "offline", "host", "batch", ...)."""

    digest: PhaseDigest
    source: str
    model: str | None = None
    fallback_reason: str | None = None


AskAgain = Callable[[Review], "Proposal | None"]


def review(prep: Prepared, header: Header, digest: PhaseDigest) -> Review:
    """Presence and grounding of one digest, as rendered for this phase."""
    text = render(header, digest)
    presence = verify_document(text, prep.facts, prep.sources,
                               tokens_original=prep.tokens_original, strict=True)  # fmt: skip
    # what the text claims once repair has struck what the originals never name (free): an
    # invented path's sentence is no grounding problem of its own
    invented_ids, invented_paths = presence.invented_ids, presence.invented_paths
    claims = strike(digest, invented_ids, invented_paths, prep.evidence) if (
        invented_ids or invented_paths) else digest  # fmt: skip
    # and once repair has cut the clauses that bring an entity the originals do not state
    # (free, reported as new-entity): the rest is what the text claims
    claims, _ = cut_entities(claims, prep.facts, prep.evidence)
    problems = presence_problems(presence) + ground(claims, prep.facts, prep.evidence)
    problems += [p for p in entity_problems(digest, prep.facts, prep.evidence)
                 if p not in problems]  # fmt: skip
    if presence.ratio > REASK_RATIO and prep.tokens_original >= LENGTH_MIN_TOKENS:
        target = int(prep.tokens_original * TARGET_RATIO)
        problems.append(Problem("too-long", "document",
                                f"the document was about {presence.tokens_output} tokens, "
                                f"{presence.ratio:.2f} of the originals; keep it under {target} "
                                "tokens"))  # fmt: skip
    return Review(presence, problems, text)


def should_reask(first: Review) -> bool:
    """The re-ask decision, a function of the first review alone: only for what repair cannot
    fix (ungrounded verdicts or text, placeholders, empty sections, wrong or unknown plans).
    Missing ids and paths, invented ones, texts over their length and a document over the
    target (its texts are cut at sentence boundaries: _within_length) are form, repaired
    deterministically; paying for a re-ask would buy nothing repair does not already give."""
    return any(p.kind != "too-long" for p in first.needs_model)


@dataclass
class Settled:
    prepared: Prepared
    header: Header
    digest: PhaseDigest
    text: str
    review: Review  # of the settled digest: ok, or settle would have raised
    reviews: list[Review]  # of each proposal, in order
    proposals: list[Proposal]
    sections: dict[str, dict[str, Any]]
    repaired: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def engine(self) -> str:
        """Who wrote the text: one name, or several joined by `+` (never a model for offline
        text; a section a proposal left empty is not its text)."""
        written = [s["source"] for s in self.sections.values() if s["items"]]
        names = written or [s["source"] for s in self.sections.values()]
        return "+".join(dict.fromkeys(n for name in names for n in name.split("+")))

    @property
    def fell_back(self) -> bool:
        if any(p.fallback_reason for p in self.proposals):
            return True
        proposed = self.proposals[0].source
        return proposed != OFFLINE and any(s["fallback"] for s in self.sections.values())

    def report(self) -> dict[str, Any]:
        """Which section came from where, and what each proposal got wrong (a proposal's text
        quoted in a problem is redacted like the file: a report never repeats a secret)."""
        report: dict[str, Any] = redacted_data({
            "sections": self.sections,
            "proposals": [
                {"source": p.source, "model": p.model, **r.as_dict()}
                for p, r in zip(self.proposals, self.reviews, strict=True)
            ],
        })  # fmt: skip
        return report


def settle(
    prep: Prepared,
    header: Header,
    proposals: Sequence[Proposal],
    *,
    ask_again: AskAgain | None = None,
) -> Settled:
    """Review, re-ask at most once, choose sections, fall back, repair, review again."""
    if not proposals:
        raise ValueError("settle needs at least one proposal")
    candidates = list(proposals)
    reviews = [review(prep, header, p.digest) for p in candidates]
    last = candidates[-1]
    if len(candidates) == 1 and ask_again and last.source != OFFLINE and should_reask(reviews[0]):
        again = ask_again(reviews[0])
        if again is not None:
            candidates.append(again)
            reviews.append(review(prep, header, again.digest))
    offline = _Offline(prep, header, candidates, reviews)
    digest, sections = _choose(candidates, reviews, offline)
    chosen = reviews[-1] if digest == candidates[-1].digest else review(prep, header, digest)
    digest, repaired = repair(digest, chosen.repairable, prep.facts, lambda: offline.digest,
                              prep.evidence)  # fmt: skip
    _credit_repairs(sections, candidates, digest, offline, chosen.repairable)
    final = chosen if not repaired else review(prep, header, digest)
    shorter = _within_length(prep, header, digest, sections, offline, final.text)
    final = final if shorter == digest else review(prep, header, shorter)
    digest = shorter
    digest, final, degraded = _degrade(prep, header, digest, final, offline, sections)
    header, digest, final, shortened = _never_longer(prep, header, digest, final, sections)
    degraded += shortened
    warnings = [f"warning: repaired: {note}" for note in repaired]
    warnings += [] if candidates[0].source == OFFLINE else _fallback_warnings(sections)
    warnings += [f"warning: {note}" for note in degraded]
    text, redaction = _redacted(prep, final.text or render(header, digest))
    return Settled(prep, header, digest, text, final, reviews, candidates, sections,
                   redacted_data(repaired), redacted_data(warnings) + redaction)  # fmt: skip


# ---------------------------------------------------------------- the ladder


def _degrade(
    prep: Prepared,
    header: Header,
    digest: PhaseDigest,
    final: Review,
    offline: _Offline,
    sections: dict[str, dict[str, Any]],
) -> tuple[PhaseDigest, Review, list[str]]:
    """Replace each item that still fails: with the offline engine's item, then with its minimal
    honest form; last, the whole minimal digest. Returns the digest, its review, and notes."""
    notes: list[str] = []
    rungs: tuple[tuple[str, Callable[[], PhaseDigest]], ...] = (
        ("offline", lambda: offline.digest),
        ("minimal", lambda: minimal_proposal(prep, header)),
    )
    for rung, make in rungs:
        failing = _failing_keys(final)
        if not failing:
            return digest, final, notes
        digest, replaced = _replace(digest, failing, make())
        _mark(sections, replaced, rung, final)
        notes += [f"{section} of {key}: the {rung} text is written ({why})"
                  for section, key, why in _described(replaced, final)]  # fmt: skip
        final = review(prep, header, digest)
    if _failing_keys(final):
        digest = minimal_proposal(prep, header)
        final = review(prep, header, digest)
        _mark(sections, {(name, "*") for name in SECTION_NAMES}, "minimal", final)
        notes.append("every section is written in its minimal form")
    if _failing_keys(final):
        raise CompactionError(
            "internal error: the minimal compacted summary fails its own review (a bug in "
            "legion-llm; please report it): " + "; ".join(final.feedback_lines(limit=5)),
            data={"verify": final.presence.as_dict(), **final.as_dict()},
        )
    return digest, final, notes


def _never_longer(
    prep: Prepared,
    header: Header,
    digest: PhaseDigest,
    final: Review,
    sections: dict[str, dict[str, Any]],
) -> tuple[Header, PhaseDigest, Review, list[str]]:
    """A compacted file is never longer than its originals: on a phase so small that the usual
    layout outgrows it, the terse layout, then one short section per plan (render.PER_PLAN),
    each with the digest as it is, then with its texts cut at sentences, then with the minimal
    digest (no check lines, bare NOT VERIFIED lines): the first that fits, else the shortest."""
    if final.presence.tokens_output <= prep.tokens_original:
        return header, digest, final, []
    bare = _bare(minimal_proposal(prep, header))
    shrunk = _bare(fit_lengths(digest, SHRINK_SCALES[-1])[0])  # its own texts, cut at sentences
    tried = []
    for layout, candidate in ((TERSE, digest), (PER_PLAN, digest), (TERSE, shrunk),
                              (PER_PLAN, shrunk), (TERSE, bare), (PER_PLAN, bare)):  # fmt: skip
        shaped = replace(header, layout=layout)
        checked = review(prep, shaped, candidate)
        if checked.ok:
            tried.append((shaped, candidate, checked))
            if checked.presence.tokens_output <= prep.tokens_original:
                break
    if not tried:
        return header, digest, final, []
    shaped, chosen, checked = min(tried, key=lambda t: t[2].presence.tokens_output)
    note = f"the phase is small: the {shaped.layout} layout is written"
    if chosen is bare:
        _mark(sections, {(name, "*") for name in SECTION_NAMES}, "minimal", checked)
        for entry in sections.values():
            entry["because"] = ["longer than the originals"]
        note += " with its minimal text"
    return shaped, chosen, checked, [note]


def _bare(digest: PhaseDigest) -> PhaseDigest:
    """The digest with bare NOT VERIFIED lines (their evidence says nothing a verdict needs)."""
    return digest.model_copy(update={"verification": [
        r.model_copy(update={"evidence": ""}) if r.verdict == "not verified" else r
        for r in digest.verification]})  # fmt: skip


Key = tuple[str, str]  # (section, plan / path / id / agent; "*" for the whole section)
_KEY_FIELD = {"deliverables": "plan_id", "decisions": "plan_id", "checks": "plan_id",
              "files": "path", "verification": "requirement_id", "agents": "agent"}  # fmt: skip


def _failing_keys(final: Review) -> set[Key]:
    """The items the final review still refuses (the length is reported, never refused)."""
    keys: set[Key] = set()
    for problem in final.problems:
        if problem.kind == "too-long":
            continue
        section = problem.section if problem.section in _KEY_FIELD else _section_of(problem)
        key = problem.plan or problem.path or problem.id or problem.agent or "*"
        keys.add((section, key))
    return keys


def _section_of(problem: Problem) -> str:
    """A document-level problem's section: where its id or path is written."""
    return "verification" if problem.id else "files"


def _replace(
    digest: PhaseDigest, keys: set[Key], source: PhaseDigest
) -> tuple[PhaseDigest, set[Key]]:
    """The digest with the items of `keys` taken from `source` (a whole section for `*`)."""
    update: dict[str, Any] = {}
    replaced: set[Key] = set()
    for name, field_name in _KEY_FIELD.items():
        wanted = {key for section, key in keys if section == name}
        if not wanted:
            continue
        mine = getattr(digest, name)
        theirs = getattr(source, name)
        if "*" in wanted:
            update[name] = list(theirs)
        else:
            kept = [i for i in mine if getattr(i, field_name).strip() not in wanted]
            added = [i for i in theirs if getattr(i, field_name).strip() in wanted]
            update[name] = _in_order(kept + added, theirs, field_name)
        replaced |= {(name, key) for key in wanted}
    return digest.model_copy(update=update), replaced


def _in_order(items: list[Any], order_of: list[Any], field_name: str) -> list[Any]:
    order = {getattr(i, field_name): n for n, i in enumerate(order_of)}
    return sorted(items, key=lambda i: order.get(getattr(i, field_name), len(order)))


def _mark(
    sections: dict[str, dict[str, Any]], replaced: set[Key], rung: str, final: Review
) -> None:
    for name in {section for section, _ in replaced}:
        entry = sections[name]
        keys = sorted(key for section, key in replaced if section == name)
        kinds = sorted({p.kind for p in final.problems if p.section == name} or {"review"})
        names = entry["source"].split("+")
        source = OFFLINE if rung == "offline" or "*" in keys else "minimal"
        entry.update({"source": "+".join(dict.fromkeys([*names, source])) if "*" not in keys
                      else source, "fallback": True, "rung": rung,
                      "because": sorted({*entry.get("because", []), *kinds}),
                      "replaced": keys})  # fmt: skip


def _described(replaced: set[Key], final: Review) -> list[tuple[str, str, str]]:
    out = []
    for section, key in sorted(replaced):
        kinds = sorted({p.kind for p in final.problems
                        if (p.section == section or section in ("files", "verification"))
                        and key in (p.plan, p.path, p.id, p.agent, "*")})  # fmt: skip
        out.append((section, key, ", ".join(kinds) or "review"))
    return out


def _redacted(prep: Prepared, text: str) -> tuple[str, list[str]]:
    """The text to write (and show): secrets the originals held replaced by markers."""
    redactor = project_redactor(prep.phase.root)
    done = redactor.redact(text)
    name = prep.phase.compacted_path.name
    return done.text, write_warning(redactor, text_hits(text, done.findings), name)


class _Offline:
    """The offline engine's digest, made only when a section or a repair needs it."""

    def __init__(
        self, prep: Prepared, header: Header, candidates: list[Proposal], reviews: list[Review]
    ) -> None:
        self.prep, self.header = prep, header
        own = [c.digest for c, r in zip(candidates, reviews, strict=True)
               if c.source == OFFLINE and not r.needs_model]  # fmt: skip
        self._digest: PhaseDigest | None = own[0] if own else None  # the engine's, reused

    @property
    def digest(self) -> PhaseDigest:
        if self._digest is None:
            self._digest = offline_proposal(self.prep, self.header)
        return self._digest


def _choose(
    candidates: list[Proposal], reviews: list[Review], offline: _Offline
) -> tuple[PhaseDigest, dict[str, dict[str, Any]]]:
    """Each section from the newest proposal that got it right, else from the offline digest."""
    chosen: dict[str, Any] = {}
    sections: dict[str, dict[str, Any]] = {}
    for name in SECTION_NAMES:
        for index in range(len(candidates) - 1, -1, -1):
            if name not in reviews[index].failing_sections():
                chosen[name] = getattr(candidates[index].digest, name)
                sections[name] = {"source": candidates[index].source, "proposal": index,
                                  "fallback": False, "items": len(chosen[name])}  # fmt: skip
                break
        else:
            chosen[name] = getattr(offline.digest, name)
            why = sorted({p.kind for r in reviews for p in r.needs_model if p.section == name})
            sections[name] = {"source": OFFLINE, "proposal": None, "fallback": True,
                              "because": why, "items": len(chosen[name])}  # fmt: skip
    return PhaseDigest(**chosen), sections


def _within_length(
    prep: Prepared,
    header: Header,
    digest: PhaseDigest,
    sections: dict[str, dict[str, Any]],
    offline: _Offline,
    rendered: str | None = None,
) -> PhaseDigest:
    """A document bloated past the length (asked once already, on a phase worth a re-ask) takes
    the offline engine's text for its most bloated sections until it fits: a model's answer
    many times the originals is not a compaction to write as its work. The limit is
    BLOAT_RATIO of the originals (above the 0.50 target, so a complete answer that repair made
    a little longer is kept, with the band warning), or on a small phase the originals."""
    if all(s["source"] == OFFLINE for s in sections.values()):
        return digest  # the offline engine's length is its own (every path has its row)
    small = prep.tokens_original < LENGTH_MIN_TOKENS
    limit = prep.tokens_original if small else prep.tokens_original * BLOAT_RATIO

    def fits(candidate: PhaseDigest, text: str | None = None) -> bool:
        """Within the limit in the usual layout, or (a small phase) in a shorter one
        (_never_longer writes the one that fits)."""
        if tokens_of(text or render(header, candidate)) <= limit:
            return True
        return small and any(tokens_of(render(replace(header, layout=layout), _bare(candidate)))
                             <= limit for layout in (TERSE, PER_PLAN))  # fmt: skip

    if fits(digest, rendered):
        return digest
    for scale in SHRINK_SCALES:  # form first: the proposal's own texts, cut at sentences
        shorter, cut = fit_lengths(digest, scale)
        if cut and fits(shorter):
            for name in SECTION_NAMES:
                if sections[name]["source"] != OFFLINE:
                    sections[name].setdefault("repaired", []).append(f"cut to {scale:g}x")
            return shorter
    sizes = {name: (_size(digest, name), _size(offline.digest, name)) for name in SECTION_NAMES}
    bloated_first = sorted(SECTION_NAMES, key=lambda n: sizes[n][1] - sizes[n][0])
    for name in bloated_first:
        if tokens_of(render(header, digest)) <= limit:
            break
        if sections[name]["source"] == OFFLINE or sizes[name][0] <= sizes[name][1]:
            continue
        digest = digest.model_copy(update={name: getattr(offline.digest, name)})
        sections[name] = {"source": OFFLINE, "proposal": None, "fallback": True,
                          "because": ["too-long"], "items": len(getattr(digest, name))}  # fmt: skip
    return digest


def _credit_repairs(
    sections: dict[str, dict[str, Any]],
    candidates: list[Proposal],
    digest: PhaseDigest,
    offline: _Offline,
    repairable: Sequence[Problem],
) -> None:
    """A proposal's section that repair replaced whole (every item it proposed dropped, every
    item written the offline engine's) is the offline engine's text, not the proposer's; one
    that repair emptied holds none of its text (`items` counts what is written)."""
    for name, section in sections.items():
        if section["source"] == OFFLINE:
            continue
        written = getattr(digest, name)
        section["items"] = len(written)
        if not written:
            continue
        proposed = getattr(candidates[section["proposal"]].digest, name)
        if any(item in proposed for item in written):
            continue
        if all(item in getattr(offline.digest, name) for item in written):
            why = sorted({p.kind for p in repairable if p.section == name})
            sections[name] = {"source": OFFLINE, "proposal": None, "fallback": True,
                              "because": why or ["repaired"], "items": len(written)}  # fmt: skip


def _size(digest: PhaseDigest, section: str) -> int:
    return count_tokens(json.dumps([item.model_dump() for item in getattr(digest, section)]))


def _fallback_warnings(sections: dict[str, dict[str, Any]]) -> list[str]:
    replaced = [name for name, s in sections.items() if s["fallback"]]
    if not replaced:
        return []
    reasons = sorted({k for name in replaced for k in sections[name].get("because", [])})
    return [f"warning: the proposal's {', '.join(replaced)} did not hold up ({', '.join(reasons)}); "
            "the offline engine's text is used there"]  # fmt: skip
