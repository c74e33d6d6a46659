"""Error-signature eval (issue 6): dataset, pure scorers and a runner for the signature matcher.

Dataset: `fixtures/errors/` (README.md there): `groups.jsonl` and one `<ecosystem>.jsonl` of
labelled messages per ecosystem. Definition and gates: `evals/errors.toml`.

Metrics, all computed by pure functions below:

- pairwise precision / recall of "same root cause" over every unordered pair of messages. A pair is
  predicted "same" when the matcher puts it in the "match" band, or in the "ambiguous" band and the
  `decide` function (the offline engine by default, an LLM adjudicator later) says so. The index
  holds every message, so IDF is that of a store of this size.
- grouping accuracy: messages are clustered by single link over the predicted-same pairs; a message
  counts as correctly grouped when the majority label of its cluster is its own group (ties go to
  the alphabetically first group). This is cluster *purity*: it punishes merging different root
  causes, not splitting one, so `grouping_completeness` reports the reverse view (the share of
  each group's messages that sit in that group's largest cluster, over all messages).
- fix@1 / fix@5: each group stores one resolved fix from a held-apart variant (its first message by
  id); every other message queries the index of those held-apart variants, and it is a hit when
  its own group's candidate ranks first / within the first five.
- ambiguous share: the share of those fix queries whose best candidate sits in the ambiguous band,
  i.e. the queries that would cost an LLM call; `pair_ambiguous_share` is the same over all pairs.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.memory.signatures.match import Candidate, Match, SignatureIndex, decide_offline

DEFINITION = Path(__file__).resolve().parents[2] / "evals" / "errors.toml"
DEFAULT_GATES = {"pairwise_precision": 0.98, "pairwise_recall": 0.90, "fix_at_1": 0.95}

Decide = Callable[[str, Match], bool]  # (query error text, ambiguous match) -> same root cause?
Pair = tuple[int, int]


@dataclass(frozen=True)
class ErrorMessage:
    id: str
    group: str
    ecosystem: str
    text: str


@dataclass(frozen=True)
class ErrorGroup:
    group: str
    ecosystem: str
    root_cause: str
    fix: str
    confusable_with: tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorsDataset:
    messages: tuple[ErrorMessage, ...]
    groups: dict[str, ErrorGroup]


@dataclass(frozen=True)
class ErrorsEvalDefinition:
    dataset: Path
    gates: dict[str, float]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return rows


def load_dataset(fixtures_dir: Path) -> ErrorsDataset:
    """groups.jsonl plus every other *.jsonl in the folder (one per ecosystem), ordered by id."""
    groups_file = fixtures_dir / "groups.jsonl"
    if not groups_file.is_file():
        raise InputError(f"{fixtures_dir} has no groups.jsonl")
    groups = {
        row["group"]: ErrorGroup(
            row["group"],
            row["ecosystem"],
            row["root_cause"],
            row["fix"],
            tuple(row.get("confusable_with", ())),
        )
        for row in _jsonl(groups_file)
    }
    messages = []
    for path in sorted(fixtures_dir.glob("*.jsonl")):
        if path.name == "groups.jsonl":
            continue
        for row in _jsonl(path):
            ecosystem = groups[row["group"]].ecosystem if row["group"] in groups else path.stem
            messages.append(ErrorMessage(row["id"], row["group"], ecosystem, row["text"]))
    return ErrorsDataset(tuple(sorted(messages, key=lambda m: m.id)), groups)


def load_definition(path: Path = DEFINITION) -> ErrorsEvalDefinition:
    """The eval definition file: dataset path (relative to the file) and gates."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    dataset = (path.parent / data["dataset"]["path"]).resolve()
    return ErrorsEvalDefinition(dataset, {k: float(v) for k, v in data.get("gates", {}).items()})


# ---------------------------------------------------------------- pure scorers


@dataclass(frozen=True)
class PairCounts:
    true_positive: int
    false_positive: int
    false_negative: int

    @property
    def precision(self) -> float:
        predicted = self.true_positive + self.false_positive
        return self.true_positive / predicted if predicted else 1.0

    @property
    def recall(self) -> float:
        actual = self.true_positive + self.false_negative
        return self.true_positive / actual if actual else 1.0


def pairwise_counts(labels: Sequence[str], same: Iterable[Pair]) -> PairCounts:
    """Counts of predicted-same pairs (i < j, indexes into labels) against the labels."""
    predicted = {(min(i, j), max(i, j)) for i, j in same if i != j}
    true_positive = sum(labels[i] == labels[j] for i, j in predicted)
    sizes = Counter(labels)
    actual = sum(n * (n - 1) // 2 for n in sizes.values())
    return PairCounts(true_positive, len(predicted) - true_positive, actual - true_positive)


def single_link(count: int, same: Iterable[Pair]) -> list[int]:
    """Cluster id (the smallest member's index) of each of `count` items, linked by `same`."""
    parent = list(range(count))

    def root(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for i, j in same:
        a, b = root(i), root(j)
        parent[max(a, b)] = min(a, b)
    return [root(item) for item in range(count)]


def grouping_accuracy(labels: Sequence[str], same: Iterable[Pair]) -> float:
    """Share of items whose single-link cluster has their own label as its majority label."""
    clusters = single_link(len(labels), same)
    members: dict[int, list[str]] = defaultdict(list)
    for item, cluster in enumerate(clusters):
        members[cluster].append(labels[item])
    majority = {
        c: min(Counter(v).items(), key=lambda kv: (-kv[1], kv[0]))[0] for c, v in members.items()
    }
    correct = sum(majority[clusters[item]] == label for item, label in enumerate(labels))
    return correct / len(labels) if labels else 1.0


def grouping_completeness(labels: Sequence[str], same: Iterable[Pair]) -> float:
    """Share of items that sit in the largest cluster of their own label (inverse purity)."""
    clusters = single_link(len(labels), same)
    per_label: dict[str, Counter[int]] = defaultdict(Counter)
    for item, label in enumerate(labels):
        per_label[label][clusters[item]] += 1
    kept = sum(max(counts.values()) for counts in per_label.values())
    return kept / len(labels) if labels else 1.0


def fix_at_k(positions: Sequence[int | None], k: int) -> float:
    """Share of queries whose right candidate ranked within the first k (positions are 1-based)."""
    hits = sum(1 for p in positions if p is not None and p <= k)
    return hits / len(positions) if positions else 0.0


def share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


# ---------------------------------------------------------------- runner


@dataclass
class ErrorsEvalResult:
    messages: int
    groups: int
    pairs: PairCounts
    precision: float
    recall: float
    grouping_accuracy: float
    grouping_completeness: float
    fix_at_1: float
    fix_at_5: float
    ambiguous_share: float
    pair_ambiguous_share: float
    fix_queries: int
    gates: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def gate_results(self) -> dict[str, bool]:
        """Each gate's name -> whether the measured value reaches it."""
        return {
            name: getattr(self, _GATE_FIELDS.get(name, name)) >= value
            for name, value in self.gates.items()
        }

    @property
    def passed(self) -> bool:
        return not self.failures and all(self.gate_results().values())

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["gate_results"] = self.gate_results()
        data["passed"] = self.passed
        return data


_GATE_FIELDS = {"pairwise_precision": "precision", "pairwise_recall": "recall"}


def _predict_pairs(
    messages: Sequence[ErrorMessage], decide: Decide, failures: list[str]
) -> tuple[set[Pair], list[bool]]:
    """Predicted-same pairs over all messages, and per pair whether it reached the ambiguous band."""
    index = SignatureIndex(Candidate(str(i), m.text) for i, m in enumerate(messages))
    same: set[Pair] = set()
    ambiguous = [False] * (len(messages) * (len(messages) - 1) // 2)
    for i, message in enumerate(messages):
        try:
            for match in index.rank(message.text, limit=len(index)):
                j = int(match.candidate.key)
                if j <= i:
                    continue
                ambiguous[_pair_slot(i, j, len(messages))] = match.band == "ambiguous"
                verdict = match.band == "match" or (
                    match.band == "ambiguous" and decide(message.text, match)
                )
                if verdict:
                    same.add((i, j))
        except Exception as exc:  # one failing case never aborts the run
            failures.append(f"pairs for {message.id}: {type(exc).__name__}: {exc}")
    return same, ambiguous


def _pair_slot(i: int, j: int, n: int) -> int:
    return i * n - i * (i + 1) // 2 + (j - i - 1)


def _fix_queries(
    dataset: ErrorsDataset, failures: list[str]
) -> tuple[list[int | None], list[bool]]:
    """1-based rank of the right group's held-apart fix for every non-held message; top band flags."""
    by_group: dict[str, list[ErrorMessage]] = defaultdict(list)
    for message in dataset.messages:
        by_group[message.group].append(message)
    held = {group: sorted(items, key=lambda m: m.id)[0] for group, items in by_group.items()}
    index = SignatureIndex(
        Candidate(group, message.text, _fix_of(dataset, group), resolved=True)
        for group, message in sorted(held.items())
    )
    positions: list[int | None] = []
    ambiguous: list[bool] = []
    for message in dataset.messages:
        if held[message.group] is message:
            continue
        try:
            ranked = index.rank(message.text, limit=5)
        except Exception as exc:  # one failing case never aborts the run
            failures.append(f"fix query {message.id}: {type(exc).__name__}: {exc}")
            positions.append(None)
            ambiguous.append(False)
            continue
        keys = [m.candidate.key for m in ranked]
        positions.append(keys.index(message.group) + 1 if message.group in keys else None)
        ambiguous.append(bool(ranked) and ranked[0].band == "ambiguous")
    return positions, ambiguous


def _fix_of(dataset: ErrorsDataset, group: str) -> str:
    found = dataset.groups.get(group)
    return found.fix if found else ""


def offline_decide(text: str, match: Match) -> bool:
    return decide_offline(match)


def run_errors_eval(
    fixtures_dir: Path | None = None,
    decide: Decide | None = None,
    *,
    definition: Path = DEFINITION,
) -> ErrorsEvalResult:
    """Run the matcher over the labelled set; `decide` judges the ambiguous band (swap in an LLM)."""
    gates = dict(DEFAULT_GATES)
    if definition.is_file():
        loaded = load_definition(definition)
        gates = loaded.gates or gates
        fixtures_dir = fixtures_dir or loaded.dataset
    if fixtures_dir is None:
        raise InputError(f"no fixtures folder given and no eval definition at {definition}")
    dataset = load_dataset(fixtures_dir)
    decide = decide or offline_decide
    labels = [m.group for m in dataset.messages]
    failures: list[str] = []
    same, pair_ambiguous = _predict_pairs(dataset.messages, decide, failures)
    positions, ambiguous = _fix_queries(dataset, failures)
    counts = pairwise_counts(labels, same)
    return ErrorsEvalResult(
        messages=len(labels),
        groups=len(set(labels)),
        pairs=counts,
        precision=counts.precision,
        recall=counts.recall,
        grouping_accuracy=grouping_accuracy(labels, same),
        grouping_completeness=grouping_completeness(labels, same),
        fix_at_1=fix_at_k(positions, 1),
        fix_at_5=fix_at_k(positions, 5),
        ambiguous_share=share(ambiguous),
        pair_ambiguous_share=share(pair_ambiguous),
        fix_queries=len(positions),
        gates=gates,
        failures=failures,
    )
