"""The Stop hook stays linear in the number of phase folders (issue 34, point 5).

    .venv/bin/python benchmarks/bench_stop_hook.py [--sizes 250,1000,4000] [--runs 3]

At each size N: a project of N phase folders, each complete in the ROADMAP (a checklist line and
a `### Phase N:` heading with its requirements) with one plan summary worth compacting, so the
hook names all N. Times `legion-llm hook stop` through the real console script (what Claude Code
runs after every answer) and prints the median wall time, the ratio to the size before it
(linear growth is near the size ratio, 4; quadratic near 16) and the length of the message (it is
capped). Exit status 1 when a ratio passes 8 (twice linear) or the message passes its cap.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from legion_llm.app.commands.hooks import MAX_STOP_CHARS

CLI = str(Path(sys.executable).with_name("legion-llm"))
SUMMARY = "---\nphase: {n}\nplan: 01\n---\n# Phase {n} Plan 01 Summary\n\n" + "Done. " * 80 + "\n"


def make_project(root: Path, count: int) -> None:
    phases = root / ".planning" / "phases"
    phases.mkdir(parents=True)
    checklist, details = [], []
    for n in range(1, count + 1):
        folder = phases / f"{n:02d}-feature-{n}"
        folder.mkdir()
        (folder / f"{n:02d}-01-PLAN.md").write_text(f"# Plan {n}-01\n", encoding="utf-8")
        (folder / f"{n:02d}-01-SUMMARY.md").write_text(SUMMARY.format(n=n), encoding="utf-8")
        checklist.append(f"- [x] Phase {n}: Feature {n} (1 plan)")
        details.append(f"### Phase {n}: Feature {n}\n**Requirements**: F{n}-01\n**Plans**: 1\n")
    roadmap = "# Roadmap\n\n## Phases\n\n" + "\n".join(checklist) + "\n\n## Phase Details\n\n"
    (root / ".planning" / "ROADMAP.md").write_text(roadmap + "\n".join(details), encoding="utf-8")


def time_stop(root: Path, runs: int) -> tuple[float, int]:
    payload = json.dumps({"cwd": str(root), "hook_event_name": "Stop"})
    times, length = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([CLI, "hook", "stop"], input=payload, capture_output=True,
                              text=True, cwd=root, timeout=3600)  # fmt: skip
        times.append(time.perf_counter() - start)
        assert done.returncode == 0 and done.stdout, done.stderr
        length = len(json.loads(done.stdout)["systemMessage"])
    return statistics.median(times), length


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="250,1000,4000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    failed = False
    before: float | None = None
    print(f"{'folders':>8} {'seconds':>8} {'ratio':>6} {'message chars':>14}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            make_project(Path(tmp), size)
            seconds, length = time_stop(Path(tmp), args.runs)
        ratio = seconds / before if before else None
        failed |= (ratio or 0) > 8 or length > MAX_STOP_CHARS
        shown = f"{ratio:6.1f}" if ratio else "     -"
        print(f"{size:>8} {seconds:8.2f} {shown} {length:>14}", flush=True)
        before = seconds
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
