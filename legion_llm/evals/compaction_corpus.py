"""The compaction eval over a corpus of real projects (`eval compaction --corpus DIR`).

A corpus is a folder of projects, each with its `.planning` (../shared/realworld's layout); it
has no ground truth, so it checks the invariant instead: every phase the parser accepts gets a
file (compacted with --force, nothing written), the file passes verify-compaction (presence
and grounding), it is never longer than its originals, and, for the offline engine, the median
phase lands in the target band. For an engine other than offline, the share of phases where
any section fell back to the offline engine's text is reported and gated
(`[corpus] max_fallback_share` in evals/compaction.toml).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.evals.compaction import DEFINITION
from legion_llm.llm.engine import Engine
from legion_llm.memory.phases.find import find_phase, load_phase, phase_folders
from legion_llm.pipeline.compact.run import check_text, compact_phase

DEFAULT_CORPUS_GATES: dict[str, Any] = {
    "max_unverified": 0,
    "max_ratio": 1.0,
    "median_band": [0.30, 0.50],
    "max_fallback_share": 0.05,
}


@dataclass
class PhaseResult:
    name: str
    tokens_original: int = 0
    ratio: float = 0.0
    verified: bool = False
    problems: list[str] = field(default_factory=list)
    sections_from_offline: list[str] = field(default_factory=list)
    engine: str | None = None
    error: str | None = None
    too_small: bool = False  # its summaries are their own compaction: nothing written


@dataclass
class CorpusRun:
    phases: list[PhaseResult]
    gates: dict[str, Any]
    offline: bool
    duration_s: float

    def summary(self) -> dict[str, Any]:
        done = [p for p in self.phases if p.error is None]
        ratios = [p.ratio for p in done if not p.too_small]
        fell = sum(bool(p.sections_from_offline) for p in done)
        return {
            "phases": len(self.phases),
            "errors": len(self.phases) - len(done),
            "verified": sum(p.verified for p in done),
            "ratio_max": max(ratios, default=None),
            "ratio_median": statistics.median(ratios) if ratios else None,
            "fallback_phases": fell,
            "fallback_share": round(fell / len(done), 4) if done else None,
        }

    def failed_gates(self) -> list[str]:
        s, g = self.summary(), self.gates
        failed = []
        if not self.phases:
            failed.append("no phase in the corpus")
        if s["errors"]:
            failed.append(f"{s['errors']} phase(s) not compacted")
        if s["phases"] - s["errors"] - s["verified"] > g["max_unverified"]:
            failed.append(f"{s['phases'] - s['errors'] - s['verified']} phase(s) not verified")
        if s["ratio_max"] is not None and s["ratio_max"] > g["max_ratio"]:
            failed.append(f"a phase compacted to {s['ratio_max']:.2f} of its originals")
        low, high = g["median_band"]
        if self.offline and s["ratio_median"] is not None and not low <= s["ratio_median"] <= high:
            failed.append(f"median ratio {s['ratio_median']:.3f} outside {low}-{high}")
        if not self.offline and (s["fallback_share"] or 0) > g["max_fallback_share"]:
            failed.append(
                f"fallback share {s['fallback_share']:.3f} above {g['max_fallback_share']}"
            )
        return failed

    @property
    def passed(self) -> bool:
        return not self.failed_gates()


def corpus_projects(corpus: Path) -> list[Path]:
    """The projects (folders holding `.planning/`) of a corpus, or of a folder of corpora (one
    level deeper: `--corpus ../shared` reads realworld/ and realworld-c/ alike)."""
    if not corpus.is_dir():
        raise InputError(f"corpus folder {corpus} does not exist")
    found = []
    for child in sorted(p for p in corpus.iterdir() if p.is_dir()):
        if (child / ".planning").is_dir():
            found.append(child)
        else:
            found += [p for p in sorted(child.iterdir()) if (p / ".planning").is_dir()]
    return found


def corpus_phases(corpus: Path) -> list[tuple[str, Path]]:
    """(project/phase, the phase folder) for every phase with plan summaries, in order."""
    found = []
    for project in corpus_projects(corpus):
        planning = project / ".planning"
        name = project.relative_to(corpus).as_posix()
        for folder in phase_folders(planning):
            if load_phase(folder, planning).summaries:
                found.append((f"{name}/{folder.relative_to(planning)}", folder))
    if not found:
        raise InputError(f"no phase with plan summaries under {corpus}")
    return found


def _one(name: str, folder: Path, engine: Engine, today: date) -> PhaseResult:
    root = folder
    while not (root / ".planning").is_dir():
        root = root.parent
    phase = find_phase(root, str(folder))
    result = compact_phase(phase, engine, today=today, force=True, write=False)
    if result.too_small:  # nothing to write: already shorter than any compaction can be
        return PhaseResult(name, result.report.tokens_original, 0.0, True, ["too small"],
                           [], result.engine, too_small=True)  # fmt: skip
    checked = check_text(result.text, result.settled.prepared)
    problems = [p.message for p in checked.grounding] + checked.problems()
    return PhaseResult(name, result.report.tokens_original, result.report.ratio, checked.ok,
                       problems[:5], sorted(n for n, s in result.settled.sections.items()
                                            if s["fallback"]), result.engine)  # fmt: skip


def run_corpus_eval(
    engine: Engine,
    corpus: Path,
    *,
    today: date,
    gates: dict[str, Any] | None = None,
    on_case: Callable[[str], None] | None = None,
) -> CorpusRun:
    """Every phase of the corpus; an exception in one phase becomes that phase's error."""
    started = time.monotonic()
    results = []
    for name, folder in corpus_phases(corpus):
        try:
            results.append(_one(name, folder, engine, today))
        except Exception as exc:  # one failing phase never aborts the run
            results.append(PhaseResult(name, error=f"{type(exc).__name__}: {exc}"))
        if on_case:
            on_case(name)
    offline = engine.name == "offline"
    return CorpusRun(results, {**DEFAULT_CORPUS_GATES, **(gates or corpus_gates())}, offline,
                     round(time.monotonic() - started, 2))  # fmt: skip


def corpus_log(run: CorpusRun, engine: Engine) -> dict[str, Any]:
    """The JSON log of a corpus run: engine, usage, gates, summary, per-phase results."""
    from dataclasses import asdict

    return {
        "eval": "compaction-corpus",
        "engine": engine.meter.engine_label(engine.name),
        "model": engine.model,
        "usage": engine.meter.as_dict(engine.name),
        "gates": run.gates,
        "failed_gates": run.failed_gates(),
        "passed": run.passed,
        "duration_s": run.duration_s,
        "summary": run.summary(),
        "phases": [asdict(p) for p in run.phases],
    }


def corpus_gates(definition: Path = DEFINITION) -> dict[str, Any]:
    import tomllib

    if not definition.is_file():
        return dict(DEFAULT_CORPUS_GATES)
    data = tomllib.loads(definition.read_text(encoding="utf-8"))
    return {**DEFAULT_CORPUS_GATES, **data.get("corpus", {})}
