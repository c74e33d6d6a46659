"""Semantic phase compaction (memory-manager Section 12) that keeps every id and path and
writes nothing the originals do not support. Separable steps with stable names:

    prepare   (prepare.py, deterministic) read the plan summaries, extract ids, paths, plans,
              how each summary reports each id, and the grounding evidence
    propose   any engine fills a PhaseDigest (here: `EngineProposer`; a phase too large for
              one call is proposed plan by plan, a huge plan in parts, and merged)
    settle    (settle.py) presence + grounding review, at most one re-ask, each section from
              the newest proposal that got it right or from the offline digest, repair, and a
              final review: the only road to a file
    write     atomically, only a Settled result; originals are never touched

Nothing is ever truncated: text that does not fit one call is split, never cut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.llm.budget import Usage, pack_chunks
from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError
from legion_llm.llm.offline import OfflineCall
from legion_llm.llm.tokens import count_tokens, with_safety
from legion_llm.memory.files import atomic_write, locked, or_print, read_text
from legion_llm.memory.phases.extract import PhaseFacts, normalise
from legion_llm.memory.phases.find import Phase
from legion_llm.pipeline.compact.ground import SECTION_NAMES, Problem, ground
from legion_llm.pipeline.compact.logs import reduce_output
from legion_llm.pipeline.compact.offline import (
    PROMPT,
    TARGET_RATIO,
    CompactContext,
    PlanDoc,
    compact_offline,
)
from legion_llm.pipeline.compact.parse import parse_document
from legion_llm.pipeline.compact.prepare import (
    Prepared,
    header_for,
    offline_digest,
    precondition_problems,
    prepare,
)
from legion_llm.pipeline.compact.render import Header, PhaseDigest, merge, render
from legion_llm.pipeline.compact.settle import (
    CompactionError,
    Proposal,
    Settled,
    settle,
)
from legion_llm.pipeline.compact.split import chunk_facts, prompt_variables, split_doc
from legion_llm.pipeline.compact.verify import (
    Review,
    VerifyReport,
    originals_tokens,
    tokens_of,
    verify_document,
)

__all__ = [
    "CALL_CAP_TOKENS",
    "CompactResult",
    "CompactionError",
    "EngineProposer",
    "check_compacted",
    "compact_phase",
    "ground_text",
    "header_for",
    "offline_digest",
    "precondition_problems",
    "prepare",
    "write_compacted",
]

CALL_CAP_TOKENS = 30_000  # per call: keeps each answer inside the output limit at the 0.40 target
OUTPUT_CAP_TOKENS = 16_000
PROMPT_ROOM_TOKENS = 1_500  # the prompt file's own text, tool overhead and a re-ask's feedback


@dataclass
class Checked(VerifyReport):
    """`verify-compaction`: the presence report plus the grounding problems of what it claims."""

    grounding: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.missing_ids or self.missing_paths or self.invented() or self.grounding)

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in super().as_dict().items() if k != "grounding"}
        by_kind: dict[str, list[str]] = {}
        for problem in self.grounding:
            by_kind.setdefault(problem.kind, []).append(problem.message)
        return {**data, "ok": self.ok, "problems": [p.as_dict() for p in self.grounding],
                "grounding": by_kind}  # fmt: skip


def check_compacted(phase: Phase) -> tuple[str, Checked]:
    """Verify the phase's existing COMPACTED.md (made by us or by anyone) against its originals:
    presence as before, and the grounding rules over what the document can be read to claim."""
    text = read_text(phase.compacted_path)
    if text is None:
        raise InputError(f"{phase.compacted_path} does not exist (run `legion-llm compact`)")
    prep = prepare(phase)
    text = normalise(text)
    presence = verify_document(text, prep.facts, prep.sources,
                               tokens_original=prep.tokens_original)  # fmt: skip
    return text, Checked(**vars(presence), grounding=ground_text(text, prep))


def ground_text(text: str, prep: Prepared) -> list[Problem]:
    """The grounding problems of a written compacted file, read back (parse.py)."""
    claimed = parse_document(text)
    problems = [p for p in ground(claimed.digest, prep.facts, prep.evidence)
                if p.kind not in _NOT_GATED_BY_HAND]  # fmt: skip
    return problems + claimed.verdict_problems(prep.facts)


# a hand-made file may lay out plans, decisions and agents its own way: only what it claims
# is held to the rules, not what it leaves out or cannot be read to say
_NOT_GATED_BY_HAND = frozenset(
    {"missing-deliverable", "empty-section", "uncited-evidence", "duplicate-id", "unknown-agent",
     "unknown-path"}  # an invented path is a presence failure already
)  # fmt: skip


@dataclass
class CompactResult:
    path: Path
    text: str
    report: VerifyReport
    facts: PhaseFacts
    repaired: list[str]
    warnings: list[str]
    answers: list[dict[str, Any]]
    settled: Settled
    written: bool = False
    forced_reason: str | None = None
    chunks: int = 1

    @property
    def engine(self) -> str:
        return self.settled.engine

    @property
    def fell_back(self) -> bool:
        return self.settled.fell_back or any(a["fallback_reason"] for a in self.answers)

    def as_dict(self) -> dict[str, Any]:
        """The --json data of `compact` (the CLI adds `usage`)."""
        return {
            "path": str(self.path),
            "ratio": self.report.ratio,
            "requirement_ids": list(self.facts.requirement_ids),
            "paths": list(self.facts.paths),
            "missing_after_repair": self.report.missing_ids + self.report.missing_paths,
            "repaired": self.repaired,
            "engine": self.engine,
            "fell_back": self.fell_back,
            "written": self.written,
            "forced": self.forced_reason is not None,
            "tokens_original": self.report.tokens_original,
            "tokens_output": self.report.tokens_output,
            "chunks": self.chunks,
            **self.settled.report(),
            "answers": self.answers,
        }


def compact_phase(
    phase: Phase,
    engine: Engine,
    *,
    today: date,
    force: bool = False,
    write: bool = True,
    call_budget: int | None = None,
) -> CompactResult:
    """Compact one phase; writes `{NN}-COMPACTED.md` when `write` and settle succeeded."""
    problems = precondition_problems(phase)
    if not phase.summaries:
        raise InputError(f"phase {phase.key} ({phase.folder}) has no plan SUMMARY files")
    if problems and not force:
        raise InputError("; ".join(problems) + " (pass --force to compact anyway)",
                         data={"problems": problems})  # fmt: skip
    exists = phase.compacted_path.exists()
    if exists and write and not force:
        raise InputError(f"{phase.compacted_path} exists; pass --force to replace it")
    prep = prepare(phase)
    header = header_for(prep, today, _forced_reason(force, problems, exists))
    proposer = EngineProposer(prep, engine, header, call_budget)
    first = proposer.propose()
    header = replace(header, parts_from=proposer.provenance())
    settled = settle(prep, header, [first], ask_again=proposer.reask)
    result = CompactResult(phase.compacted_path, settled.text, settled.review.presence,
                           prep.facts, settled.repaired,
                           [*(f"warning: {p} (--force)" for p in problems), *proposer.warnings,
                            *settled.warnings, *_band_warning(settled.review)],
                           proposer.answers, settled, forced_reason=header.forced_reason,
                           chunks=len(proposer.chunks))  # fmt: skip
    if write:
        write_compacted(settled)
        result.written = True
    return result


def _band_warning(final: Review) -> list[str]:
    report = final.presence
    if report.in_band():
        return []
    return [f"warning: length ratio {report.ratio:.2f} is outside the 0.30-0.50 target"]


def _forced_reason(force: bool, problems: list[str], exists: bool) -> str | None:
    if not force:
        return None
    notes = problems + (["replaced the existing compacted summary"] if exists else [])
    return "; ".join(notes) or "--force given; every precondition held"


# ---------------------------------------------------------------- propose (through an engine)


@dataclass
class EngineProposer:
    """Proposals from one engine: the phase in one call when it fits, else plan by plan.

    What is sent is the prompt's stable context (the plans, ids with their verdicts, paths and
    the summaries with long command output cut, logs.py) and a short request after it: the
    first ask, or a re-ask naming only the problems repair cannot fix and the sections to redo,
    so the context is read from the cache. When the cost cap stops a call after others were
    paid, the remaining parts are proposed by the offline step (nothing paid is thrown away)
    and `provenance` says which plans came from where."""

    prep: Prepared
    engine: Engine
    header: Header
    call_budget: int | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    chunks: list[tuple[PlanDoc, ...]] = field(default_factory=list)
    capped: str | None = None
    _digests: list[PhaseDigest] = field(default_factory=list)
    _sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        facts = self.prep.facts
        sent = tuple(replace(d, text=reduce_output(d.text, facts.requirement_ids, facts.paths))
                     for d in self.prep.docs)  # fmt: skip
        self.chunks = _chunks(self.prep, sent, _budget(self.engine, self.call_budget))
        if len(self.chunks) > 1:
            self.warnings.append(
                f"notice: the phase is too large for one call; compacted {len(self.prep.docs)} "
                f"plan(s) in {len(self.chunks)} parts and merged"
            )

    def propose(self) -> Proposal:
        for chunk in self.chunks:
            digest, source = self._ask_or_offline(chunk)
            self._digests.append(digest)
            self._sources.append(source)
        return self._proposal()

    def reask(self, review: Review) -> Proposal | None:
        """Ask again, each part that has problems repair cannot fix, for just those sections.
        The request carries the problems twice: as feedback lines in the prompt, and as data
        (`context.problems`, each a Problem.as_dict()) for an engine that hands them to an agent."""
        asked = False
        for index, chunk in enumerate(self.chunks):
            mine = _concerning(review, chunk, single=len(self.chunks) == 1)
            needs = [p for p in mine if not p.repairable]
            if not needs or self.capped or self._sources[index] == OFFLINE_SOURCE:
                continue
            redo = _sections_to_redo(needs)
            # what repair would fix is mentioned only where the model redoes that section anyway
            told = Review(review.presence, [p for p in mine if not p.repairable
                                            or p.section in redo], review.text)  # fmt: skip
            try:
                new, source = self._ask(chunk, _feedback(told, redo), told)
            except BudgetExceededError as exc:
                self._stop(exc, "the re-ask was not made")
                break
            old = self._digests[index]
            self._digests[index] = old.model_copy(update={s: getattr(new, s) for s in redo})
            self._sources[index] = source
            asked = True
        return self._proposal() if asked else None

    def provenance(self) -> str | None:
        """Which plans came from which engine, when more than one wrote them (else None)."""
        parts: dict[str, list[str]] = {}
        for chunk, source in zip(self.chunks, self._sources, strict=True):
            why = " (--max-cost reached)" if source == OFFLINE_SOURCE and self.capped else ""
            parts.setdefault(source + why, []).extend(_labels(chunk))
        if len(parts) < 2:
            return None
        return "; ".join(
            f"{who}: {', '.join(dict.fromkeys(plans))}" for who, plans in parts.items()
        )

    def _proposal(self) -> Proposal:
        digest = self._digests[0] if len(self._digests) == 1 else merge(self._digests)
        reasons = [a["fallback_reason"] for a in self.answers if a["fallback_reason"]]
        return Proposal(digest, "+".join(dict.fromkeys(self._sources)), self.engine.model,
                        reasons[-1] if reasons else None)  # fmt: skip

    def _ask_or_offline(self, docs: tuple[PlanDoc, ...]) -> tuple[PhaseDigest, str]:
        if self.capped is None:
            try:
                return self._ask(docs, None)
            except BudgetExceededError as exc:
                if not self.answers:
                    raise  # nothing was paid for yet: the cap is too small for one call
                self._stop(exc, "the remaining parts were compacted offline")
        return self._offline(docs), OFFLINE_SOURCE

    def _stop(self, exc: BudgetExceededError, what: str) -> None:
        self.capped = self.capped or exc.message
        self.warnings.append(f"notice: {exc.message}; {what} (nothing paid was discarded)")

    def _offline(self, docs: tuple[PlanDoc, ...]) -> PhaseDigest:
        ctx, _ = self._context(docs)
        digest = compact_offline(OfflineCall(PROMPT, {}, ctx, PhaseDigest))
        self.engine.meter.record(Usage(offline_calls=1), OFFLINE_SOURCE)
        self.answers.append({"prompt": PROMPT, "prompt_sha256": None, "engine": OFFLINE_SOURCE,
                             "model": None, "fallback_reason": f"--max-cost: {self.capped}",
                             "usage": vars(Usage(offline_calls=1)), "reask": False,
                             "plans": _labels(docs)})  # fmt: skip
        return digest

    def _facts(self, docs: tuple[PlanDoc, ...]) -> PhaseFacts:
        return self.prep.facts if len(self.chunks) == 1 else chunk_facts(docs)

    def _context(
        self, docs: tuple[PlanDoc, ...], review: Review | None = None
    ) -> tuple[CompactContext, int]:
        """The offline step's context (the originals of these plans) and the sent text's size."""
        single = len(self.chunks) == 1
        facts = self._facts(docs)
        header = self.header if single else replace(self.header, plans=tuple(d.facts for d in docs))
        whole = {d.facts.id: d for d in self.prep.docs}
        originals = tuple(whole[d.facts.id] if not d.part else d for d in docs)

        def measure(digest: PhaseDigest) -> int:
            return tokens_of(render(header, digest))

        tokens = originals_tokens([d.text for d in originals])
        problems = tuple(p.as_dict() for p in review.problems) if review else ()
        ctx = CompactContext(originals, facts.requirement_ids, facts.paths, tokens, measure,
                             problems=problems)  # fmt: skip
        return ctx, originals_tokens([d.text for d in docs])

    def _ask(
        self, docs: tuple[PlanDoc, ...], feedback: str | None, review: Review | None = None
    ) -> tuple[PhaseDigest, str]:
        ctx, sent = self._context(docs, review)
        target = math.ceil(sent * TARGET_RATIO)  # on the text that matters, logs cut
        variables = prompt_variables(self.prep.phase, docs, self._facts(docs), target,
                                     self.prep.facts)  # fmt: skip
        if feedback:
            variables["feedback"] = feedback
        limit = self.engine.input_budget(OUTPUT_CAP_TOKENS)
        max_tokens = None if limit is None else min(OUTPUT_CAP_TOKENS, 4_096 + int(sent * 0.6))
        answer = self.engine.ask(PhaseDigest, PROMPT, variables, context=ctx, max_tokens=max_tokens,
                                 expected_output_tokens=expected_answer_tokens(target))  # fmt: skip
        self.answers.append({**answer.provenance(), "reask": feedback is not None,
                             "plans": _labels(docs)})  # fmt: skip
        return answer.output, answer.engine


OFFLINE_SOURCE = "offline"
JSON_OVERHEAD = 1.5  # a digest's JSON against the markdown it renders to (keys, quotes, ids)


def expected_answer_tokens(target: int) -> int:
    """What a digest of about `target` rendered tokens takes as output: the cap reserves this."""
    return math.ceil(target * JSON_OVERHEAD) + 200


def _labels(docs: tuple[PlanDoc, ...]) -> list[str]:
    return [d.facts.id + (f" ({d.part})" if d.part else "") for d in docs]


def _concerning(review: Review, docs: tuple[PlanDoc, ...], *, single: bool) -> list[Problem]:
    """The review's problems that concern these plans (all of them, for one part)."""
    if single:
        return review.problems
    facts = chunk_facts(docs)
    plans, ids, paths = {d.facts.id for d in docs}, set(facts.requirement_ids), set(facts.paths)
    agents = {d.facts.agent for d in docs if d.facts.agent}
    return [p for p in review.problems
            if p.plan in plans or p.id in ids or p.path in paths or p.agent in agents
            or not (p.plan or p.id or p.path or p.agent)]  # fmt: skip


def _sections_to_redo(problems: list[Problem]) -> list[str]:
    """The sections those problems are in; every section when the length is the problem."""
    named = {p.section for p in problems}
    if "document" in named or not named & set(SECTION_NAMES):
        return list(SECTION_NAMES)
    return [s for s in SECTION_NAMES if s in named]


def _feedback(told: Review, redo: list[str]) -> str:
    keep = [s for s in SECTION_NAMES if s not in redo]
    text = "Your previous proposal had these problems; fix all of them:\n"
    text += "\n".join(f"- {line}" for line in told.feedback_lines())
    text += f"\n\nRedo only these sections: {', '.join(redo)}."
    if keep:
        text += f" Return {', '.join(keep)} as empty lists: they are kept as they were."
    return text


def _budget(engine: Engine, explicit: int | None) -> int | None:
    if explicit is not None:
        return explicit
    limit = engine.input_budget(OUTPUT_CAP_TOKENS)
    return None if limit is None else min(limit, CALL_CAP_TOKENS)


def _chunks(
    prep: Prepared, docs: tuple[PlanDoc, ...], budget: int | None
) -> list[tuple[PlanDoc, ...]]:
    """All plans in one call when they fit, else plan by plan (long plans in parts), packed."""
    if budget is None:
        return [docs]
    listed = prompt_variables(prep.phase, docs, prep.facts, 0, prep.facts)
    lists = "\n".join(v for k, v in listed.items() if k != "summaries")
    overhead = with_safety(count_tokens(lists)) + PROMPT_ROOM_TOKENS

    def count(text: str) -> int:
        return with_safety(count_tokens(text))

    if overhead + count("\n".join(d.text for d in docs)) <= budget:
        return [docs]
    parts = [part for doc in docs for part in split_doc(doc, budget - overhead, count)]
    grouped = pack_chunks([p.text for p in parts], budget, count, overhead=overhead)
    chunks, index = [], 0
    for group in grouped:
        chunks.append(tuple(parts[index : index + len(group)]))
        index += len(group)
    return chunks


# ---------------------------------------------------------------- write


def write_compacted(settled: Settled) -> None:
    """Write a settled result atomically under the folder's lock (the only writer of a
    COMPACTED.md); an existing file is replaced only when the header records --force. A write
    that fails raises WriteFailedError holding the text (the CLI prints it, exit 3)."""
    if not settled.review.ok:
        raise CompactionError("refusing to write a compacted summary that failed its review")
    phase, text = settled.prepared.phase, settled.text
    path = phase.compacted_path
    with (
        or_print(f"could not write {path}", text, {"path": str(path)}),
        locked(phase.folder, root=phase.root),
    ):
        if path.exists() and settled.header.forced_reason is None:
            raise InputError(f"{path} exists; pass --force to replace it")
        atomic_write(path, text, root=phase.root)
