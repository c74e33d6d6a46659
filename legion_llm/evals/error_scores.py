"""Pure scorers of the error-signature eval: pairwise counts, clustering, fix@k, shares.

No I/O and no matcher: each takes labels and predictions and returns a number.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Pair = tuple[int, int]


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


def exact_collisions(fingerprints: Sequence[str | None], labels: Sequence[str]) -> list[str]:
    """Pairs of different groups (`a = b`, sorted) whose messages share a fingerprint; None means
    the message has no fingerprint strong enough to decide a match on its own."""
    groups: dict[str, set[str]] = defaultdict(set)
    for print_, label in zip(fingerprints, labels, strict=True):
        if print_ is not None:
            groups[print_].add(label)
    found = {
        f"{a} = {b}"
        for labels_ in groups.values()
        for a in sorted(labels_)
        for b in sorted(labels_)
        if a < b
    }
    return sorted(found)


def reliability(pairs: Iterable[tuple[float, bool]], bins: int = 10) -> list[dict[str, float]]:
    """Calibration per confidence bin ([0, 0.1), ..., [0.9, 1.0]): how many candidates fall in
    it, their mean confidence and the share that were right; empty bins are left out."""
    counts = [0] * bins
    total = [0.0] * bins
    right = [0] * bins
    for value, ok in pairs:
        b = min(bins - 1, max(0, int(value * bins)))
        counts[b] += 1
        total[b] += value
        right[b] += int(ok)
    return [
        {"low": b / bins, "high": (b + 1) / bins, "count": counts[b],
         "mean_confidence": round(total[b] / counts[b], 4), "share_right": round(right[b] / counts[b], 4)}
        for b in range(bins)
        if counts[b]
    ]  # fmt: skip
