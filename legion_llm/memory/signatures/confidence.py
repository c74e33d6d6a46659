"""A calibrated confidence for each ranked candidate, and the three answers: fix, confirm, none.

The raw score is not a probability: look-alikes tie at any score, up to 1.0. The confidence is a
logistic model over what the scorer knows of one candidate among its rivals (`feature_values`:
the score, its margin over the best rival, how many rivals tie with it, the discriminating names
shared, in conflict or missing on either side, the kind of the query's salient line...). Its
coefficients are data (data/confidence.json), fitted on the tuning splits by
`evals/tools/fit_confidence.py`, which also chooses the two bands on `dev`:

- `fix`: the best candidate's confidence reaches the fix band: the stored fix applies;
- `confirm`: up to three candidates reach the confirm band: a person (or an agent) chooses;
- `none`: no candidate reaches it.

Pure and deterministic: no I/O but the one data file, read once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from legion_llm.memory.signatures.features import Features
from legion_llm.memory.signatures.match import TIE, Match
from legion_llm.memory.signatures.salient_rules import SALIENT_KINDS

DATA = Path(__file__).resolve().parent / "data" / "confidence.json"
DEPTH = 5  # candidates ranked to compute one's confidence (its rivals decide its margin)
MAX_CONFIRM = 3  # candidates a `confirm` answer shows

Answer = Literal["fix", "confirm", "none"]
ANSWERS: tuple[Answer, ...] = ("fix", "confirm", "none")
KINDS = (*SALIENT_KINDS, "banner")


@dataclass(frozen=True)
class Model:
    """Logistic coefficients by feature name, the intercept, and the two bands."""

    coefficients: dict[str, float]
    intercept: float
    fix: float  # the best candidate's confidence from which the answer is `fix`
    confirm: float  # a candidate's confidence from which a `confirm` answer shows it

    def confidence(self, values: dict[str, float]) -> float:
        z = self.intercept + sum(self.coefficients.get(k, 0.0) * v for k, v in values.items())
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


@cache
def model(path: Path = DATA) -> Model:
    """The fitted model (data/confidence.json); without the file, the score stands in for it."""
    if not path.is_file():
        return Model({"score": 8.0}, -4.0, 0.95, 0.2)
    data = json.loads(path.read_text(encoding="utf-8"))
    bands = data["bands"]
    return Model(
        {str(k): float(v) for k, v in data["coefficients"].items()},
        float(data["intercept"]),
        float(bands["fix"]),
        float(bands["confirm"]),
    )


def _rivals(matches: Sequence[Match], position: int) -> list[float]:
    return [m.score for i, m in enumerate(matches) if i != position]


def feature_values(query: Features, matches: Sequence[Match], position: int) -> dict[str, float]:
    """What the scorer knows of candidate `position` among the ranked `matches` of a query."""
    match = matches[position]
    rivals = _rivals(matches, position)
    best_rival = max(rivals, default=0.0)
    named = [c for c in match.conflicts if "=" in c]
    values = {
        "score": match.score,
        "score_squared": match.score**2,
        "margin": match.score - best_rival,
        "ties": float(min(3, sum(1 for r in rivals if abs(r - match.score) <= TIE))),
        "exact": float(match.exact),
        "first": float(position == 0),
        "named_conflict": float(bool(named)),
        "code_conflict": float(len(named) < len(match.conflicts)),
        "agreed": float(min(2, len(match.agreed))),
        "shared_keys": float(min(2, len(match.shared_keys))),
        "missing_here": float(min(2, len(match.missing_here))),
        "missing_there": float(min(2, len(match.missing_there))),
        "wording": match.wording,
        "context": match.context,
        "query_names": float(min(2, len(query.names))),
    }
    values.update({f"kind={kind}": float(query.kind == kind) for kind in KINDS})
    return values


def confidences(
    query: Features, matches: Sequence[Match], fitted: Model | None = None
) -> list[float]:
    """The calibrated confidence of each ranked candidate, rounded to 4 places."""
    fitted = fitted or model()
    return [
        round(fitted.confidence(feature_values(query, matches, i)), 4) for i in range(len(matches))
    ]


@dataclass(frozen=True)
class Answered:
    """The answer for one query: which of the three, and the candidates it shows."""

    answer: Answer
    matches: list[Match]  # ranked, best first
    confidence: list[float]  # one per match
    shown: int  # how many of the first matches the answer shows (fix: 1, confirm: <= 3, none: 0)


def answer_of(confidence: Sequence[float], fitted: Model | None = None) -> tuple[Answer, int]:
    """(the answer, how many of the first candidates it shows) for ranked confidences."""
    fitted = fitted or model()
    if confidence and confidence[0] >= fitted.fix:
        return "fix", 1
    shown = 0
    for value in confidence[:MAX_CONFIRM]:
        if value < fitted.confirm:
            break
        shown += 1
    return ("confirm", shown) if shown else ("none", 0)


def answered(query: Features, matches: Sequence[Match], fitted: Model | None = None) -> Answered:
    """Confidences for ranked candidates and the answer they give, the candidates re-ordered by
    confidence (the matcher's order among equals). Never `fix` for a candidate that differs in a
    name deciding the fix (a `kind=value` conflict): at most `confirm`, shown, not applied."""
    values = confidences(query, matches, fitted)
    order = sorted(range(len(matches)), key=lambda i: -values[i])
    ranked, ranked_values = [matches[i] for i in order], [values[i] for i in order]
    kind, shown = answer_of(ranked_values, fitted)
    if kind == "fix" and any("=" in key for key in ranked[0].conflicts):
        kind, shown = "confirm", 1  # a different deciding name (a table, a port...): never its fix
    return Answered(kind, ranked, ranked_values, shown)
