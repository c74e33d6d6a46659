"""Mission-learnings eval (issue 7): every mission and phase extracted in order, twice, scored.

Dataset: `fixtures/missions/` (README.md there): one project with an existing
`.mission-control/memory/`, four mission archives and three Legion phases, and `expected.json`
listing, per case and in the order they happened, the learnings a careful engineer would extract.
Definition and gates: `evals/learnings.toml`.

Solver: copy the project to a temporary folder, `learnings extract` every case in order, then
every case again (the second pass must change nothing), then `learnings load` for every case's
goal under several token budgets. Scorers, pure, computed from the files on disk and the plan:

- rule violations: a new or reinforced learning whose file breaks the format (2-5 lowercase
  specific tags on a single-learning file, category, confidence), a new learning that is `high`
  without being a gotcha, a body naming nothing found in the case's input, a wrong source;
- duplicates written: files or reinforcements made by the second pass, new files covering a topic
  the ground truth says should reinforce an existing file, and two new files covering one topic;
- source validity: the share of written or reinforced learnings whose `source` is the case's id;
- coverage: expected learnings matched one-to-one to new or reinforced ones mentioning all of the
  expected words; action accuracy and category accuracy over the matched ones are reported;
- budget violations: `load` sections whose estimate exceeds the budget, or whose `tokens` is not
  the estimate of the section returned.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from legion_llm.errors import InputError
from legion_llm.evals.gates import GatedRun
from legion_llm.llm.engine import Engine
from legion_llm.memory.learnings.load import estimate_tokens, load_for_goal
from legion_llm.memory.learnings.read import (
    CATEGORIES,
    CONFIDENCES,
    Learning,
    read_learnings,
    tag_problems,
)
from legion_llm.memory.learnings.write import confirmed_by
from legion_llm.pipeline.learnings.extract import ExtractResult, Planned, input_names, run_extract
from legion_llm.pipeline.learnings.mission import read_mission
from legion_llm.project import MemoryPaths
from legion_llm.resources import eval_definition

DEFINITION = eval_definition("learnings")  # the wheel's copy, else the repository's


@dataclass(frozen=True)
class Definition:
    dataset: Path
    budgets: tuple[int, ...]
    gates: dict[str, dict[str, float]]


def load_definition(path: Path = DEFINITION) -> Definition:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    dataset = (path.parent / data["dataset"]["path"]).resolve()
    budgets = tuple(int(b) for b in data.get("load", {}).get("budgets", [200, 600, 2000]))
    return Definition(dataset, budgets, {k: dict(v) for k, v in data.get("gates", {}).items()})


def load_expected(folder: Path) -> dict[str, Any]:
    path = folder / "expected.json"
    if not path.is_file():
        raise InputError(f"{folder} has no expected.json")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


# ---------------------------------------------------------------- pure scorers


def mentions_all(text: str, words: list[str]) -> bool:
    low = text.lower()
    return all(word.lower() in low for word in words)


def match_expected(expected: list[dict[str, Any]], produced: list[Planned]) -> list[int | None]:
    """For each expected learning, the index of the produced one covering it (one-to-one)."""
    used: set[int] = set()
    out: list[int | None] = []
    for item in expected:
        hit = next(
            (
                i
                for i, p in enumerate(produced)
                if i not in used and mentions_all(_text(p), item["mentions"])
            ),
            None,
        )
        if hit is not None:
            used.add(hit)
        out.append(hit)
    return out


def action_right(item: dict[str, Any], planned: Planned) -> bool:
    if item["action"] == "new":
        return planned.action == "new"
    return planned.action == "reinforce" and planned.learning.file in item.get("files", [])


def file_violations(planned: Planned, source: str, input_text_ok: bool) -> list[str]:
    learning, where = planned.learning, planned.learning.file
    problems = []
    if not learning.shares_file:
        problems += [f"{where}: {p}" for p in tag_problems(learning.tags)]
    if learning.category not in CATEGORIES or learning.confidence not in CONFIDENCES:
        problems.append(f"{where}: bad category or confidence")
    if planned.action == "new" and learning.confidence == "high" and learning.category != "gotcha":
        problems.append(f"{where}: high confidence on a first sighting")
    if planned.action == "new" and not input_text_ok:
        problems.append(f"{where}: names nothing found in the mission")
    if not confirmed_by(learning, source):
        problems.append(f"{where}: source {learning.source!r}, not {source!r}")
    return problems


# ---------------------------------------------------------------- solver


@dataclass
class CaseResult:
    name: str
    expected: int = 0
    covered: int = 0
    action_right: int = 0
    category_right: int = 0
    new: int = 0
    reinforced: int = 0
    rejected: int = 0
    rule_violations: list[str] = field(default_factory=list)
    duplicates_written: int = 0
    valid_sources: int = 0
    error: str | None = None


def score_case(
    case: dict[str, Any], result: ExtractResult, disk: dict[str, Learning], source_text: str
) -> CaseResult:
    """Score one extraction; `disk` holds the learnings as the files now say them."""
    name = case["source"]
    produced = [p for p in result.plan if p.action in ("new", "reinforce")]
    expected = case["learnings"]
    scored = CaseResult(name, expected=len(expected))
    scored.rejected = sum(p.action == "rejected" for p in result.plan)
    scored.new = sum(p.action == "new" for p in produced)
    scored.reinforced = len(produced) - scored.new
    for item, hit in zip(expected, match_expected(expected, produced), strict=True):
        if hit is None:
            continue
        scored.covered += 1
        scored.action_right += action_right(item, produced[hit])
        scored.category_right += produced[hit].learning.category in item["category"]
        if item["action"] == "reinforce" and produced[hit].action == "new":
            scored.duplicates_written += 1
    scored.duplicates_written += repeats(expected, produced)
    for planned in produced:
        key = f"{planned.learning.file}#{planned.learning.doc}.{planned.learning.section}"
        final = Planned(planned.action, disk.get(key, planned.learning))
        named = bool(input_names(final.learning.body, source_text))
        scored.rule_violations += file_violations(final, name, named)
        scored.valid_sources += confirmed_by(final.learning, name)
    return scored


def _text(planned: Planned) -> str:
    return f"{planned.learning.title}\n{planned.learning.body}"


def repeats(expected: list[dict[str, Any]], produced: list[Planned]) -> int:
    """New files beyond the first that cover the same expected topic."""
    extra = 0
    for item in expected:
        new = [
            p for p in produced if p.action == "new" and mentions_all(_text(p), item["mentions"])
        ]
        extra += max(0, len(new) - 1)
    return extra


def budget_violations(
    learnings: list[Learning], goals: list[str], budgets: tuple[int, ...]
) -> tuple[int, int]:
    """(checks, violations) of `load` over every goal and budget."""
    checks = violations = 0
    for goal in goals:
        for budget in budgets:
            loaded = load_for_goal(learnings, goal, max_tokens=budget)
            checks += 1
            tokens = estimate_tokens(loaded.section)
            violations += loaded.tokens != tokens or tokens > budget
    return checks, violations


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.md"))}


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> int:
    return sum(1 for name, data in after.items() if before.get(name) != data)


# ---------------------------------------------------------------- run


@dataclass
class LearningsEvalRun(GatedRun):
    suite: ClassVar[str] = "learnings"

    cases: list[CaseResult]
    gates: dict[str, dict[str, float]]
    engine: str
    second_pass_changes: int = 0
    load_checks: int = 0
    load_violations: int = 0
    duration_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        ok = [c for c in self.cases if c.error is None]
        expected = sum(c.expected for c in ok)
        covered = sum(c.covered for c in ok)
        produced = sum(c.new + c.reinforced for c in ok)
        return {
            "cases": len(self.cases),
            "errors": len(self.cases) - len(ok),
            "expected_learnings": expected,
            "new": sum(c.new for c in ok),
            "reinforced": sum(c.reinforced for c in ok),
            "rejected": sum(c.rejected for c in ok),
            "covered": covered,
            "coverage": round(covered / expected, 4) if expected else 1.0,
            "action_accuracy": round(sum(c.action_right for c in ok) / covered, 4)
            if covered
            else 1.0,
            "category_accuracy": round(sum(c.category_right for c in ok) / covered, 4)
            if covered
            else 1.0,
            "rule_violations": sum(len(c.rule_violations) for c in ok),
            "duplicates_written": sum(c.duplicates_written for c in ok) + self.second_pass_changes,
            "second_pass_changes": self.second_pass_changes,
            "source_validity": round(sum(c.valid_sources for c in ok) / produced, 4)
            if produced
            else 1.0,
            "load_checks": self.load_checks,
            "budget_violations": self.load_violations,
        }


def run_learnings_eval(
    engine: Engine,
    fixtures: Path | None = None,
    *,
    definition: Path = DEFINITION,
    on_case: Callable[[str], None] | None = None,
) -> LearningsEvalRun:
    loaded = load_definition(definition)
    folder = fixtures or loaded.dataset
    expected = load_expected(folder)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="legion-learnings-eval-") as tmp:
        root = Path(tmp) / "project"
        shutil.copytree(folder / expected["project"], root)
        paths = MemoryPaths(root)
        run = LearningsEvalRun([], loaded.gates, engine.name)
        goals: list[str] = []
        for case in expected["cases"]:
            run.cases.append(_one_case(paths, engine, case, expected["now"], goals))
            if on_case is not None:
                on_case(case["source"])
        before = snapshot(paths.learnings_dir)
        for case in expected["cases"]:
            _quietly(paths, engine, case, expected["now"])
        run.second_pass_changes = changed(before, snapshot(paths.learnings_dir))
        final = read_learnings(paths.learnings_dir).learnings
        run.load_checks, run.load_violations = budget_violations(final, goals, loaded.budgets)
    run.duration_s = round(time.monotonic() - started, 2)
    return run


def _one_case(
    paths: MemoryPaths, engine: Engine, case: dict[str, Any], now: str, goals: list[str]
) -> CaseResult:
    try:
        folder = paths.root / case["path"]
        mission = read_mission(folder)
        goals.append(mission.goal)
        result = run_extract(paths, folder, engine, now=now)
        disk = {
            f"{item.file}#{item.doc}.{item.section}": item
            for item in read_learnings(paths.learnings_dir).learnings
        }
        return score_case(case, result, disk, mission.text)
    except Exception as exc:  # one failing case never aborts the run
        return CaseResult(case["source"], error=f"{type(exc).__name__}: {exc}")


def _quietly(paths: MemoryPaths, engine: Engine, case: dict[str, Any], now: str) -> None:
    try:
        run_extract(paths, paths.root / case["path"], engine, now=now)
    except Exception:  # counted through the files it did (not) change
        return
