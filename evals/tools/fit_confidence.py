"""Fit the error matcher's calibrated confidence and choose its two bands (issue 22).

    .venv/bin/python evals/tools/fit_confidence.py [--fit dev,dev2,original] [--bands dev]
                                                   [--hold-out SPLIT] [--dry-run]

Every query of the fitting splits (fix queries, whose cause is stored, and hard negatives,
asked without their own group: legion_llm/evals/errors.py) is ranked by the matcher; each of
its DEPTH candidates is one row: the features the scorer knows of it among its rivals
(memory/signatures/confidence.py, `feature_values`) and whether it is the right entry. A
logistic model (L2-regularised, fitted by Newton's method in pure Python) gives the
confidence. The bands are then chosen on `--bands` (dev):

- fix: the lowest threshold at which the precision of `fix` answers is at least FIX_PRECISION
  and the share of hard negatives answered `fix` at most MAX_HARD_NEGATIVE_FIX, each with a
  margin (PRECISION_MARGIN, HARD_NEGATIVE_MARGIN): the confidence is fitted on these very
  queries, so the numbers measured on them are a little optimistic;
- confirm: the highest threshold at which confirm recall (the right fix is the `fix` answer or
  among the confirm candidates) reaches CONFIRM_RECALL plus a margin; when no band reaches it,
  the highest band within UNREACHABLE_TOLERANCE of the best recall (the script says so).

Writes legion_llm/memory/signatures/data/confidence.json (coefficients, intercept, bands, what
it was fitted on) and prints the reliability per bin on the bands split. `--hold-out dev2` fits
without that split and reports its numbers as an out-of-sample check (nothing is written). The
fresh test split is never read here.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from legion_llm.evals.error_data import load_dataset, load_definition  # noqa: E402
from legion_llm.evals.error_answers import Query, answer_scores  # noqa: E402
from legion_llm.evals.errors import answer_queries  # noqa: E402
from legion_llm.memory.signatures import confidence  # noqa: E402
from legion_llm.memory.signatures.features import features  # noqa: E402

OUT = confidence.DATA
NEVER = "fresh"  # the held-out test split: never fitted on, never read
FIX_PRECISION = 0.95
PRECISION_MARGIN = 0.01
MAX_HARD_NEGATIVE_FIX = 0.05
HARD_NEGATIVE_MARGIN = 0.005
CONFIRM_RECALL = 0.95
RECALL_MARGIN = 0.005
UNREACHABLE_TOLERANCE = 0.01  # recall unreachable: the highest band within this of the best
L2 = 1.0
Row = tuple[dict[str, float], int]


# ---------------------------------------------------------------- the logistic model


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix @ x = vector (Gaussian elimination with partial pivoting)."""
    n = len(vector)
    a = [[*row, vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        if abs(a[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col and a[r][col]:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [a[i][n] / a[i][i] if abs(a[i][i]) > 1e-12 else 0.0 for i in range(n)]


def fit_logistic(
    xs: Sequence[Sequence[float]], ys: Sequence[int], l2: float = L2, rounds: int = 25
) -> list[float]:
    """Weights (intercept first) of an L2-regularised logistic regression, by Newton's method.
    The intercept is not regularised."""
    n = len(xs[0]) + 1
    w = [0.0] * n
    for _ in range(rounds):
        grad = [0.0] * n
        hess = [[0.0] * n for _ in range(n)]
        for x, y in zip(xs, ys, strict=True):
            row = [1.0, *x]
            z = sum(a * b for a, b in zip(w, row, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
            s = p * (1 - p)
            for i in range(n):
                grad[i] += (p - y) * row[i]
                if row[i]:
                    si = s * row[i]
                    hrow = hess[i]
                    for j in range(n):
                        if row[j]:
                            hrow[j] += si * row[j]
        for i in range(1, n):
            grad[i] += l2 * w[i]
            hess[i][i] += l2
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(b) for b in step) < 1e-7:
            break
    return w


# ---------------------------------------------------------------- rows and bands


def queries(split: str) -> tuple[list[Query], list[Query]]:
    if split == NEVER:
        raise SystemExit(f"the {NEVER} split is held out: never fitted on")
    spec = load_definition().splits[split]
    fix, hard, failures = answer_queries(load_dataset(spec.path, spec.split))
    if failures:
        raise SystemExit(f"{split}: {failures[0]}")
    return fix, hard


def rows_of(fix: Sequence[Query], hard: Sequence[Query]) -> list[Row]:
    rows = []
    for q in [*fix, *hard]:
        query = features(q.message.text)
        for i, match in enumerate(q.ranked):
            values = confidence.feature_values(query, q.ranked, i)
            rows.append((values, int(match.candidate.key == q.expected)))
    return rows


def fit(rows: Sequence[Row]) -> confidence.Model:
    names = sorted(rows[0][0])
    weights = fit_logistic([[r[0][k] for k in names] for r in rows], [r[1] for r in rows])
    coefficients = {k: round(v, 6) for k, v in zip(names, weights[1:], strict=True)}
    return confidence.Model(coefficients, round(weights[0], 6), 1.0, 1.0)


def rescore(fix: Sequence[Query], hard: Sequence[Query], fitted: confidence.Model) -> None:
    """Each query's answer under `fitted` (its ranked candidates stay)."""
    for q in [*fix, *hard]:
        q.answer = confidence.answered(features(q.message.text), q.ranked, fitted)


def _with(fitted: confidence.Model, fix: float, confirm: float) -> confidence.Model:
    return confidence.Model(fitted.coefficients, fitted.intercept, fix, confirm)


def _rebanded(fix: Sequence[Query], hard: Sequence[Query], bands: confidence.Model) -> None:
    """Each query's answer under other bands, its confidences kept (no features recomputed)."""
    for q in [*fix, *hard]:
        assert q.answer is not None
        kind, shown = confidence.answer_of(q.answer.confidence, bands)
        q.answer = confidence.Answered(kind, q.answer.matches, q.answer.confidence, shown)


def choose_bands(
    fix: Sequence[Query], hard: Sequence[Query], fitted: confidence.Model
) -> tuple[confidence.Model, list[str]]:
    """The bands chosen on these queries (see the module's docstring), and what to report."""
    notes = []
    rescore(fix, hard, _with(fitted, 1.0, 1.0))
    fix_band = 1.0
    for t in [round(0.30 + 0.005 * i, 3) for i in range(141)]:  # 0.30 .. 1.00
        _rebanded(fix, hard, _with(fitted, t, t))
        s = answer_scores(fix, hard)
        if (
            s.fix_precision >= FIX_PRECISION + PRECISION_MARGIN
            and s.hard_negative_fix <= MAX_HARD_NEGATIVE_FIX - HARD_NEGATIVE_MARGIN
        ):
            fix_band = t
            break
    recalls: dict[float, float] = {}
    for t in [round(0.005 * i, 3) for i in range(int(fix_band / 0.005), 0, -1)]:
        _rebanded(fix, hard, _with(fitted, fix_band, t))
        recalls[t] = answer_scores(fix, hard).confirm_recall
    reached = [t for t, r in recalls.items() if r >= CONFIRM_RECALL + RECALL_MARGIN]
    if reached:
        confirm_band = max(reached)
    else:
        best = max(recalls.values())
        confirm_band = max(t for t, r in recalls.items() if r >= best - UNREACHABLE_TOLERANCE)
        notes.append(
            f"confirm recall {CONFIRM_RECALL} not reachable on this split: at most {best:.3f}"
        )
    chosen = _with(fitted, fix_band, confirm_band)
    _rebanded(fix, hard, chosen)
    return chosen, notes


def report(name: str, fix: Sequence[Query], hard: Sequence[Query]) -> dict[str, object]:
    s = answer_scores(fix, hard)
    keys = ("fix_precision", "fix_answers", "hard_negative_fix", "fix_coverage",
            "confirm_recall", "retrieval_recall", "confirm_share", "hard_negative_none")  # fmt: skip
    out = {k: round(float(getattr(s, k)), 4) for k in keys}
    print(f"{name}: " + ", ".join(f"{k} {v:g}" for k, v in out.items()))
    return {**out, "reliability": s.reliability}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", default="dev,dev2,original")
    parser.add_argument("--bands", default="dev")
    parser.add_argument("--hold-out", default="")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    fitting = [s for s in args.fit.split(",") if s and s != args.hold_out]
    asked = {s: queries(s) for s in {*fitting, args.bands, *filter(None, [args.hold_out])}}
    fitted = fit([row for s in fitting for row in rows_of(*asked[s])])
    chosen, notes = choose_bands(*asked[args.bands], fitted)
    print(f"bands on {args.bands}: fix {chosen.fix}, confirm {chosen.confirm}")
    for note in notes:
        print(f"note: {note}")
    results = {}
    for split, (fix, hard) in sorted(asked.items()):
        rescore(fix, hard, chosen)
        results[split] = report(split, fix, hard)
    print(f"reliability on {args.bands} (bin: candidates, mean confidence, share right):")
    for b in results[args.bands]["reliability"]:  # type: ignore[attr-defined]
        print(f"  [{b['low']:.1f}, {b['high']:.1f}): {b['count']:>5}  "
              f"{b['mean_confidence']:.3f}  {b['share_right']:.3f}")  # fmt: skip
    if args.dry_run or args.hold_out:
        return 0
    data = {
        "about": "evals/tools/fit_confidence.py: logistic model of the error matcher's "
        "confidence (memory/signatures/confidence.py); bands chosen on the bands split",
        "fitted_on": fitting,
        "bands_on": args.bands,
        "rows": sum(len(rows_of(*asked[s])) for s in fitting),
        "intercept": chosen.intercept,
        "coefficients": chosen.coefficients,
        "bands": {"fix": chosen.fix, "confirm": chosen.confirm},
        "measured": {
            s: {k: v for k, v in r.items() if k != "reliability"} for s, r in results.items()
        },
        "reliability": results[args.bands]["reliability"],
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
