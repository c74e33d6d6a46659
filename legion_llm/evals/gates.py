"""Gates shared by the eval suites whose definitions read `{name: {min|max: value, offline_only: 1}}`."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar


def failed_gates(
    summary: dict[str, Any], gates: dict[str, dict[str, float]], *, offline: bool
) -> list[str]:
    """`{name: {min|max: value, offline_only: 1}}` -> the gates the summary misses."""
    failed = []
    if summary.get("errors"):
        failed.append(f"errors: {summary['errors']} case(s) failed to run")
    for name, bound in gates.items():
        if bound.get("offline_only") and not offline:
            continue
        value = summary.get(name)
        if value is None:
            failed.append(f"{name}: not measured")
        elif "min" in bound and value < bound["min"]:
            failed.append(f"{name}: {value} < {bound['min']}")
        elif "max" in bound and value > bound["max"]:
            failed.append(f"{name}: {value} > {bound['max']}")
    return failed


class GatedRun:
    """What a suite's run dataclass shares: gate checks and the JSON log's shape."""

    suite: ClassVar[str]
    cases: list[Any]
    gates: dict[str, dict[str, float]]
    engine: str
    duration_s: float

    def summary(self) -> dict[str, Any]:
        raise NotImplementedError

    def failed_gates(self) -> list[str]:
        if not self.cases:
            return ["no cases: nothing was scored"]
        return failed_gates(self.summary(), self.gates, offline=self.engine == "offline")

    @property
    def passed(self) -> bool:
        return not self.failed_gates()

    def as_dict(self) -> dict[str, Any]:
        return {
            "eval": self.suite,
            "engine": self.engine,
            "gates": self.gates,
            "summary": self.summary(),
            "failed_gates": self.failed_gates(),
            "passed": self.passed,
            "duration_s": self.duration_s,
            "cases": [asdict(c) for c in self.cases],
        }


def read_expected(path: Path) -> dict[str, Any]:
    """A case's expected.json; a broken one becomes {"_invalid": why}, so the case fails alone."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {"_invalid": f"{path.name}: {exc}"}
    return data if isinstance(data, dict) else {"_invalid": f"{path.name} is not a JSON object"}
