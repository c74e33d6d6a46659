"""The distillation properties over many generated phases: the suite's check, run longer.

    .venv/bin/python benchmarks/bench_distill_properties.py [--examples 400] [--seed 0]

tests/pipeline/test_distill_properties.py runs 100 generated phases with a fixed seed in the
suite; this runs as many as asked (a fresh seed each time unless one is given), distils each
offline from its summaries alone, and prints one block per phase that breaks a property (raises,
a declared entry not written, a row the second reader or the eval's gates refuse, a second run
that writes, a dry run that writes or differs), with the folder kept for a look, then a count
of the problems by kind. Exit status 1 when any phase breaks one.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed

from benchmarks.explore_generated import explore
from tests.pipeline.test_distill_properties import check_phase
from tests.strategies.summaries import SummaryPhase, summary_phases


def kind_of(problem: str) -> str:
    """A problem's kind: the words before its first `: ` (and, for the second reader, what it
    found), without the ids."""
    bracket = problem.find("]: ")
    head, _, rest = (problem[: bracket + 1], "", "") if bracket > 0 else problem.partition(": ")
    if head.endswith("second reader"):
        head += ": " + " ".join(rest.split(":")[0].split()[:4])
    return re.sub(r"\b\d+(?:-\d+)?\b", "N", head)


def shrink(text: str, examples: int, seed: int | None) -> int:
    """Shrink to a small phase showing a problem that contains `text` (hypothesis prints it)."""

    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(phase=summary_phases())
    def reduce(phase: SummaryPhase) -> None:
        found = [p for p in check_phase(phase) if text in p]
        assert not found, "\n".join(found)

    if seed is not None:
        reduce = fixed_seed(seed)(reduce)
    try:
        reduce()
    except AssertionError as shown:
        print("\n".join(getattr(shown, "__notes__", [])))  # the falsifying example
        print(shown)
        return 1
    print(f"no problem containing {text!r} in {examples} generated phases")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--quiet", action="store_true", help="only the counts, no phase blocks")
    parser.add_argument("--shrink", metavar="TEXT", default=None,
                        help="instead: find a phase with a problem containing TEXT and let "
                        "hypothesis shrink it to a small one, printed with its summaries")  # fmt: skip
    args = parser.parse_args(argv)
    if args.shrink is not None:
        return shrink(args.shrink, args.examples, args.seed)
    count, failed, keep = explore(
        summary_phases(), lambda phase, folder: check_phase(phase, keep=folder),
        examples=args.examples, seed=args.seed, prefix="legion-llm-distill-properties-",
    )  # fmt: skip
    kinds: Counter[str] = Counter()
    for folder, found in failed:
        kinds.update({kind_of(p) for p in found})
        if not args.quiet:
            print(f"{folder}:")
            print("\n".join(f"  {line[:400]}" for line in found[:8]))
    for kind, n in kinds.most_common():
        print(f"{n:5d} phases: {kind}")
    print(f"{count} generated phases, {len(failed)} broke a property"
          + (f" (kept under {keep})" if failed else ""))  # fmt: skip
    if not failed:
        shutil.rmtree(keep, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
