"""Whole-process timings of the plain memory commands against the issue's targets.

    .venv/bin/python benchmarks/bench_memory.py [--runs N]

Generates OUTCOMES.md files of 200 and 100,000 records (one row in 25 holds an escaped pipe) in a
temporary folder, runs the real
`legion-llm` console script, and prints the median wall time of each case. Exit status 1 when a
target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

SCRIPT = Path(sys.executable).with_name("legion-llm")
ESCAPED = " \\| and an escaped pipe"
AGENTS = [
    "engineering-backend-architect",
    "engineering-frontend-developer",
    "testing-qa-verification-specialist",
]


def make_project(root: Path, count: int) -> Path:
    memory = root / ".planning" / "memory"
    memory.mkdir(parents=True)
    rows = [
        f"| O-{i:03d} | 2026-{1 + i % 12:02d}-{1 + i % 28:02d} | main | {1 + i % 9} | 0{1 + i % 9}-0{1 + i % 5} "
        f"| {AGENTS[i % 3]} | {['backend', 'frontend', 'quality-review'][i % 3]} | "
        f"{['success', 'partial', 'failed'][i % 7 % 3]} | {1 + i % 5} | api, phase-{i % 9}, team | "
        f"Outcome number {i} with a summary of ordinary length{ESCAPED if i % 25 == 0 else ''} |\n"
        for i in range(1, count + 1)
    ]
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + "".join(rows))
    return root


def median_seconds(args: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([str(SCRIPT), *args], capture_output=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{args} failed: {done.stderr.decode()}")
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    add = ["outcomes", "add", "--phase", "3", "--plan", "03-01", "--agent", "dev", "--outcome",
           "success", "--summary", "benchmark", "--task-type", "backend"]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        small = make_project(Path(tmp) / "small", 200)
        large = make_project(Path(tmp) / "large", 100_000)
        cases = [
            (
                "outcomes recall --json, 200 records",
                ["outcomes", "recall", "--json", "--root", str(small)],
                0.25,
            ),
            (
                "outcomes recall --json, 100,000 records",
                ["outcomes", "recall", "--json", "--root", str(large)],
                1.5,
            ),
            ("outcomes add, 100,000 records", [*add, "--root", str(large)], 0.4),
            ("legion-llm --help", ["--help"], None),
        ]
        failed = False
        print(f"| case | median of {runs} runs | target |\n|---|---|---|")
        for name, args, target in cases:
            seconds = median_seconds(args, runs)
            ok = target is None or seconds <= target
            failed |= not ok
            mark = "" if target is None else f"<= {target * 1000:.0f} ms {'ok' if ok else 'MISSED'}"
            print(f"| {name} | {seconds * 1000:.0f} ms | {mark} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
