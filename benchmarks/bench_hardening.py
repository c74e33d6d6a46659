"""Whole-process timings of the two inputs that were quadratic in the attack pass (issue 17, point 8).

    .venv/bin/python benchmarks/bench_hardening.py [--runs N]

Cases, each run through the real `legion-llm` console script with the offline engine:

- `learnings extract` of a mission whose one task failed 2,000 times with the same error (each
  failure followed by the same retry note): target <= 2 s;
- `distill` over an OUTCOMES.md of 100,000 rows, a quarter of them important successes
  (importance 4-5) spread over four task types and linked by shared tags: target <= 5 s.

Prints the median wall time of each case; exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory import median_seconds

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

TASK_TYPES = ["backend", "frontend", "database", "infra"]


def make_mission(root: Path, failures: int) -> Path:
    folder = root / ".mission-control" / "missions" / "archive" / "m-retries"
    (folder / "tasks").mkdir(parents=True)
    state = {"id": "m-retries", "goal": "import customers from csv", "status": "completed"}
    (folder / "mission.json").write_text(json.dumps(state))
    error = "Error: connect ECONNREFUSED 127.0.0.1:5432 at TCPConnectWrap (src/db/pool.ts:41:9)"
    note = "Start the database with `docker compose up -d db` before `pnpm test` runs"
    events = [{"event": "task_started", "task": "T1", "agent": "implementer"}]
    for attempt in range(1, failures + 1):
        events.append({"event": "task_failed", "task": "T1", "attempt": attempt, "error": error})
        events.append({"event": "retry", "task": "T1", "attempt": attempt + 1, "note": note})
    events.append({"event": "task_completed", "task": "T1"})
    (folder / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    task = {"id": "T1", "name": "Import customers", "result": {"summary": "Imported 40k rows."}}
    (folder / "tasks" / "T1.json").write_text(json.dumps(task))
    return folder


def make_outcomes(root: Path, count: int) -> None:
    memory = root / ".planning" / "memory"
    memory.mkdir(parents=True)
    rows = []
    for i in range(1, count + 1):
        important = i % 4 == 0
        outcome = "success" if important or i % 3 else "failed"
        rows.append(
            f"| O-{i:03d} | 2026-01-{1 + i % 28:02d} | main | {1 + i // 8} | "
            f"{1 + i // 8:02d}-0{1 + i % 5} | agent-{i % 40} | {TASK_TYPES[(i // 4) % 4]} | "
            f"{outcome} | {4 + i % 2 if important else 2} | topic-{i % 3000}, area-{i % 97} | "
            f"Outcome {i}: made the thing work with approach {i % 500} |\n"
        )
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + "".join(rows))


def median_fresh(args: list[str], runs: int, fresh: Path, template: Path) -> float:
    """The median of `runs` timed runs, each on a fresh copy of `template` (a second run over the
    same folder would find its work already done)."""
    times = []
    for _ in range(runs):
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(template, fresh)
        times.append(median_seconds(args, 1))
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    failed = False
    print(f"| case | median of {runs} runs | target |\n|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mission = make_mission(base / "extract", 2_000).relative_to(base / "extract")
        make_outcomes(base / "distill", 100_000)
        work = base / "work"
        cases = [
            (
                "learnings extract, 2,000 repeated failure events",
                ["learnings", "extract", str(work / mission), "--engine", "offline",
                 "--root", str(work), "--today", "2026-04-05", "--json"],
                base / "extract",
                2.0,
            ),
            (
                "distill, 100,000 rows (25,000 important successes)",
                ["distill", "--engine", "offline", "--root", str(work), "--today", "2026-04-05",
                 "--json"],
                base / "distill",
                5.0,
            ),
        ]  # fmt: skip
        for name, args, template, target in cases:
            seconds = median_fresh(args, runs, work, template)
            ok = seconds <= target
            failed |= not ok
            print(f"| {name} | {seconds:.2f} s | <= {target:.0f} s {'ok' if ok else 'MISSED'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
