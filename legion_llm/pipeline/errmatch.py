"""Error matching: the deterministic matcher ranks; Claude adjudicates only the ambiguous band.

`match_error` returns ranked candidates, each with the path that decided it: `exact` (same
fingerprint), `fuzzy` (score at or above HIGH), `none` (below LOW), and for the band between,
`claude` or `offline` (the deterministic rule, also the fallback when Claude is unavailable).
The error store's de-duplication asks the same question through `engine_decider`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import BudgetExceededError
from legion_llm.llm.offline import OfflineCall, offline_step
from legion_llm.memory.knowledge.read import KnowledgeRecord
from legion_llm.memory.knowledge.store import Decide, candidates_of
from legion_llm.memory.signatures.match import Match, SignatureIndex, decide_offline

PROMPT = "error-root-cause"
MAX_ERROR_CHARS = (
    6000  # a pasted log is cut to its salient part by the matcher; keep the prompt small
)


class RootCauseVerdict(BaseModel):
    """Whether two error reports share a root cause (the same fix resolves both)."""

    same_root_cause: bool = Field(description="True when the same fix would resolve both errors.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure, from 0 to 1.")
    reason: str = Field(description="One sentence: what decided it.")


@offline_step(PROMPT)
def offline_verdict(call: OfflineCall) -> RootCauseVerdict:
    match: Match = call.context
    same = decide_offline(match)
    return RootCauseVerdict(
        same_root_cause=same,
        confidence=match.score,
        reason="deterministic rule for the ambiguous band (shared keys, no conflicting codes)",
    )


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


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "\n[…]"


def verdict_variables(error_text: str, match: Match) -> dict[str, str]:
    """The `error-root-cause` prompt's variables for one ambiguous match."""
    return {
        "new_error": _clip(error_text),
        "stored_error": _clip(match.candidate.signature),
        "known_fix": match.candidate.fix or "(none recorded)",
    }


def adjudicate(engine: Engine, error_text: str, match: Match) -> tuple[bool, str, str]:
    """(same root cause, decided_by, reason) for one ambiguous match."""
    variables = verdict_variables(error_text, match)
    try:
        answer = engine.ask(RootCauseVerdict, PROMPT, variables, context=match)
    except BudgetExceededError as exc:  # a close call is optional: the offline rule decides it
        engine.notices.add(f"notice: {exc.message}; the offline rule decides the close calls")
        return decide_offline(match), "offline", "cost cap reached"
    decided_by = "offline" if answer.engine == "offline" else "claude"
    return answer.output.same_root_cause, decided_by, answer.output.reason


def judge(engine: Engine | None, error_text: str, match: Match) -> JudgedMatch:
    if match.band == "match":
        return JudgedMatch(match, True, "exact" if match.exact else "fuzzy")
    if match.band == "none":
        return JudgedMatch(match, False, "none")
    if engine is None:
        return JudgedMatch(match, decide_offline(match), "offline")
    same, decided_by, reason = adjudicate(engine, error_text, match)
    return JudgedMatch(match, same, decided_by, reason)


def close_calls_to_judge(error_text: str, judged: list[JudgedMatch]) -> list[dict[str, Any]]:
    """The ambiguous matches the offline rule decided (no model was available), with the prompt
    a model would have been asked, so the calling agent can judge them itself."""
    from legion_llm.llm.prompts import load_prompt

    prompt = load_prompt(PROMPT)
    return [
        {"id": j.match.candidate.key, "score": j.match.score, "offline_verdict": j.same,
         "inputs": prompt.render(verdict_variables(error_text, j.match)).user}
        for j in judged
        if j.decided_by == "offline" and j.match.band not in ("match", "none")
    ]  # fmt: skip


def match_error(
    records: list[KnowledgeRecord], error_text: str, engine: Engine | None, limit: int = 5
) -> list[JudgedMatch]:
    """Ranked candidates with their verdicts; Resolved first among near-equal scores."""
    candidates = candidates_of(records)
    if not candidates or not error_text.strip():
        return []
    ranked = SignatureIndex(candidates).rank(error_text, limit=limit)
    return [judge(engine, error_text, match) for match in ranked]


def engine_decider(engine: Engine) -> Decide:
    """The error store's de-duplication, with the ambiguous band settled by `engine`."""

    def decide(signature: str, match: Match) -> tuple[bool, str]:
        same, decided_by, _ = adjudicate(engine, signature, match)
        return same, decided_by

    return decide
