"""Error matching: the deterministic matcher ranks; a model judges the close candidates once.

`answer_error` gives the three answers (issue 22): the calibrated confidence
(memory/signatures/confidence.py) says `fix`, `confirm` (up to three candidates) or `none`; with
a model engine, a `confirm` is settled by ONE call over the candidates shown: the one it picks
becomes the `fix`, none picked becomes `none`. Every match carries its confidence and evidence
(the deciding names shared, in conflict, and missing on either side).

The full-coverage verdicts below (`match_error`, `judge_all`) stay for the eval's ungated
numbers:

`match_error` returns ranked candidates, each with the path that decided it: `exact` (a strong
fingerprint), `fuzzy` (score at or above HIGH, offline), `none` (below the floor), `claude`
(a model's verdict) or `offline` (the deterministic rule for the ambiguous band, also the
fallback when no model answers). With a model engine, the candidates that reach the judge floor
go in ONE call that returns a verdict per candidate and the number of the matching one (or 0);
the answer is grounded: only the chosen candidate is the same root cause, a pick that was not
listed is refused (the offline rule decides), and candidates not sent keep the offline verdict.
The error store's de-duplication asks `engine_decider` only before a merge in the `fix` band
that is not exact (a model can refuse a merge, never force one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError
from legion_llm.llm.offline import OfflineCall, offline_step
from legion_llm.memory.knowledge.read import KnowledgeRecord
from legion_llm.memory.knowledge.store import Decide, candidates_of
from legion_llm.memory.redact import Redactor
from legion_llm.memory.signatures.confidence import DEPTH, Answer, Answered, answered
from legion_llm.memory.signatures.features import Features, features
from legion_llm.memory.signatures.match import (
    JUDGE_FLOOR,
    Match,
    SignatureIndex,
    decide_offline,
    needs_judge,
    offline_verdict,
)

PROMPT = "error-match"
MAX_ERROR_CHARS = 4000  # per text: the matcher already found the lines that matter
MAX_JUDGED = 4  # candidates in one call


class CandidateVerdict(BaseModel):
    """The verdict on one numbered candidate."""

    candidate: int = Field(description="The candidate's number as listed.")
    same_root_cause: bool = Field(description="True when its fix would resolve the new error.")
    reason: str = Field(description="One short sentence: what decided it.")


class MatchVerdicts(BaseModel):
    """Verdicts on the listed stored errors, and the one that matches the new error."""

    verdicts: list[CandidateVerdict] = Field(description="One verdict per listed candidate.")
    match: int = Field(description="The number of the best matching candidate, or 0 for none.")


@offline_step(PROMPT)
def offline_verdicts(call: OfflineCall) -> MatchVerdicts:
    matches: Sequence[Match] = call.context
    verdicts = [
        CandidateVerdict(candidate=n, same_root_cause=decide_offline(m), reason="offline rule")
        for n, m in enumerate(matches, start=1)
    ]
    chosen = next((v.candidate for v in verdicts if v.same_root_cause), 0)
    return MatchVerdicts(verdicts=verdicts, match=chosen)


@dataclass
class JudgedMatch:
    match: Match
    same: bool
    decided_by: str  # exact | fuzzy | claude | offline | none
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        candidate = self.match.candidate
        return {
            "id": candidate.key,
            "signature": candidate.signature,
            "fix": candidate.fix,
            "resolved": candidate.resolved,
            "score": self.match.score,
            "decided_by": self.decided_by,
        }


def _clip(text: str, redactor: Redactor) -> str:
    """At most MAX_ERROR_CHARS, redacted first: a token across the cut would lose its tail and
    no longer be found by the request's own redaction, leaving its head in the prompt."""
    text = redactor.text(text)
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "\n[…]"


def _offline(match: Match) -> JudgedMatch:
    """The deterministic verdict (the one the eval measures) and what made it."""
    return JudgedMatch(match, *offline_verdict(match))


def _listing(matches: Sequence[Match], redactor: Redactor) -> str:
    return "\n\n".join(
        f"Candidate {n}:\n```\n{_clip(m.candidate.signature, redactor)}\n```\n"
        f"Known fix: {m.candidate.fix or '(none recorded)'}"
        for n, m in enumerate(matches, start=1)
    )


def _grounded(answer: MatchVerdicts, count: int) -> dict[int, tuple[bool, str]] | None:
    """Verdicts by 0-based position for the candidates sent: only the chosen one is the same
    root cause. A pick that was not listed makes the answer unusable (None)."""
    if not 0 <= answer.match <= count:
        return None
    reasons = {v.candidate: v.reason for v in answer.verdicts}
    return {n - 1: (n == answer.match, reasons.get(n, "")) for n in range(1, count + 1)}


def judge_all(
    engine: Engine | None, error_text: str, matches: Sequence[Match]
) -> list[JudgedMatch]:
    """A verdict for every ranked candidate: one model call for those above the judge floor when
    a model engine is given and the best is not exact, the offline rule for the rest."""
    offline = [_offline(m) for m in matches]
    if engine is None or engine.name == "offline" or not needs_judge(matches):
        return offline
    judged = [m for m in matches if m.score >= JUDGE_FLOOR][:MAX_JUDGED]
    redactor = getattr(engine, "redactor", None) or Redactor()  # the one its requests use
    variables = {"new_error": _clip(error_text, redactor), "candidates": _listing(judged, redactor)}
    try:
        answer = engine.ask(MatchVerdicts, PROMPT, variables, context=judged)
    except BudgetExceededError as exc:  # a judgement is optional: the offline rule decides
        engine.notices.add(f"notice: {exc.message}; the offline rule decides the close calls")
        return offline
    if answer.engine == "offline":
        return offline
    verdicts = _grounded(answer.output, len(judged))
    if verdicts is None:
        engine.notices.add(
            "notice: the model picked a candidate it was not shown; the offline rule decides"
        )
        return offline
    return [
        JudgedMatch(m, verdicts[i][0], "claude", verdicts[i][1]) if i in verdicts else offline[i]
        for i, m in enumerate(matches)
    ]


def judge_verdicts(engine: Engine | None, error_text: str, matches: Sequence[Match]) -> list[bool]:
    """Same root cause? for each ranked candidate (the eval's judge)."""
    return [j.same for j in judge_all(engine, error_text, matches)]


def evidence(match: Match) -> dict[str, list[str]]:
    """The deciding names behind a match: shared, in conflict, missing on either side."""
    return {
        "shared": sorted({*match.agreed, *match.shared_keys}),
        "conflicting": list(match.conflicts),
        "missing_in_query": list(match.missing_here),
        "missing_in_stored": list(match.missing_there),
    }


@dataclass
class ErrorAnswer:
    """`errors match`'s answer: fix, confirm or none, and the ranked candidates behind it."""

    answer: Answer
    matches: list[Match]  # ranked by confidence, best first
    confidence: list[float]
    shown: int  # fix: 1, confirm: up to MAX_CONFIRM, none: 0
    decided_by: str  # confidence | exact | claude
    reason: str = ""

    def match_dict(self, position: int) -> dict[str, Any]:
        match = self.matches[position]
        candidate = match.candidate
        return {
            "id": candidate.key,
            "signature": candidate.signature,
            "fix": candidate.fix,
            "resolved": candidate.resolved,
            "score": match.score,
            "confidence": self.confidence[position],
            "shown": position < self.shown,
            "evidence": evidence(match),
        }


def answer_error(
    records: list[KnowledgeRecord], error_text: str, engine: Engine | None, limit: int = 5
) -> ErrorAnswer:
    """The answer for a new error against the stored ones (at most `limit` matches kept)."""
    candidates = candidates_of(records)
    if not candidates or not error_text.strip():
        return ErrorAnswer("none", [], [], 0, "confidence")
    ranked = SignatureIndex(candidates).rank(error_text, limit=max(limit, DEPTH))
    result = _settled(engine, error_text, answered(features(error_text), ranked))
    result.matches, result.confidence = result.matches[:limit], result.confidence[:limit]
    result.shown = min(result.shown, limit)
    return result


def _judge_confirm(engine: Engine, error_text: str, found: ErrorAnswer) -> ErrorAnswer:
    """ONE model call over the candidates a `confirm` shows: its pick is the `fix`, no pick is
    `none`; an answer that cannot be used (budget, a pick not shown) leaves the `confirm`."""
    shown = found.matches[: found.shown]
    redactor = getattr(engine, "redactor", None) or Redactor()
    variables = {"new_error": _clip(error_text, redactor), "candidates": _listing(shown, redactor)}
    try:
        answer = engine.ask(MatchVerdicts, PROMPT, variables, context=shown)
    except BudgetExceededError as exc:
        engine.notices.add(f"notice: {exc.message}; the candidates are left to confirm")
        return found
    if answer.engine == "offline" or not 0 <= answer.output.match <= len(shown):
        return found
    pick = answer.output.match
    reasons = {v.candidate: v.reason for v in answer.output.verdicts}
    if pick == 0:
        return ErrorAnswer("none", found.matches, found.confidence, 0, "claude", reasons.get(1, ""))
    order = [pick - 1, *(i for i in range(len(found.matches)) if i != pick - 1)]
    return ErrorAnswer(
        "fix",
        [found.matches[i] for i in order],
        [found.confidence[i] for i in order],
        1,
        "claude",
        reasons.get(pick, ""),
    )


def judged_answer(
    engine: Engine | None, error_text: str, query: Features, ranked: Sequence[Match]
) -> Answered:
    """The eval's answerer (evals/errors.py `Answerer`): the confidence's answer, and with a
    model engine a `confirm` settled by one call, exactly as `answer_error` does."""
    settled = _settled(engine, error_text, answered(query, ranked))
    return Answered(settled.answer, settled.matches, settled.confidence, settled.shown)


def _settled(engine: Engine | None, error_text: str, found: Answered) -> ErrorAnswer:
    """The confidence's answer, with a `confirm` settled by one call when a model engine is
    there (answer_error and the eval's answerer both end here)."""
    decided_by = "exact" if found.answer == "fix" and found.matches[0].exact else "confidence"
    result = ErrorAnswer(found.answer, found.matches, found.confidence, found.shown, decided_by)
    if found.answer == "confirm" and engine is not None and engine.name != "offline":
        result = _judge_confirm(engine, error_text, result)
    return result


def confirm_to_judge(
    error_text: str, found: ErrorAnswer, redactor: Redactor
) -> dict[str, Any] | None:
    """When a `confirm` was left to confirm (no model judged it), the one call a model would
    have been asked, so that the calling agent can judge the candidates itself (host engine):
    the candidates with their confidence, and the rendered prompt's user text, redacted as every
    prompt is (the agent is a model too)."""
    from legion_llm.llm.prompts import load_prompt

    if found.answer != "confirm" or found.decided_by == "claude":
        return None
    shown = found.matches[: found.shown]
    variables = {
        "new_error": _clip(error_text, redactor),
        "candidates": _listing(shown, redactor),
    }
    return {
        "candidates": [
            {
                "number": n,
                "id": m.candidate.key,
                "score": m.score,
                "confidence": found.confidence[n - 1],
            }
            for n, m in enumerate(shown, start=1)
        ],
        "inputs": redactor.text(load_prompt(PROMPT).render(variables).user),
    }


def match_error(
    records: list[KnowledgeRecord], error_text: str, engine: Engine | None, limit: int = 5
) -> list[JudgedMatch]:
    """Ranked candidates with their verdicts; Resolved first among near-equal scores."""
    candidates = candidates_of(records)
    if not candidates or not error_text.strip():
        return []
    ranked = SignatureIndex(candidates).rank(error_text, limit=limit)
    return judge_all(engine, error_text, ranked)


def engine_decider(engine: Engine) -> Decide:
    """The error store's de-duplication, with the close candidates judged by `engine`."""

    def decide(signature: str, matches: Sequence[Match]) -> tuple[int | None, str]:
        judged = judge_all(engine, signature, matches)
        found = next((i for i, j in enumerate(judged) if j.same), None)
        return found, judged[found].decided_by if found is not None else "none"

    return decide
