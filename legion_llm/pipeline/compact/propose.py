"""propose: a PhaseDigest from an engine, for settle to review (compaction's one paid step).

The phase goes in one call when it fits, else plan by plan (a huge plan in parts), and the parts
are merged. What is sent is the prompt's stable context (the plans, each id with its verdict, the
target and the summaries with long command output cut, logs.py) and a short request after it:
the first ask, or a re-ask naming only the problems repair cannot fix and the sections to redo,
so the context is read from the cache. When the cost cap stops a call after others were paid
for, the remaining parts are proposed by the offline step (nothing paid is thrown away) and
`provenance` says which plans came from where.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from legion_llm.llm.budget import Usage, pack_chunks
from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError, TokenBudgetError
from legion_llm.llm.offline import OfflineCall
from legion_llm.memory.phases.extract import PhaseFacts
from legion_llm.memory.phases.statements import PlanDoc
from legion_llm.pipeline.compact.ground import SECTION_NAMES, Problem
from legion_llm.pipeline.compact.logs import reduce_output
from legion_llm.pipeline.compact.offline import (
    PROMPT,
    TARGET_RATIO,
    CompactContext,
    compact_offline,
)
from legion_llm.pipeline.compact.prepare import Prepared
from legion_llm.pipeline.compact.render import Header, PhaseDigest, merge, render
from legion_llm.pipeline.compact.settle import Proposal
from legion_llm.pipeline.compact.split import (
    SPLIT_HEADER_TOKENS,
    chunk_facts,
    prompt_variables,
    split_doc,
)
from legion_llm.pipeline.compact.verify import Review, originals_tokens, tokens_of

CALL_CAP_TOKENS = 30_000  # per call: keeps each answer inside the output limit at the 0.40 target
OUTPUT_CAP_TOKENS = 16_000
FEEDBACK_ROOM_TOKENS = 600  # a re-ask's feedback in place of the first ask (the rest is measured)
TARGET_DIGITS = 99_999  # the target length as the widest number it is written with


@dataclass
class EngineProposer:
    """Proposals from one engine (see the module note)."""

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
        self.chunks = _chunks(self.prep, sent, _budget(self.engine, self.call_budget), self.engine)
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
            except TokenBudgetError as exc:  # its feedback made it too large: the text falls back
                self.warnings.append(f"notice: the re-ask of {', '.join(_labels(chunk))} was "
                                     f"not made ({exc.message})")  # fmt: skip
                continue
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
        return self.prep.facts if len(self.chunks) == 1 else chunk_facts(docs, self.prep.facts)

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
    prep: Prepared, docs: tuple[PlanDoc, ...], budget: int | None, engine: Engine
) -> list[tuple[PlanDoc, ...]]:
    """All plans in one call when they fit, else plan by plan (long plans in parts), packed.
    Sizes are the engine's own estimates (the request it would build, less the summaries, plus
    room for a re-ask's feedback; each text as it counts it), so every part passes its check."""
    if budget is None:
        return [docs]
    listed = prompt_variables(prep.phase, docs, prep.facts, TARGET_DIGITS, prep.facts)
    bare = engine.measure(PhaseDigest, PROMPT, {**listed, "summaries": ""})
    overhead = bare + FEEDBACK_ROOM_TOKENS
    count = engine.estimate_tokens
    if overhead + count("\n".join(d.text for d in docs)) <= budget:
        return [docs]
    if budget - overhead <= SPLIT_HEADER_TOKENS:
        raise TokenBudgetError(
            f"the compaction prompt alone is about {overhead} tokens with a re-ask's room; an "
            f"input budget of {budget} leaves no room for any summary (raise max_input_tokens)",
            data={"estimated_tokens": overhead, "budget_tokens": budget},
        )
    parts = [part for doc in docs for part in split_doc(doc, budget - overhead, count)]
    grouped = pack_chunks([p.text for p in parts], budget, count, overhead=overhead)
    chunks, index = [], 0
    for group in grouped:
        chunks.append(tuple(parts[index : index + len(group)]))
        index += len(group)
    return chunks
