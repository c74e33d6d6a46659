"""The three answers of the error eval (issue 22): what an answerer is, and the scores of its
answers over one split's fix queries and hard negatives (`errors.py` asks the queries)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from legion_llm.evals.error_data import ErrorMessage
from legion_llm.evals.error_scores import reliability, share
from legion_llm.memory.signatures.confidence import MAX_CONFIRM, Answered, answered
from legion_llm.memory.signatures.features import Features
from legion_llm.memory.signatures.match import Match

# (query text, its features, ranked candidates) -> the answer: fix, confirm or none
Answerer = Callable[[str, Features, Sequence[Match]], Answered]


@dataclass
class Query:
    """One query of the error eval: a message asked against the stored entries, and what came
    back (`errors.py` asks, `answer_scores` scores)."""

    message: ErrorMessage
    position: int | None = None  # 1-based rank of the own group (fix@5, fix@1 ranked)
    accepted: bool = False  # the first judged-same candidate is the own group
    false_fix: bool = False  # a hard negative that got another group's fix
    calls_model: bool = False
    ambiguous: bool = False  # the best candidate sits in the ambiguous band
    expected: str | None = None  # the key of the right stored entry (None: a hard negative)
    ranked: list[Match] = field(default_factory=list)
    answer: Answered | None = None


def offline_answerer(text: str, query: Features, ranked: Sequence[Match]) -> Answered:
    return answered(query, ranked)


@dataclass
class AnswerScores:
    """The three answers (fix, confirm, none) measured on one split (scores in error_scores.py).

    `fix_precision`: of the `fix` answers to queries whose cause is stored, the share whose fix
    is the right one (`fix_precision_all` counts hard negatives' `fix` answers too: it depends on
    how many of each a split holds); `hard_negative_fix`: hard negatives answered `fix`;
    `fix_coverage`: fix queries (their cause is stored) answered `fix` with the right fix;
    `confirm_recall`: fix
    queries whose right fix is the `fix` answer or among the `confirm` candidates shown;
    `retrieval_recall`: fix queries whose right entry is among the MAX_CONFIRM most confident
    candidates (what a judge is sent); `reliability`: per confidence bin, the candidates' count,
    mean confidence and share right."""

    fix_precision: float = 0.0
    fix_precision_all: float = 0.0  # the same over hard negatives' `fix` answers too
    fix_answers: int = 0
    hard_negative_fix: float = 0.0
    fix_coverage: float = 0.0
    confirm_recall: float = 0.0
    retrieval_recall: float = 0.0
    confirm_share: float = 0.0  # of all queries, answered `confirm`
    hard_negative_none: float = 0.0  # hard negatives answered `none`
    reliability: list[dict[str, float]] = field(default_factory=list)


def answer_scores(fix: Sequence[Query], hard: Sequence[Query]) -> AnswerScores:
    """The three answers' scores over fix queries and hard negatives (see AnswerScores)."""
    fixed_all = [q for q in [*fix, *hard] if q.answer is not None and q.answer.answer == "fix"]
    fixed = [q for q in fixed_all if q.expected is not None]
    right = [q for q in fixed if q.expected == _keys(q, 1)[0]]
    shown = [q.expected in _keys(q, q.answer.shown if q.answer else 0) for q in fix]
    answered_ = [q.answer for q in [*fix, *hard] if q.answer is not None]
    pairs = [
        (value, match.candidate.key == q.expected)
        for q in [*fix, *hard]
        if q.answer is not None
        for value, match in zip(q.answer.confidence, q.answer.matches, strict=True)
    ]
    return AnswerScores(
        fix_precision=len(right) / len(fixed) if fixed else 1.0,
        fix_precision_all=len(right) / len(fixed_all) if fixed_all else 1.0,
        fix_answers=len(fixed),
        hard_negative_fix=share([q in fixed_all for q in hard]),
        fix_coverage=share([q in right for q in fix]),
        confirm_recall=share(shown),
        retrieval_recall=share([q.expected in _keys(q, MAX_CONFIRM) for q in fix]),
        confirm_share=share([a.answer == "confirm" for a in answered_]),
        hard_negative_none=share(
            [q.answer is not None and q.answer.answer == "none" for q in hard]
        ),
        reliability=reliability(pairs),
    )


def _keys(query: Query, count: int) -> list[str | None]:
    """The keys of the first `count` candidates of a query's answer (None when it has fewer)."""
    matches = query.answer.matches if query.answer else []
    keys: list[str | None] = [m.candidate.key for m in matches[:count]]
    return keys + [None] * (max(count, 1) - len(keys))
