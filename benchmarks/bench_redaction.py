"""Redaction stays linear in the number of secrets in one text (issue 25, point 9).

    .venv/bin/python benchmarks/bench_redaction.py [--sizes 1000,4000,16000,64000] [--runs 3]

Cases, each at every size N:

- `scan`: `legion-llm scan` over an OUTCOMES.md of N rows, each holding one GitHub token (was
  0.3 / 1.3 / 12 / 265 s at 1k / 4k / 16k / 64k);
- `extract`: `legion-llm learnings extract` (offline engine) of a mission whose one task failed
  N times, each failure holding one token (was 2 / 12 / 97 s at 1k / 4k / 16k);
- `pem`: `legion-llm scan` over an OUTCOMES.md of N rows, each quoting a private key's BEGIN
  line with no END line (issue 34: each such line looked up to 200,000 characters ahead for
  its END line, about 4 ms a line at 4k).

Both run through the real console script. Prints the median wall time of each case and size,
and the ratio of each time to the one before it: linear growth is a ratio near the size ratio
(4), quadratic near 16. Exit status 1 when a ratio passes 8 (twice linear).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

CLI = str(Path(sys.executable).with_name("legion-llm"))
ALNUM = string.ascii_letters + string.digits


def token(rng: random.Random) -> str:
    return "gh" + "p_" + "".join(rng.choice(ALNUM) for _ in range(36))  # built, never written


BEGIN = "-----BEGIN RSA " + "PRIVATE KEY-----"  # in two pieces, as every secret here


def make_outcomes(root: Path, count: int, *, pem: bool = False) -> None:
    rng = random.Random(25)
    memory = root / ".planning" / "memory"
    memory.mkdir(parents=True)
    rows = [
        f"| O-{i:03d} | 2026-01-{1 + i % 28:02d} | main | 1 | 01-01 | dev | backend | failed | 3 | "
        + (
            f"ci | deploy log cut at {BEGIN} |\n"
            if pem
            else f"ci | push failed with token {token(rng)} |\n"
        )
        for i in range(1, count + 1)
    ]
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + "".join(rows))


def make_mission(root: Path, failures: int) -> Path:
    rng = random.Random(26)
    folder = root / ".mission-control" / "missions" / "archive" / "m-tokens"
    (folder / "tasks").mkdir(parents=True)
    state = {"id": "m-tokens", "goal": "publish the package", "status": "completed"}
    (folder / "mission.json").write_text(json.dumps(state))
    events = [{"event": "task_started", "task": "T1", "agent": "implementer"}]
    for attempt in range(1, failures + 1):
        error = f"Error: remote rejected push with token {token(rng)} (HTTP 403)"
        events.append({"event": "task_failed", "task": "T1", "attempt": attempt, "error": error})
    events.append({"event": "task_completed", "task": "T1"})
    (folder / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    task = {"id": "T1", "name": "Publish", "result": {"summary": "Published 1.2.0."}}
    (folder / "tasks" / "T1.json").write_text(json.dumps(task))
    return folder


def timed(args: list[str], template: Path, fresh: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.copytree(template, fresh)
        started = time.perf_counter()
        subprocess.run(args, capture_output=True, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,4000,16000,64000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", default="scan,extract,pem")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for case in options.cases.split(","):
            previous = None
            for size in sizes:
                template, fresh = base / f"{case}-{size}", base / "run"
                template.mkdir()
                if case in ("scan", "pem"):
                    make_outcomes(template, size, pem=case == "pem")
                    args = [CLI, "scan", "--root", str(fresh)]
                else:
                    mission = make_mission(template, size).relative_to(template)
                    args = [CLI, "learnings", "extract", str(fresh / mission), "--engine",
                            "offline", "--root", str(fresh), "--today", "2026-06-15"]  # fmt: skip
                seconds = timed(args, template, fresh, options.runs)
                ratio = "" if previous is None else f"  x{seconds / previous:.1f}"
                print(f"{case:8} {size:>6} secrets: {seconds:7.2f} s{ratio}", flush=True)
                if previous is not None and seconds > 1.0 and seconds / previous > 8:
                    failed = True
                previous = seconds
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
