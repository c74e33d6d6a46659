"""Pattern-distillation eval (issue 7): every outcome history distilled twice, scored, gated.

Dataset: `fixtures/distill/<history>/` (README.md there): `.planning/memory/OUTCOMES.md` (and
sometimes PATTERNS.md, ARCHIVE.md) with `expected.json`, the hand-written ground truth; one
`CATALOG.md` for all. Definition and gates: `evals/distill.toml`.

Solver: copy the history to a temporary folder, run `distill` with the chosen engine, then run it
again (the second run must write nothing). Scorers, all pure and computed from the PATTERNS.md
rows actually written against the ground truth (not against the pipeline's own candidate list):

- rule violations: a written row citing an outcome the ground truth rules out (`should_not`) or
  one that does not exist, empty or non-lowercase tags, an empty Pattern, Context or Reuse
  Criteria;
- duplicates written: rows written by the second run, rows repeating an existing pattern
  (`near_duplicates`), and two rows of one run resting on the same plan outcome;
- Source-ID validity: the share of written rows whose every Source ID exists in OUTCOMES.md or
  ARCHIVE.md;
- coverage: expected patterns matched one-to-one (greedily, in order) to written rows sharing a
  Source ID; `unexpected` counts written rows that match none (reported, not gated).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

from legion_llm.errors import InputError
from legion_llm.evals.gates import GatedRun, read_expected
from legion_llm.llm.engine import Engine
from legion_llm.memory.knowledge.read import PATTERNS, read_knowledge
from legion_llm.memory.outcomes.distill_candidates import is_review
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.pipeline.distill import DistillResult, run_distill
from legion_llm.project import MemoryPaths
from legion_llm.records import split_list
from legion_llm.resources import eval_definition

DEFINITION = eval_definition("distill")  # the wheel's copy, else the repository's
_O_ID = re.compile(r"\bO-\d{3,}\b")


@dataclass(frozen=True)
class Definition:
    dataset: Path
    catalog: Path
    today: date
    gates: dict[str, dict[str, float]]


def load_definition(path: Path = DEFINITION) -> Definition:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    dataset = (path.parent / data["dataset"]["path"]).resolve()
    return Definition(
        dataset,
        (dataset / data["dataset"].get("catalog", "CATALOG.md")).resolve(),
        date.fromisoformat(str(data["dataset"]["today"])),
        {name: dict(bound) for name, bound in data.get("gates", {}).items()},
    )


@dataclass(frozen=True)
class Case:
    name: str
    folder: Path
    expected: dict[str, Any]


def load_cases(folder: Path) -> list[Case]:
    if not folder.is_dir():
        raise InputError(f"fixtures folder {folder} does not exist")
    cases = [
        Case(p.name, p, read_expected(p / "expected.json"))
        for p in sorted(folder.iterdir())
        if (p / "expected.json").is_file()
    ]
    if not cases:
        raise InputError(f"no outcome histories (folders with expected.json) in {folder}")
    return cases


# ---------------------------------------------------------------- pure scorers


def sources_of(row: dict[str, Any]) -> list[str]:
    return _O_ID.findall(str(row.get("source", "")))


def row_violations(row: dict[str, Any], known: set[str], ruled_out: set[str]) -> list[str]:
    problems = []
    ids = sources_of(row)
    if not ids:
        problems.append("no source ID")
    problems += [f"cites {i}, ruled out" for i in ids if i in ruled_out]
    problems += [f"cites {i}, which does not exist" for i in ids if i not in known]
    tags = row.get("tags") or []
    tags = split_list(tags) if isinstance(tags, str) else list(tags)
    if not tags or any(t != t.lower() for t in tags):
        problems.append("tags empty or not lowercase")
    for name in ("pattern", "context", "reuse_criteria"):
        if not str(row.get(name, "")).strip():
            problems.append(f"empty {name}")
    return problems


def match_expected(
    expected: Sequence[Sequence[str]], written: Sequence[Sequence[str]]
) -> list[int | None]:
    """For each expected source set, the index of the written row covering it (one-to-one)."""
    used: set[int] = set()
    matches: list[int | None] = []
    for wanted in expected:
        hit = next(
            (i for i, got in enumerate(written) if i not in used and set(wanted) & set(got)), None
        )
        if hit is not None:
            used.add(hit)
        matches.append(hit)
    return matches


def overlapping_rows(written: Sequence[Sequence[str]], reviews: set[str]) -> int:
    """Pairs of written rows resting on the same plan outcome (review rows may back several)."""
    plans = [set(ids) - reviews for ids in written]
    return sum(
        1 for i in range(len(plans)) for j in range(i + 1, len(plans)) if plans[i] & plans[j]
    )


def near_duplicates_written(
    near: Sequence[dict[str, Any]], written: Sequence[Sequence[str]]
) -> int:
    return sum(1 for item in near for got in written if set(item["sources"]) & set(got))


# ---------------------------------------------------------------- solver


@dataclass
class CaseResult:
    name: str
    expected: int = 0
    covered: int = 0
    written: int = 0
    skipped: int = 0
    unexpected: int = 0
    rule_violations: list[str] = field(default_factory=list)
    duplicates_written: int = 0
    second_run_written: int = 0
    valid_sources: int = 0
    near_duplicates_caught: int = 0
    error: str | None = None


def solve_and_score(case: Case, engine: Engine, definition: Definition) -> CaseResult:
    if "_invalid" in case.expected:
        raise InputError(case.expected["_invalid"])
    if not (case.folder / ".planning/memory/OUTCOMES.md").is_file():
        raise InputError(f"{case.name} has no .planning/memory/OUTCOMES.md")
    result = CaseResult(case.name, expected=len(case.expected.get("should", [])))
    with tempfile.TemporaryDirectory(prefix="legion-distill-eval-") as tmp:
        root = Path(tmp) / case.name
        shutil.copytree(case.folder, root)
        paths = MemoryPaths(root)
        first, second = _distil(paths, engine, definition), _distil(paths, engine, definition)
        outcomes = [*read_outcomes(paths.outcomes).records, *read_outcomes(paths.archive).records]
        rows = [r.to_dict() for r in read_knowledge(PATTERNS, paths.patterns).records]
    _score(case, result, first.written, first.skipped, second.written, outcomes, rows)
    return result


def _distil(paths: MemoryPaths, engine: Engine, definition: Definition) -> DistillResult:
    return run_distill(
        paths, engine, today=definition.today, catalog_path=definition.catalog, branch="main"
    )


def _score(
    case: Case,
    result: CaseResult,
    written: list[dict[str, Any]],
    skipped: list[dict[str, Any]],
    again: list[dict[str, Any]],
    outcomes: list[Any],
    rows: list[dict[str, Any]],
) -> None:
    known = {o.id for o in outcomes if o.id}
    reviews = {o.id for o in outcomes if o.id and is_review(o)}
    ruled_out = set(case.expected.get("should_not", []))
    new_ids = {str(w.get("id")) for w in written}
    stored = [r for r in rows if r["id"] in new_ids]  # the rows as PATTERNS.md now holds them
    got = [sources_of(r) for r in stored]
    for row in stored:
        result.rule_violations += [
            f"{row['id']}: {p}" for p in row_violations(row, known, ruled_out)
        ]
    near = case.expected.get("near_duplicates", [])
    matches = match_expected([s["sources"] for s in case.expected.get("should", [])], got)
    result.written, result.skipped = len(stored), len(skipped)
    result.covered = sum(m is not None for m in matches)
    result.unexpected = len(stored) - result.covered
    result.second_run_written = len(again)
    result.duplicates_written = (
        len(again) + near_duplicates_written(near, got) + overlapping_rows(got, reviews)
    )
    result.valid_sources = sum(1 for ids in got if ids and set(ids) <= known)
    result.near_duplicates_caught = (
        sum(1 for s in skipped if "near-duplicate" in s["reason"]) if near else 0
    )


# ---------------------------------------------------------------- run


@dataclass
class DistillEvalRun(GatedRun):
    suite: ClassVar[str] = "distill"

    cases: list[CaseResult]
    gates: dict[str, dict[str, float]]
    engine: str
    duration_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        ok = [c for c in self.cases if c.error is None]
        expected = sum(c.expected for c in ok)
        written = sum(c.written for c in ok)
        return {
            "histories": len(self.cases),
            "errors": len(self.cases) - len(ok),
            "expected_patterns": expected,
            "written": written,
            "skipped": sum(c.skipped for c in ok),
            "covered": sum(c.covered for c in ok),
            "coverage": round(sum(c.covered for c in ok) / expected, 4) if expected else 1.0,
            "unexpected": sum(c.unexpected for c in ok),
            "rule_violations": sum(len(c.rule_violations) for c in ok),
            "duplicates_written": sum(c.duplicates_written for c in ok),
            "second_run_written": sum(c.second_run_written for c in ok),
            "source_id_validity": round(sum(c.valid_sources for c in ok) / written, 4)
            if written
            else 1.0,
            "near_duplicates_caught": sum(c.near_duplicates_caught for c in ok),
        }


def run_distill_eval(
    engine: Engine,
    fixtures: Path | None = None,
    *,
    definition: Path = DEFINITION,
    on_case: Callable[[str], None] | None = None,
) -> DistillEvalRun:
    loaded = load_definition(definition)
    cases = load_cases(fixtures or loaded.dataset)
    started = time.monotonic()
    results = []
    for case in cases:
        try:
            results.append(solve_and_score(case, engine, loaded))
        except Exception as exc:  # one failing case never aborts the run
            results.append(CaseResult(case.name, error=f"{type(exc).__name__}: {exc}"))
        if on_case is not None:
            on_case(case.name)
    run = DistillEvalRun(results, loaded.gates, engine.name, round(time.monotonic() - started, 2))
    return run
