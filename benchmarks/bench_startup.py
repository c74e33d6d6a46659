"""The costs every call pays (issue 24), each timed against a bare interpreter in the same run.

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--phases N] [--phase-runs N]
                                                 [--gsd PATH] [--plugin-data DIR]

Every case is a whole process of the real `legion-llm` console script, as a user or a hook runs
it, alternated with a bare `python -c pass` of the same interpreter (A B A B ...): the ratio is
taken pair by pair, so a machine that speeds up or slows down during the run moves both. Medians
are printed. The user's cache folder is a temporary one (XDG_CACHE_HOME): each case is run once
untimed first, as every later call finds the cache filled (the cold figures are printed too).

- `compact PHASE --engine offline --force --json` of every real phase under ../shared/realworld
  (copied to a temporary folder first): the median over the phases (each timed --phase-runs
  times, default once, after one untimed run). Goal: at most 2.5x GSD's
  `history-digest` (the median over the same projects) when node and get-shit-done-cc are
  found (`--gsd` names gsd-tools.cjs; else looked for under `npm root -g` and /tmp/*/), else at
  most 0.30 s. The output says which goal it used.
- `outcomes recall --json` on 200 and 100,000 records: at most 10x and 40x the bare interpreter.
- `legion-llm mcp` until the answer to `initialize` arrives: at most 0.4 s (and the first start,
  with an empty cache, for information).
- the plugin's hooks, `hook session-start` and `hook stop`, with the payload Claude Code sends,
  on the demo project and on the demo project with 100,000 outcome records: at most 0.5 s and
  2 s; skipped, saying so, when this checkout has no `hook` command. With --plugin-data DIR (a
  CLAUDE_PLUGIN_DATA where integrations/claude-code/bin/legion-llm has built its venv) they are
  timed through that launcher too, as Claude Code runs them.
- `briefing --json` on 100,000 records, for information.

Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bench_memory import make_project  # noqa: E402
from legion_llm.cli import COMMANDS  # noqa: E402
from legion_llm.memory.phases.find import load_phase, phase_folders  # noqa: E402

SCRIPT = Path(sys.executable).with_name("legion-llm")
BARE = [sys.executable, "-c", "pass"]
REALWORLD = REPO.parent / "shared" / "realworld"
DEMO = REPO / "fixtures" / "demo-project"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip


@dataclass
class Timing:
    seconds: float  # median wall time of the case
    bare: float  # median wall time of the bare interpreter, in the same run
    ratio: float  # median of the pairwise ratios


def wall(run: Callable[[], float | None]) -> float:
    """Seconds of one run: the whole process, or what the run itself measured."""
    start = time.perf_counter()
    measured = run()
    return time.perf_counter() - start if measured is None else measured


class Process:
    """One command as a callable to time; `codes` collects its exit codes."""

    def __init__(self, args: list[str], env: dict[str, str], stdin: str = "",
                 cwd: Path | None = None) -> None:  # fmt: skip
        self.args, self.env, self.stdin, self.cwd = args, env, stdin, cwd
        self.codes: list[int] = []

    def __call__(self) -> float | None:
        done = subprocess.run(self.args, input=self.stdin, capture_output=True, text=True,
                              env=self.env, cwd=self.cwd, check=False)  # fmt: skip
        self.codes.append(done.returncode)
        return None


process = Process


def paired(case: Callable[[], float | None], env: dict[str, str], runs: int) -> Timing:
    bare = process(BARE, env)
    case()  # untimed: the cache filled, as for every later call
    pairs = [(wall(case), wall(bare)) for _ in range(runs)]
    return Timing(
        statistics.median(a for a, _ in pairs),
        statistics.median(b for _, b in pairs),
        statistics.median(a / b for a, b in pairs),
    )


def until_answered(root: Path, env: dict[str, str], method: str) -> Callable[[], float]:
    """`legion-llm mcp` from its start until `method` ("initialize" or "tools/list") is
    answered, as a client starts: initialize, initialized, tools/list (then closed, untimed)."""
    messages: list[dict[str, Any]] = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip

    def run() -> float:
        start = time.perf_counter()
        seconds: dict[str, float] = {}
        with subprocess.Popen(
            [str(SCRIPT), "mcp", "--root", str(root)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=root,
        ) as server:  # fmt: skip
            assert server.stdin is not None and server.stdout is not None
            for message in messages:
                server.stdin.write((json.dumps(message) + "\n").encode())
                server.stdin.flush()
                if "id" in message:
                    answer = json.loads(server.stdout.readline())
                    assert answer["id"] == message["id"] and "result" in answer, answer
                    seconds[message["method"]] = time.perf_counter() - start
            server.stdin.close()
            server.wait()
        return seconds[method]

    return run


def hook_process(command: list[str], event: str, root: Path, env: dict[str, str]) -> Process:
    """A plugin hook as Claude Code runs it: the payload on stdin, the project as cwd."""
    name = {"session-start": "SessionStart", "stop": "Stop"}[event]
    payload = json.dumps({"session_id": "bench", "transcript_path": str(root / "t.jsonl"),
                          "cwd": str(root), "hook_event_name": name})  # fmt: skip
    return Process([*command, "hook", event], env, payload, cwd=root)


def real_phases(copy: Path, limit: int | None) -> list[tuple[Path, Path]]:
    """(project, phase folder) of every real phase that has plan summaries, in the copy."""
    found = []
    for project in sorted(p for p in REALWORLD.iterdir() if (p / ".planning").is_dir()):
        target = copy / project.name
        shutil.copytree(project / ".planning", target / ".planning")
        planning = target / ".planning"
        found += [(target, f) for f in phase_folders(planning) if load_phase(f, planning).summaries]
    return found[:limit] if limit else found


def find_gsd(given: str | None) -> Path | None:
    if given:
        return Path(given)
    if shutil.which("node") is None:
        return None
    tail = Path("get-shit-done-cc/get-shit-done/bin/gsd-tools.cjs")
    places = []
    if shutil.which("npm"):
        done = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=False)
        places.append(Path(done.stdout.strip()))
    places += sorted(Path("/tmp").glob("*/node_modules"))
    return next((p / tail for p in places if (p / tail).is_file()), None)


def compaction(env: dict[str, str], tmp: Path, args: argparse.Namespace) -> list[str]:
    """The real-phase rows; returns what missed its goal."""
    if not REALWORLD.is_dir():
        print("| offline compact of a real phase | skipped: ../shared/realworld is absent | | |")
        return []
    phases = real_phases(tmp / "realworld", args.phases)
    timings = []
    failed = 0
    for project, folder in phases:
        command = Process([str(SCRIPT), "compact", str(folder), "--root", str(project),
                           "--engine", "offline", "--force", "--json"], env)  # fmt: skip
        timings.append(paired(command, env, args.phase_runs))
        failed += command.codes[0] != 0
    seconds = statistics.median(t.seconds for t in timings)
    ratio = statistics.median(t.ratio for t in timings)
    note = f"{len(phases)} phases" + (f", {failed} exited non-zero" if failed else "")
    gsd = find_gsd(args.gsd)
    if gsd is None:
        ok = seconds <= 0.30
        goal = "<= 0.30 s (GSD not found)"
    else:
        projects = sorted({project for project, _ in phases})
        digests = []
        for project in projects:
            digest_run = process(["node", str(gsd), "history-digest", "--cwd", str(project)], env)
            digests.append(paired(digest_run, env, args.phase_runs))
        digest = statistics.median(t.seconds for t in digests)
        print(f"| GSD history-digest, {len(projects)} projects | {digest:.3f} s | "
              f"{statistics.median(t.ratio for t in digests):.1f}x | ({gsd}) |")  # fmt: skip
        ok = seconds <= 2.5 * digest
        goal = f"<= 2.5x GSD = {2.5 * digest:.3f} s"
    print(f"| offline compact of a real phase ({note}) | {seconds:.3f} s | {ratio:.1f}x | "
          f"{goal} {'ok' if ok else 'MISSED'} |")  # fmt: skip
    return [] if ok else ["compact"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7, help="pairs per case")
    parser.add_argument("--phases", type=int, default=None, help="only the first N real phases")
    parser.add_argument("--phase-runs", type=int, default=1, help="pairs per real phase")
    parser.add_argument("--gsd", default=None, help="path to GSD's gsd-tools.cjs")
    parser.add_argument("--plugin-data", type=Path, default=None,
                        help="a CLAUDE_PLUGIN_DATA where bin/legion-llm has built its venv: "
                        "the hooks are timed through the launcher too")  # fmt: skip
    args = parser.parse_args()
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        # as a user runs it: no key, no legion-llm settings, and Python's bytecode cache on (a
        # shell or test runner with PYTHONDONTWRITEBYTECODE would time compiling every module)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "LEGION_")) and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
        env |= {"XDG_CACHE_HOME": str(tmp / "cache"), "LEGION_LLM_ENGINE": "offline"}
        small = make_project(tmp / "small", 200)
        large = make_project(tmp / "large", 100_000)
        demo = tmp / "demo"
        shutil.copytree(DEMO, demo)
        print(f"bare interpreter: {' '.join(BARE)}\n")
        print("| case | median wall | x bare | goal |\n|---|---|---|---|")

        def row(
            name: str, case: Callable[[], float | None], limit: float | None, kind: str
        ) -> None:
            timing = paired(case, env, args.runs)
            if kind == "ratio":
                ok = limit is None or timing.ratio <= limit
                goal = f"<= {limit:g}x" if limit else ""
            else:
                ok = limit is None or timing.seconds <= limit
                goal = f"<= {limit:g} s" if limit else ""
            if limit is not None:
                goal += " ok" if ok else " MISSED"
                if not ok:
                    missed.append(name)
            print(f"| {name} | {timing.seconds:.3f} s | {timing.ratio:.1f}x | {goal} |", flush=True)

        recall = [str(SCRIPT), "outcomes", "recall", "--json", "--root"]
        row("outcomes recall --json, 200 records", process([*recall, str(small)], env), 10, "ratio")
        row("outcomes recall --json, 100,000 records", process([*recall, str(large)], env), 40,
            "ratio")  # fmt: skip
        briefing = [str(SCRIPT), "briefing", "--json", "--root", str(large)]
        row("briefing --json, 100,000 records", process(briefing, env), None, "seconds")
        row("mcp: initialize answered", until_answered(demo, env, "initialize"), 0.4, "seconds")
        row("mcp: tools/list answered", until_answered(demo, env, "tools/list"), None, "seconds")
        for method in ("initialize", "tools/list"):
            colds = [until_answered(demo, {**env, "XDG_CACHE_HOME": str(tmp / f"empty-{method}-{i}")},
                                    method) for i in range(3)]  # fmt: skip
            first = statistics.median(wall(cold) for cold in colds)
            print(f"| mcp: {method} answered, no cache (first start) | {first:.3f} s | | |")
        if "hook" not in COMMANDS:
            print("| hook session-start / hook stop | skipped: this checkout has no "
                  "`legion-llm hook` command (the plugin issue builds it) | | |")  # fmt: skip
        else:
            crowded = tmp / "demo-100k"  # the demo project (phases, learnings) with 100,000 records
            shutil.copytree(DEMO, crowded)
            shutil.copy(large / ".planning/memory/OUTCOMES.md", crowded / ".planning/memory")
            hooks = [("demo project", demo, 0.5), ("demo project, 100,000 records", crowded, 2.0)]
            for event in ("session-start", "stop"):
                for where, root, limit in hooks:
                    hook = hook_process([str(SCRIPT)], event, root, env)
                    row(f"hook {event}, {where}", hook, limit, "seconds")
            if args.plugin_data:  # as Claude Code runs them: through the plugin's launcher
                launcher = [str(REPO / "integrations/claude-code/bin/legion-llm")]
                plugin_env = {**env, "CLAUDE_PLUGIN_DATA": str(args.plugin_data)}
                for event in ("session-start", "stop"):
                    for where, root, limit in hooks:
                        hook = hook_process(launcher, event, root, plugin_env)
                        row(f"hook {event} via bin/legion-llm, {where}", hook, limit, "seconds")
        missed += compaction(env, tmp, args)
    print("\ngoals: " + ("all met" if not missed else "MISSED: " + ", ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
