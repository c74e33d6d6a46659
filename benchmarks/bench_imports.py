"""How many modules the hot paths import: `python -X importtime`, whole process, on the demo project.

    .venv/bin/python benchmarks/bench_imports.py [--source DIR] [--vs DIR] [--list]

The three paths every session pays for: `outcomes recall --json`, the plugin's `hook
session-start` (with the payload Claude Code sends) and `mcp` until `initialize` is answered.
Each count is every module the process imported (the standard library's, the dependencies' and
legion-llm's own, shown apart). `--source DIR` counts the checkout at DIR instead of this one
(run with this interpreter, DIR first on the path); `--vs DIR` counts both and prints the
difference, and exits 1 when this checkout imports more on any path. `--list` names the modules
one side imports and the other does not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo-project"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip


def cases(demo: Path) -> dict[str, tuple[list[str], str]]:
    return {
        "outcomes recall --json": (["outcomes", "recall", "--json", "--root", str(demo)], ""),
        "hook session-start": (["hook", "session-start"],
                               json.dumps({"hook_event_name": "SessionStart", "cwd": str(demo),
                                           "session_id": "bench"})),
        "mcp: initialize answered": (["mcp", "--root", str(demo)],
                                     json.dumps(INITIALIZE) + "\n"),
    }  # fmt: skip


def imported(source: Path, args: list[str], stdin: str, cwd: Path) -> set[str]:
    """Every module one `python -X importtime -m legion_llm ARGS` process imports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    env |= {"PYTHONPATH": str(source), "LEGION_LLM_ENGINE": "offline"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "legion_llm", *args], input=stdin,
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed in {source}: {done.stderr[-500:]}")
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    return {row[2].strip() for row in rows if len(row) == 3} - {"package"}


def counts(source: Path, demo: Path) -> dict[str, set[str]]:
    return {
        name: imported(source, args, stdin, demo) for name, (args, stdin) in cases(demo).items()
    }


def described(modules: set[str]) -> str:
    own = sum(1 for m in modules if m.split(".")[0] == "legion_llm")
    return f"{len(modules)} ({own} legion_llm)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, default=REPO, help="the checkout to count")
    parser.add_argument("--vs", type=Path, default=None, help="a second checkout to compare")
    parser.add_argument("--list", action="store_true", help="name the modules that differ")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        demo = Path(name) / "demo"
        shutil.copytree(DEMO, demo)
        found = counts(args.source.resolve(), demo)
        other = counts(args.vs.resolve(), demo) if args.vs else None
    if other is None:
        print("| path | modules imported |\n|---|---|")
        for case, modules in found.items():
            print(f"| {case} | {described(modules)} |")
        return 0
    print(f"| path | {args.source} | {args.vs} | difference |\n|---|---|---|---|")
    more = False
    for case, modules in found.items():
        difference = len(modules) - len(other[case])
        more = more or difference > 0
        print(f"| {case} | {described(modules)} | {described(other[case])} | {difference:+d} |")
        if args.list:
            print(f"|  only in {args.source}: {', '.join(sorted(modules - other[case]))} | | | |")
            print(f"|  only in {args.vs}: {', '.join(sorted(other[case] - modules))} | | | |")
    return 1 if more else 0


if __name__ == "__main__":
    sys.exit(main())
