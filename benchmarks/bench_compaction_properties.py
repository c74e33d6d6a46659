"""The compaction properties over many generated phases: the suite's check, run longer.

    .venv/bin/python benchmarks/bench_compaction_properties.py [--examples 400] [--seed 0]
        [--careless]

tests/test_compaction_properties.py runs 40 generated phases with a fixed seed in the suite;
this runs as many as asked (a fresh seed each time unless one is given), compacts each offline
through the CLI as a user does, and prints one line per phase that breaks a property (its own
verify, the independent oracle, the generator's truth), with the folder kept for a look. Exit
status 1 when any phase breaks one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.explore_generated import explore
from tests.oracle.compaction import check
from tests.strategies.phases import PhaseSpec, phase_specs, write_phase
from tests.test_compaction_properties import (
    compact_and_check,
    compacted_file,
    run,
    truth_problems,
)


def problems_of(spec: PhaseSpec, folder: Path) -> list[str]:
    phase = write_phase(spec, folder)
    code, out, err = run("compact", phase.phase_arg, "--engine", "offline", "--force",
                         "--root", phase.root)  # fmt: skip
    if code != 0:
        return [f"compact exit {code}: {err.strip()[:200]}"]
    if out.startswith("Nothing to compact"):
        big = phase.originals_chars >= 1_200
        return ["too small, though the summaries are not"] if big else []
    text = compacted_file(phase).read_text(encoding="utf-8")
    code, out, err = run("verify-compaction", phase.phase_arg, "--root", phase.root)
    found = [f"verify: {out.strip()}"] if code else []
    found += [f"oracle: {v}" for v in check(phase.phase_dir, phase.root / ".planning",
                                            phase.phase_number, text)]  # fmt: skip
    return found + [f"truth: {v}" for v in truth_problems(phase, text)]


def careless_problems(spec: PhaseSpec, folder: Path) -> list[str]:
    """The suite's careless-model property on one phase."""
    try:
        compact_and_check(spec, engine="anthropic", keep=folder)
    except AssertionError as broken:
        return [f"careless: {' '.join(str(broken).split())[:300]}"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--careless", action="store_true",
                        help="through the careless stand-in model and the real SDK (loopback)")  # fmt: skip
    args = parser.parse_args(argv)
    problems = careless_problems if args.careless else problems_of
    count, failed, keep = explore(phase_specs(), problems, examples=args.examples, seed=args.seed,
                                  prefix="legion-llm-properties-")  # fmt: skip
    for folder, found in failed:
        print(f"{folder}:")
        print("\n".join(f"  {line}" for line in found[:8]))
    print(f"{count} generated phases, {len(failed)} broke a property"
          + (f" (kept under {keep})" if failed else ""))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
