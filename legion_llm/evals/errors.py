"""Error-signature eval (issues 6 and 14): datasets, splits, and a runner for the matcher.

Datasets (README.md in each folder): `fixtures/errors/` (the original hand-labelled set, the
`original` split) and `fixtures/errors-corpus/` (real error messages from public issue threads;
each group carries `split: dev|test`, assigned once by family). Definition and gates:
`evals/errors.toml`; the gates that matter apply to `test`, which nothing was tuned on.

Per split, with the scorers in `error_scores.py`:

- pairwise precision / recall of "same root cause" over every unordered pair of messages (the
  de-duplication question `errors add` asks), decided by the deterministic rule;
- grouping accuracy / completeness of the single-link clusters of those pairs;
- fix@1 as a user sees it: each group stores one resolved fix (its first message by id), every
  other message queries that store like `errors match`, and it is a hit when the first candidate
  judged "same root cause" is its own group's; `fix_at_1_ranked` only asks that the top-ranked
  candidate is (whatever the verdict), fix@5 that it is among the first five;
- hard negatives: every message of a group that has look-alikes (`confusable_with`) queries the
  store *without* its own group; it is a false fix when any candidate is judged the same;
- exact collisions: fingerprints strong enough to decide a match alone, shared by two groups;
- model share: the share of those queries that would call a model (candidates above the judge
  floor and no strong exact match);
- what the text alone cannot settle (properties of the data, the same for any matcher): the share
  of hard negatives whose normalised salient line is a look-alike's stored one (`same_as_lookalike`:
  a matcher that gives a repeated error its stored fix gives them the look-alike's), and of fix
  queries that share no salient token with their group's stored message (`nothing_shared`);
- the same per ecosystem.

The `judge` (offline rule by default, one model call per query with an engine) sees the ranked
candidates of a query and says which are the same root cause. One failing case never aborts a run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.evals.error_answers import (
    Answerer,
    AnswerScores,
    Query,
    answer_scores,
    offline_answerer,
)
from legion_llm.evals.error_data import DEFINITION as DEFINITION
from legion_llm.evals.error_data import ErrorGroup as ErrorGroup
from legion_llm.evals.error_data import ErrorMessage as ErrorMessage
from legion_llm.evals.error_data import ErrorsDataset as ErrorsDataset
from legion_llm.evals.error_data import load_dataset as load_dataset
from legion_llm.evals.error_data import load_definition as load_definition
from legion_llm.evals.error_scores import (
    PairCounts,
    exact_collisions,
    fix_at_k,
    grouping_accuracy,
    grouping_completeness,
    pairwise_counts,
    share,
)
from legion_llm.memory.signatures.confidence import DEPTH
from legion_llm.memory.signatures.match import (
    Candidate,
    Match,
    SignatureIndex,
    decide_offline,
    features,
    needs_judge,
    normalise,
    salient,
    strong_fingerprint,
)

DEFAULT_GATES = {  # issue 22's gates, for a folder given without a definition's table
    "fix_precision": 0.95,
    "max_hard_negative_fix": 0.05,
    "fix_coverage": 0.60,
    "confirm_recall": 0.95,
    "max_exact_collisions": 0,
}

PAIR_FLOOR = 0.15  # a pair below this raw similarity is never the same root cause (LOW is 0.30)
Judge = Callable[[str, Sequence[Match]], list[bool]]  # (query, ranked candidates) -> same?
Pair = tuple[int, int]


# ---------------------------------------------------------------- one split


@dataclass
class SplitResult:
    split: str
    messages: int
    groups: int
    pairs: PairCounts
    precision: float
    recall: float
    grouping_accuracy: float
    grouping_completeness: float
    fix_at_1: float
    fix_at_1_ranked: float
    fix_at_5: float
    fix_queries: int
    hard_negatives: int
    hard_negative_false_fixes: int
    hard_negative_false_fix: float
    exact_collisions: list[str]
    model_share: float
    ambiguous_share: float
    same_as_lookalike: float = 0.0
    nothing_shared: float = 0.0
    answers: AnswerScores = field(default_factory=lambda: AnswerScores())
    ecosystems: dict[str, dict[str, float]] = field(default_factory=dict)
    gates: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    identical_text: list[str] = field(default_factory=list)  # named pairs: reported, not gated

    @property
    def unexplained_collisions(self) -> list[str]:
        """The exact collisions the corpus does not name as the very same text."""
        return [pair for pair in self.exact_collisions if pair not in self.identical_text]

    def gate_results(self) -> dict[str, bool]:
        """Each gate's name -> whether the measured value reaches it (`max_x`: at most)."""
        results = {}
        for name, limit in self.gates.items():
            if name.startswith("max_"):
                value = self._value(name[4:])
                results[name] = value <= limit
            else:
                results[name] = self._value(name) >= limit
        return results

    def _value(self, name: str) -> float:
        if hasattr(self.answers, name):
            return float(getattr(self.answers, name))
        value = getattr(self, _GATE_FIELDS.get(name, name))
        return float(len(value)) if isinstance(value, list) else float(value)

    @property
    def passed(self) -> bool:
        return not self.failures and all(self.gate_results().values())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["unexplained_collisions"] = self.unexplained_collisions
        data["gate_results"] = self.gate_results()
        data["passed"] = self.passed
        return data


_GATE_FIELDS = {
    "pairwise_precision": "precision",
    "pairwise_recall": "recall",
    "exact_collisions": "unexplained_collisions",
}


def offline_judge(text: str, matches: Sequence[Match]) -> list[bool]:
    return [decide_offline(m) for m in matches]


def _predict_pairs(messages: Sequence[ErrorMessage], failures: list[str]) -> set[Pair]:
    """Predicted-same pairs over all messages (the de-duplication rule, no model)."""
    index = SignatureIndex(Candidate(str(i), m.text) for i, m in enumerate(messages))
    same: set[Pair] = set()
    for i, message in enumerate(messages):
        try:
            for match in index.rank(message.text, limit=len(index), floor=PAIR_FLOOR):
                j = int(match.candidate.key)
                if j > i and decide_offline(match):
                    same.add((i, j))
        except Exception as exc:  # one failing case never aborts the run
            failures.append(f"pairs for {message.id}: {type(exc).__name__}: {exc}")
    return same


def _store(dataset: ErrorsDataset) -> dict[str, ErrorMessage]:
    """The held-apart message of each group: its first by id."""
    by_group: dict[str, list[ErrorMessage]] = defaultdict(list)
    for message in dataset.messages:
        by_group[message.group].append(message)
    return {group: sorted(items, key=lambda m: m.id)[0] for group, items in by_group.items()}


def _index(dataset: ErrorsDataset, held: dict[str, ErrorMessage]) -> SignatureIndex:
    return SignatureIndex(
        Candidate(group, message.text, dataset.groups[group].fix, resolved=True)
        for group, message in sorted(held.items())
        if group in dataset.groups
    )


def _ask(
    index: SignatureIndex,
    query: Query,
    judge: Judge,
    without: str | None = None,
    answerer: Answerer = offline_answerer,
) -> tuple[list[Match], list[bool]]:
    text = query.message.text
    ranked = index.rank(text, limit=DEPTH, without=without)
    query.ranked = ranked
    query.calls_model = needs_judge(ranked)
    query.ambiguous = bool(ranked) and ranked[0].band == "ambiguous"
    query.answer = answerer(text, features(text), ranked)
    return ranked, judge(text, ranked)


def _fix_queries(
    dataset: ErrorsDataset,
    held: dict[str, ErrorMessage],
    judge: Judge,
    failures: list[str],
    answerer: Answerer = offline_answerer,
) -> list[Query]:
    index = _index(dataset, held)
    queries = []
    for message in dataset.messages:
        if held[message.group] is message:
            continue
        query = Query(message, expected=message.group)
        queries.append(query)
        try:
            ranked, verdicts = _ask(index, query, judge, answerer=answerer)
        except Exception as exc:  # one failing case never aborts the run
            failures.append(f"fix query {message.id}: {type(exc).__name__}: {exc}")
            continue
        keys = [m.candidate.key for m in ranked]
        query.position = keys.index(message.group) + 1 if message.group in keys else None
        chosen = next(
            (m.candidate.key for m, same in zip(ranked, verdicts, strict=True) if same), None
        )
        query.accepted = chosen == message.group
    return queries


def _hard_negatives(
    dataset: ErrorsDataset,
    held: dict[str, ErrorMessage],
    judge: Judge,
    failures: list[str],
    answerer: Answerer = offline_answerer,
) -> list[Query]:
    """Messages of groups with look-alikes in the store, asked with their own group left out."""
    queries = []
    index = _index(dataset, held)  # each query leaves its own group out
    for group in sorted(g for g in held if _lookalikes(dataset, g, held)):
        for message in (m for m in dataset.messages if m.group == group):
            query = Query(message)
            queries.append(query)
            try:
                _, verdicts = _ask(index, query, judge, group, answerer)
            except Exception as exc:  # one failing case never aborts the run
                failures.append(f"hard negative {message.id}: {type(exc).__name__}: {exc}")
                continue
            query.false_fix = any(verdicts)
    return queries


def _lookalikes(dataset: ErrorsDataset, group: str, held: dict[str, ErrorMessage]) -> bool:
    found = dataset.groups.get(group)
    return found is not None and any(other in held for other in found.confusable_with)


def _line(text: str) -> str:
    return normalise(salient(text))


def same_as_lookalike(dataset: ErrorsDataset, held: dict[str, ErrorMessage]) -> float:
    """Share of the hard-negative queries whose salient line, normalised, is that of a
    look-alike's stored message: the same text with a different hidden cause."""
    flags = []
    for group in sorted(g for g in held if _lookalikes(dataset, g, held)):
        looks = {_line(held[o].text) for o in dataset.groups[group].confusable_with if o in held}
        flags += [_line(m.text) in looks for m in dataset.messages if m.group == group]
    return share(flags)


def nothing_shared(dataset: ErrorsDataset, held: dict[str, ErrorMessage]) -> float:
    """Share of the fix queries that share no salient token with their group's stored message
    (a banner alone, a stack fragment without the error line): no text can find their fix."""
    flags = [
        not set(features(m.text).salient) & set(features(held[m.group].text).salient)
        for m in dataset.messages
        if held[m.group] is not m
    ]
    return share(flags)


def _per_ecosystem(fix: list[Query], hard: list[Query]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for ecosystem in sorted({q.message.ecosystem for q in [*fix, *hard]}):
        mine = [q for q in fix if q.message.ecosystem == ecosystem]
        negatives = [q for q in hard if q.message.ecosystem == ecosystem]
        out[ecosystem] = {
            "fix_queries": len(mine),
            "fix_at_1": share([q.accepted for q in mine]) if mine else 1.0,
            "hard_negatives": len(negatives),
            "hard_negative_false_fix": share([q.false_fix for q in negatives]),
        }
    return out


def answer_queries(
    dataset: ErrorsDataset, answerer: Answerer = offline_answerer, judge: Judge = offline_judge
) -> tuple[list[Query], list[Query], list[str]]:
    """(fix queries, hard negatives, failures) of one dataset, each query with its ranked
    candidates and its answer (the rows evals/tools/fit_confidence.py fits on)."""
    failures: list[str] = []
    held = _store(dataset)
    fix = _fix_queries(dataset, held, judge, failures, answerer)
    hard = _hard_negatives(dataset, held, judge, failures, answerer)
    return fix, hard, failures


def run_split(
    name: str,
    dataset: ErrorsDataset,
    judge: Judge = offline_judge,
    answerer: Answerer = offline_answerer,
) -> SplitResult:
    labels = [m.group for m in dataset.messages]
    failures: list[str] = []
    same = _predict_pairs(dataset.messages, failures)
    held = _store(dataset)
    fix, hard, asked = answer_queries(dataset, answerer, judge)
    failures += asked
    counts = pairwise_counts(labels, same)
    positions = [q.position for q in fix]
    prints = [strong_fingerprint(m.text) for m in dataset.messages]
    return SplitResult(
        split=name,
        messages=len(labels),
        groups=len(set(labels)),
        pairs=counts,
        precision=counts.precision,
        recall=counts.recall,
        grouping_accuracy=grouping_accuracy(labels, same),
        grouping_completeness=grouping_completeness(labels, same),
        fix_at_1=share([q.accepted for q in fix]),
        fix_at_1_ranked=fix_at_k(positions, 1),
        fix_at_5=fix_at_k(positions, 5),
        fix_queries=len(fix),
        hard_negatives=len(hard),
        hard_negative_false_fixes=sum(q.false_fix for q in hard),
        hard_negative_false_fix=share([q.false_fix for q in hard]),
        exact_collisions=exact_collisions(prints, labels),
        model_share=share([q.calls_model for q in [*fix, *hard]]),
        ambiguous_share=share([q.ambiguous for q in fix]),
        same_as_lookalike=same_as_lookalike(dataset, held),
        nothing_shared=nothing_shared(dataset, held),
        answers=answer_scores(fix, hard),
        ecosystems=_per_ecosystem(fix, hard),
        failures=failures,
    )


# ---------------------------------------------------------------- every split


@dataclass
class ErrorsEvalResult:
    splits: list[SplitResult]

    @property
    def passed(self) -> bool:
        return all(s.passed for s in self.splits)

    @property
    def failures(self) -> list[str]:
        return [f"{s.split}: {f}" for s in self.splits for f in s.failures]

    def split(self, name: str) -> SplitResult:
        return next(s for s in self.splits if s.split == name)

    def as_dict(self) -> dict[str, Any]:
        return {"splits": {s.split: s.as_dict() for s in self.splits}, "passed": self.passed}


def run_errors_eval(
    fixtures_dir: Path | None = None,
    judge: Judge | None = None,
    *,
    definition: Path = DEFINITION,
    splits: Iterable[str] | None = None,
    answerer: Answerer | None = None,
) -> ErrorsEvalResult:
    """Every split of the definition (or `splits` of them), or one folder with the gates of
    `fresh` (else those of `dev`). `judge`: the full-coverage verdicts (offline rule by default);
    `answerer`: the three answers (the calibrated confidence by default)."""
    judge = judge or offline_judge
    answerer = answerer or offline_answerer
    loaded = load_definition(definition) if definition.is_file() else None
    gates = loaded.gates if loaded else {}
    if fixtures_dir is not None:
        dataset = load_dataset(fixtures_dir)
        result = run_split(fixtures_dir.name, dataset, judge, answerer)
        result.gates = gates.get("fresh", gates.get("dev", DEFAULT_GATES))
        return ErrorsEvalResult([result])
    if loaded is None:
        raise InputError(f"no fixtures folder given and no eval definition at {definition}")
    wanted = list(splits) if splits is not None else list(loaded.splits)
    unknown = [name for name in wanted if name not in loaded.splits]
    if unknown:
        known = ", ".join(loaded.splits)
        raise InputError(f"unknown split {', '.join(unknown)} (the definition has {known})")
    results = []
    for name in wanted:
        spec = loaded.splits[name]
        result = run_split(name, load_dataset(spec.path, spec.split), judge, answerer)
        result.gates = gates.get(name, {})
        result.identical_text = list(spec.identical_text)
        results.append(result)
    return ErrorsEvalResult(results)
