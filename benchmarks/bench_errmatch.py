"""Time error-signature matching against 10,000 stored signatures (issue 22: <= 50 ms a query).

    .venv/bin/python benchmarks/bench_errmatch.py [--size 10000] [--queries 200] [--seed 6]

Builds `--size` synthetic but varied signatures from the labelled messages in fixtures/errors
(paths, numbers, quoted names, hex addresses and identifiers replaced by random values, so few are
exact duplicates), indexes them once (timed separately), then times what `errors match` does in
process for `--queries` queries (fixture messages as they are and freshly varied ones): rank the
candidates and give the answer with its calibrated confidences (`confidence.answered`). Prints
median and p95 milliseconds; exit status 1 when the median exceeds 50 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.memory.signatures.confidence import DEPTH, answered
from legion_llm.memory.signatures.match import Candidate, SignatureIndex, features

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "errors"
TARGET_MS = 50.0
WORDS = (
    "alpha",
    "orders",
    "billing",
    "auth",
    "cache",
    "queue",
    "report",
    "users",
    "sync",
    "ledger",
)


def messages() -> list[str]:
    texts = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        if path.name != "groups.jsonl":
            texts += [json.loads(line)["text"] for line in path.read_text().splitlines() if line]
    return texts


def vary(text: str, rng: random.Random) -> str:
    """The same error with other values: numbers, hex, quoted names, path segments."""

    def word() -> str:
        return rng.choice(WORDS) + "".join(rng.choices(string.ascii_lowercase, k=rng.randint(0, 4)))

    text = re.sub(r"0x[0-9a-f]+", lambda _: hex(rng.getrandbits(40)), text)
    text = re.sub(r"(?<![\w.])\d+(?![\w.])", lambda _: str(rng.randint(0, 99999)), text)
    text = re.sub(r"'([a-z_]\w{2,20})'", lambda _: f"'{word()}'", text)
    text = re.sub(r"/([a-z]{3,12})/", lambda _: f"/{word()}/", text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    base = messages()
    store = [
        Candidate(f"E-{i:05d}", vary(rng.choice(base), rng), resolved=i % 3 == 0)
        for i in range(args.size)
    ]
    started = time.perf_counter()
    index = SignatureIndex(store)
    build = time.perf_counter() - started
    queries = [
        rng.choice(base) if i % 2 else vary(rng.choice(base), rng) for i in range(args.queries)
    ]
    index.rank(queries[0])  # warm-up
    times = []
    for query in queries:
        started = time.perf_counter()
        answered(features(query), index.rank(query, limit=DEPTH))
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    median = statistics.median(times)
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"signatures: {len(index)}  index build: {build:.1f} s  queries: {len(times)}")
    print(
        f"rank + answer: median {median:.1f} ms  p95 {p95:.1f} ms  max {times[-1]:.1f} ms  (target median <= {TARGET_MS:.0f} ms)"
    )
    return 1 if median > TARGET_MS else 0


if __name__ == "__main__":
    sys.exit(main())
