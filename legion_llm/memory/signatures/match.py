"""Error-signature matching: an index of stored errors, ranked fuzzy matches, verdicts.

The deterministic core of the error knowledge base (memory-manager spec section 9: "match on key
error terms, not exact string"). Pure functions and an in-memory index, no I/O, no LLM. What one
text contributes is `features.features(text)`: the salient and secondary error lines' tokens
(lines.py, salient_rules.py, tokens.py; banners down-weighted, banners.py), the discriminating
names (discriminators.py) and the strong fingerprint.

- `SignatureIndex(candidates).rank(query)` returns `Match`es, best first, each with a score in
  [0, 1] and a band: "match" (score >= HIGH), "none" (score < LOW) or "ambiguous" in between;
- an exact fingerprint (the same output, frames aside, naming which thing failed) scores 1.0;
- otherwise the score is a weighted Jaccard (Ruzicka) similarity of the salient tokens, each
  weighted by its kind (codes, subject and discriminating names most, placeholders least) times
  its IDF over the index and the background corpus (data/token_df.json). A token only one side
  carries counts in the union at a share: a code when the other side has none (missing
  information, not a contradiction), a quoted value (the usual variation between occurrences);
- a different discriminating name of the same kind (port 5432 vs 6379, `text/html` vs another
  MIME type, `gcc` vs `node`) scales the score by CONFLICT_FACTOR and is reported as a conflict;
- the context lines only break ties;
- `decide_offline` is the deterministic full-coverage verdict; `needs_judge` says whether a
  model would be asked (pipeline/errmatch.py sends every candidate from JUDGE_FLOOR up in one
  call). What `errors match` answers (fix, confirm or none) comes from the calibrated confidence
  over these matches instead (confidence.py); the bands above only feed it and the eval's
  full-coverage numbers.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from legion_llm.memory.signatures.discriminators import agreeing, conflicting, telling
from legion_llm.memory.signatures.features import (
    Features,
    background_df,
    features,
    fingerprint,
    key_agreement,
    salient,
    strong_fingerprint,
)
from legion_llm.memory.signatures.normalise import normalise
from legion_llm.memory.signatures.tokens import KIND_WEIGHT, VALUE

__all__ = [
    "HIGH",
    "LOW",
    "MID",
    "Band",
    "Candidate",
    "Match",
    "SignatureIndex",
    "decide_offline",
    "features",
    "fingerprint",
    "needs_judge",
    "normalise",
    "offline_verdict",
    "salient",
    "same_root_cause",
    "strong_fingerprint",
]

HIGH = 0.62  # at or above: the same root cause, no questions asked
LOW = 0.30  # below: a different root cause
MID = 0.36  # inside the band, the offline engine says "same" from here on, barring a conflict
JUDGE_FLOOR = 0.20  # with a model, the candidates from here up are judged in one call
# Below the band, two texts that both name the same telling thing (an auth method, a constraint,
# a bean, a PHP function...) with nothing in conflict are still the same root cause from here up.
AGREED_FLOOR = 0.20
TIE = 0.02  # scores this close count as equal: a Resolved fix goes first
ONE_SIDED_CODE = 0.25  # share of a code's weight that counts when the other side has no code
# A quoted value only one side names (a database, a user, a table) is the usual variation between
# two occurrences of one error, not a difference: it counts this share of its weight in the union.
ONE_SIDED = {VALUE: 0.3}
CONFLICT_FACTOR = (
    0.35  # a different discriminating name (port, constraint, package...) scales by this
)
CONTEXT_WEIGHT = 0.5  # a context token weighs this much of a salient token of the same kind
CONTEXT_TOP = 50  # context similarity (a tie-break) is computed for this many best candidates

Band = Literal["match", "ambiguous", "none"]
Weights = dict[str, float]


@dataclass(frozen=True)
class Candidate:
    key: str
    signature: str
    fix: str = ""
    resolved: bool = False


@dataclass(frozen=True)
class Match:
    candidate: Candidate
    score: float
    band: Band
    exact: bool = False
    shared_keys: tuple[str, ...] = ()  # codes and subject names both sides carry
    conflicts: tuple[str, ...] = ()  # codes (or subjects) when both sides have some, none shared
    context: float = 0.0  # similarity of the non-salient lines; breaks ties only
    wording: float = 0.0  # the salient similarity with error codes left out
    agreed: tuple[str, ...] = ()  # telling names (`kind=value`, not weak kinds) both sides carry
    missing_here: tuple[str, ...] = ()  # deciding names the stored error names, the query not
    missing_there: tuple[str, ...] = ()  # deciding names the query names, the stored error not


def _without(weights: Weights, drop: frozenset[str]) -> Weights:
    return {t: w for t, w in weights.items() if t not in drop} if drop else weights


def _scaled(weights: Weights, codes: frozenset[str]) -> Weights:
    return {t: w * ONE_SIDED_CODE if t in codes else w for t, w in weights.items()}


def _siblings(shared: Sequence[str], conflicts: Sequence[str]) -> bool:
    """Different codes (E0432 / E0433, TS2582 / TS2593) on texts that name the same subject:
    sibling diagnostics of one missing thing. Subjects are lower-case, codes upper-case."""
    return all(k.isupper() for k in conflicts) and any(not k.isupper() for k in shared)


def _one_sided_total(weights: Weights, feat: Features) -> float:
    """What the tokens of one side add to a union in which the other side has none of them."""
    return sum(w * ONE_SIDED.get(feat.salient[t], 1.0) for t, w in weights.items())


def band_of(score: float) -> Band:
    if score >= HIGH:
        return "match"
    return "none" if score < LOW else "ambiguous"


def _ruzicka(a: Weights, b: Weights) -> float:
    if len(a) > len(b):
        a, b = b, a
    shared = sum(min(w, b[t]) for t, w in a.items() if t in b)
    union = sum(a.values()) + sum(b.values()) - shared
    return shared / union if union > 0 else 0.0


class SignatureIndex:
    """Candidates indexed once (IDF, postings, fingerprints); `rank` scores one query against all."""

    def __init__(
        self, candidates: Iterable[Candidate], *, idf_from: SignatureIndex | None = None
    ) -> None:
        """`idf_from`: weigh tokens by another (larger) index's document frequencies."""
        self.candidates: list[Candidate] = list(candidates)
        self._feats = [features(c.signature) for c in self.candidates]
        self._df: Counter[str] = Counter()
        for feat in self._feats:
            self._df.update(set(feat.salient) | set(feat.context))
        self._docs = len(self._feats)
        if idf_from is not None:
            self._df, self._docs = idf_from._df, idf_from._docs
        self._sal = [self.weights(f.salient, scales=f.scale) for f in self._feats]
        self._ctx = [self.weights(f.context, CONTEXT_WEIGHT) for f in self._feats]
        self._total = [_one_sided_total(w, f) for w, f in zip(self._sal, self._feats, strict=True)]
        self._codes = [
            sum(w[c] for c in f.codes) for f, w in zip(self._feats, self._sal, strict=True)
        ]
        self._postings: dict[str, list[tuple[int, float, float]]] = {}
        self._exact: dict[str, list[int]] = {}
        for doc, weights in enumerate(self._sal):
            kinds = self._feats[doc].salient
            for token, weight in weights.items():
                share = ONE_SIDED.get(kinds[token], 1.0)
                self._postings.setdefault(token, []).append((doc, weight, share))
            print_ = self._feats[doc].fingerprint
            if print_ is not None:
                self._exact.setdefault(print_, []).append(doc)

    def __len__(self) -> int:
        return len(self.candidates)

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency over this index and the background corpus
        (data/token_df.json); a token neither ever saw counts as rarest."""
        background, docs = background_df()
        df = self._df.get(token, 0) + background.get(token, 0)
        return math.log(1.0 + (self._docs + docs + 1) / (df + 0.5))

    def weights(
        self, kinds: dict[str, str], scale: float = 1.0, scales: dict[str, float] | None = None
    ) -> Weights:
        shares = scales or {}
        return {
            t: scale * shares.get(t, 1.0) * KIND_WEIGHT[kind] * self.idf(t)
            for t, kind in kinds.items()
        }

    def rank(
        self, query: str, limit: int = 5, *, floor: float = 0.0, without: str | None = None
    ) -> list[Match]:
        """The `limit` best candidates for an error text, best first; [] when none shares a token.
        `floor`: leave out candidates whose raw similarity is below it (they cannot reach a band
        above "none"); `without`: leave out the candidates with this key."""
        feat = features(query)
        scores = self._scores(feat)
        exact = self._exact.get(feat.fingerprint, []) if feat.fingerprint else []
        for doc in exact:
            scores[doc] = 1.0
        if floor or without is not None:
            scores = {
                d: v for d, v in scores.items() if v >= floor and self.candidates[d].key != without
            }
        best = heapq.nlargest(max(4 * limit, 20), scores, key=scores.__getitem__)
        ctx = self.weights(feat.context, CONTEXT_WEIGHT)
        sal = self.weights(feat.salient, scales=feat.scale)
        matches = []
        for position, doc in enumerate(best):
            context = _ruzicka(ctx, self._ctx[doc]) if ctx and position < CONTEXT_TOP else 0.0
            wording = _ruzicka(
                _without(sal, feat.codes), _without(self._sal[doc], self._feats[doc].codes)
            )
            extra = (context, wording)
            matches.append(self._match(feat, sal, doc, scores[doc], doc in exact, extra))
        return order(matches)[:limit]

    def _scores(self, feat: Features) -> dict[int, float]:
        """Ruzicka similarity of the salient tokens against every candidate sharing one."""
        sal = self.weights(feat.salient, scales=feat.scale)
        total, codes = _one_sided_total(sal, feat), sum(sal[c] for c in feat.codes)
        shared: dict[int, float] = {}
        both: dict[int, float] = {}  # what shared tokens add to the union beyond one-sided shares
        for token, weight in sal.items():
            mine = weight * ONE_SIDED.get(feat.salient[token], 1.0)
            for doc, other, share in self._postings.get(token, ()):
                shared[doc] = shared.get(doc, 0.0) + min(weight, other)
                both[doc] = both.get(doc, 0.0) + max(weight, other) - mine - other * share
        return {
            doc: value / self._union(total, codes, doc, both[doc]) for doc, value in shared.items()
        }

    def _union(self, total: float, codes: float, doc: int, both: float) -> float:
        """Ruzicka's denominator: every shared token at its larger weight, a one-sided one at
        its kind's share (ONE_SIDED); codes that only one side carries stay out of it."""
        mine, theirs = total, self._total[doc]
        if codes and not self._codes[doc]:
            mine -= (1 - ONE_SIDED_CODE) * codes
        elif self._codes[doc] and not codes:
            theirs -= (1 - ONE_SIDED_CODE) * self._codes[doc]
        return max(mine + theirs + both, 1e-9)

    def _match(
        self,
        feat: Features,
        sal: Weights,
        doc: int,
        score: float,
        exact: bool,
        extra: tuple[float, float],
    ) -> Match:
        shared, conflicts = key_agreement(feat, self._feats[doc])
        if conflicts and _siblings(shared, conflicts):  # their codes count as one-sided ones do
            other = self._sal[doc], self._feats[doc].codes
            score = max(score, _ruzicka(_scaled(sal, feat.codes), _scaled(*other)))
        named = conflicting(feat.names, self._feats[doc].names)
        agreed = tuple(agreeing(feat.names, self._feats[doc].names))
        if named:  # a different port, constraint, package...: a strong negative
            score *= CONFLICT_FACTOR
            conflicts = tuple(sorted({*conflicts, *named}))
        score = round(min(1.0, max(0.0, score)), 4)
        context, wording = (round(value, 4) for value in extra)
        here, there = one_sided_names(feat, self._feats[doc])
        return Match(
            self.candidates[doc],
            score,
            band_of(score),
            exact,
            shared,
            conflicts,
            context,
            wording,
            agreed,
            here,
            there,
        )


def _deciding(feat: Features) -> dict[str, set[str]]:
    """kind -> values of the names that decide a fix: telling names, codes, subjects."""
    out: dict[str, set[str]] = {}
    for kind, value in telling(feat.names):
        out.setdefault(kind, set()).add(value)
    for name, values in (("code", feat.codes), ("subject", feat.subjects)):
        if values:
            out[name] = set(values)
    return out


def one_sided_names(query: Features, stored: Features) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(deciding names of a kind only the stored error names, of a kind only the query names):
    missing information, neither shared nor in conflict."""
    mine, theirs = _deciding(query), _deciding(stored)
    here = sorted(f"{k}={v}" for k in theirs.keys() - mine.keys() for v in theirs[k])
    there = sorted(f"{k}={v}" for k in mine.keys() - theirs.keys() for v in mine[k])
    return tuple(here), tuple(there)


def order(matches: Sequence[Match]) -> list[Match]:
    """Exact first, then by score; among scores within TIE of a block's best, Resolved first
    (then higher score, then more similar context)."""
    ranked = sorted(matches, key=lambda m: (not m.exact, -m.score, -m.context, m.candidate.key))
    out: list[Match] = []
    start = 0
    while start < len(ranked):
        head, end = ranked[start], start + 1
        while (
            end < len(ranked)
            and ranked[end].exact == head.exact
            and ranked[end].score >= head.score - TIE
        ):
            end += 1
        block = ranked[start:end]
        block.sort(key=lambda m: (not m.candidate.resolved, -m.score, -m.context, m.candidate.key))
        out += block
        start = end
    return out


def decide_offline(match: Match) -> bool:
    """The deterministic verdict: "match" is the same root cause; from AGREED_FLOOR up, so are two
    texts that both name the same telling thing with nothing in conflict; otherwise "none" is not,
    and inside the ambiguous band it is when the score reaches MID and nothing conflicts (no
    disjoint codes or subject names). Different codes alone are forgiven for sibling diagnostics of one problem
    (TS2582 / TS2593): when both name the same missing thing, or the wording alone matches."""
    if match.band == "match":
        return True
    if any("=" in key for key in match.conflicts):
        return False
    if match.agreed and not match.conflicts and match.score >= AGREED_FLOOR:
        return True
    if match.band == "none" or match.score < MID:
        return False
    codes_only = all(key.isupper() for key in match.conflicts)  # subjects are lower-case
    return (
        not match.conflicts
        or _siblings(match.shared_keys, match.conflicts)
        or (codes_only and match.wording >= HIGH)
    )


def offline_verdict(match: Match) -> tuple[bool, str]:
    """(same root cause?, what decided it): `exact` or `fuzzy` in the match band, `offline` for
    the rule's call inside the band or on a shared telling name, `none` below it."""
    if match.band == "match":
        return True, "exact" if match.exact else "fuzzy"
    same = decide_offline(match)
    return same, "offline" if same or match.band == "ambiguous" else "none"


def needs_judge(matches: Sequence[Match]) -> bool:
    """Whether a model would be asked about these ranked candidates: one reaches the judge floor
    and the best is not an exact match."""
    return bool(matches) and matches[0].score >= JUDGE_FLOOR and not matches[0].exact


def same_root_cause(a: str, b: str, index: SignatureIndex | None = None) -> tuple[bool, float]:
    """(same root cause?, score) of two error texts, for de-duplication.

    Pass the store's `index` so that its IDF weighs the tokens; without one the two texts alone do."""
    background = index or SignatureIndex([Candidate("a", a), Candidate("b", b)])
    found = SignatureIndex([Candidate("b", b)], idf_from=background).rank(a, 1)
    if not found:
        return False, 0.0
    return decide_offline(found[0]), found[0].score
