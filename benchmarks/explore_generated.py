"""The loop both property benchmarks run (bench_compaction_properties.py,
bench_distill_properties.py): draw `examples` generated inputs from a hypothesis strategy (a
fresh seed unless one is given), hold a check on each in a folder of its own under one kept
temporary folder, and keep the folders of those that broke a property."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fixed_seed
from hypothesis.strategies import SearchStrategy

T = TypeVar("T")
Failed = list[tuple[Path, list[str]]]


def explore(
    strategy: SearchStrategy[T],
    check: Callable[[T, Path], list[str]],
    *,
    examples: int,
    seed: int | None,
    prefix: str,
) -> tuple[int, Failed, Path]:
    """(how many were drawn, each failing input's folder and problems, the kept folder)."""
    keep = Path(tempfile.mkdtemp(prefix=prefix))
    failed: Failed = []
    count = [0]

    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])  # fmt: skip
    @given(value=strategy)
    def run(value: Any) -> None:
        count[0] += 1
        folder = keep / f"phase-{count[0]}"
        found = check(value, folder)
        if found:
            failed.append((folder, found))
        else:
            shutil.rmtree(folder, ignore_errors=True)

    if seed is not None:
        run = fixed_seed(seed)(run)
    run()
    return count[0], failed, keep
