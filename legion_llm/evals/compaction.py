"""Compaction eval (issue 5): every fixture phase compacted, scored by pure functions, gated.

Dataset: `fixtures/phases/<case>/` (README.md there): a `.planning` project and `expected.json`,
the hand-written ground truth. Definition and gates: `evals/compaction.toml`.

Solver: find the phase, compact it with the chosen engine (`--force`, nothing written).
Scorers, all pure: requirement-id recall and path recall against the ground truth (not against
our own extraction), invented ids and paths, length ratio, section completeness, plan coverage,
whether the deterministic extraction equals the ground truth exactly, and the grounding of the
written file read back as verify-compaction reads it (ungrounded verdicts, placeholder cells,
unknown plans, deliverables without overlap with their plan). One failing case is recorded
and never aborts the run.

Gates: recall 1.0, no invention, exact extraction, each grounding count 0 (every engine), and
for the offline engine a ratio inside
the band on phases of at least `ratio_min_tokens` tokens. A phase whose originals are mostly
fenced command output (more than `log_share_max` of their tokens) only has to stay under the
band's top: the spec tells the compactor to drop such output, so no lower bound applies.
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.evals.gates import read_expected
from legion_llm.llm.engine import Engine
from legion_llm.llm.tokens import count_tokens
from legion_llm.memory.phases.extract import ids_present, path_present
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.ground import Problem
from legion_llm.pipeline.compact.render import SECTIONS
from legion_llm.pipeline.compact.run import compact_phase, ground_text, prepare
from legion_llm.resources import eval_definition

DEFINITION = eval_definition("compaction")  # the wheel's copy, else the repository's
DEFAULT_GATES: dict[str, Any] = {
    "id_recall": 1.0,
    "path_recall": 1.0,
    "max_invented": 0,
    "max_ungrounded_verdicts": 0,
    "max_placeholder_cells": 0,
    "max_unknown_plans": 0,
    "max_deliverables_without_overlap": 0,
    "extraction_exact": True,
    "ratio_band": [0.30, 0.50],
    "ratio_min_tokens": 1500,
    "log_share_max": 0.5,
}


@dataclass(frozen=True)
class Case:
    name: str
    root: Path
    expected: dict[str, Any]


def load_cases(fixtures: Path) -> list[Case]:
    if not fixtures.is_dir():
        raise InputError(f"fixtures folder {fixtures} does not exist")
    cases = []
    for folder in sorted(p for p in fixtures.iterdir() if (p / "expected.json").is_file()):
        cases.append(Case(folder.name, folder, read_expected(folder / "expected.json")))
    if not cases:
        raise InputError(f"no fixture phases (folders with expected.json) in {fixtures}")
    return cases


def load_definition(path: Path = DEFINITION) -> tuple[Path | None, dict[str, Any]]:
    if not path.is_file():
        return None, dict(DEFAULT_GATES)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    dataset = data.get("dataset", {}).get("path")
    return ((path.parent / dataset).resolve() if dataset else None,
            {**DEFAULT_GATES, **data.get("gates", {})})  # fmt: skip


# ---------------------------------------------------------------- pure scorers


def recall(expected: Sequence[str], found: Callable[[str], bool]) -> float:
    return sum(1 for item in expected if found(item)) / len(expected) if expected else 1.0


def id_recall(expected_ids: Sequence[str], text: str) -> float:
    return recall(expected_ids, lambda rid: ids_present(rid, text))


def path_recall(expected_paths: Sequence[str], text: str) -> float:
    return recall(expected_paths, lambda path: path_present(path, text))


def section_completeness(text: str) -> float:
    headings = [h.strip().lower() for h in re.findall(r"^## (.+)$", text, re.MULTILINE)]
    found = sum(1 for s in SECTIONS if any(h.startswith(s.lower()) for h in headings))
    return found / len(SECTIONS)


def plan_coverage(plan_ids: Sequence[str], text: str) -> float:
    return recall(
        plan_ids, lambda pid: re.search(rf"(?<![\w.]){re.escape(pid)}(?!\w)", text) is not None
    )


def fenced_share(texts: Sequence[str], count: Callable[[str], int]) -> float:
    """Share of the tokens that sit inside fenced code blocks (command output, logs, diffs)."""
    total = sum(count(t) for t in texts)
    fenced = sum(count("\n".join(re.findall(r"^```.*?^```", t, re.M | re.S))) for t in texts)
    return fenced / total if total else 0.0


def ratio_gate(ratio: float, tokens: int, log_share: float, gates: dict[str, Any]) -> str | None:
    """Why the ratio fails the offline band, or None."""
    low, high = gates["ratio_band"]
    if tokens < gates["ratio_min_tokens"]:
        return None
    if log_share > gates["log_share_max"]:
        return None if ratio <= high else f"ratio {ratio:.3f} above {high} (log-dominated phase)"
    return None if low <= ratio <= high else f"ratio {ratio:.3f} outside {low}-{high}"


GROUNDING_SCORES = {
    "ungrounded_verdicts": ("max_ungrounded_verdicts", "ungrounded verdict(s)"),
    "placeholder_cells": ("max_placeholder_cells", "placeholder cell(s)"),
    "unknown_plans": ("max_unknown_plans", "unknown plan(s)"),
    "deliverables_without_overlap": ("max_deliverables_without_overlap",
                                     "deliverable(s) without overlap with their plan"),
}  # fmt: skip


def grounding_scores(problems: Sequence[Problem]) -> dict[str, int]:
    """Counts of what a written file claims without support (pure: from its problems)."""
    return {
        "ungrounded_verdicts": sum(p.kind == "ungrounded-verdict" for p in problems),
        "placeholder_cells": sum(p.kind == "placeholder" for p in problems),
        "unknown_plans": sum(p.kind == "unknown-plan" for p in problems),
        "deliverables_without_overlap": sum(
            p.section == "deliverables" and p.kind in ("ungrounded-text", "wrong-plan")
            for p in problems
        ),
    }


def gate_failures(scores: dict[str, Any], gates: dict[str, Any], offline: bool) -> list[str]:
    failed = []
    for name, (gate, label) in GROUNDING_SCORES.items():
        if scores.get(name, 0) > gates[gate]:
            failed.append(f"{scores[name]} {label}")
    if scores["id_recall"] < gates["id_recall"]:
        failed.append(f"id recall {scores['id_recall']:.3f}")
    if scores["path_recall"] < gates["path_recall"]:
        failed.append(f"path recall {scores['path_recall']:.3f}")
    if scores["invented"] > gates["max_invented"]:
        failed.append(f"{scores['invented']} invented id(s)/path(s)")
    if gates["extraction_exact"] and not scores["extraction_exact"]:
        failed.append("extraction differs from expected.json")
    if offline:
        why = ratio_gate(scores["ratio"], scores["tokens_original"], scores["log_share"], gates)
        failed += [why] if why else []
    return failed


# ---------------------------------------------------------------- solver and runner


@dataclass
class CaseResult:
    name: str
    phase: str
    scores: dict[str, Any] = field(default_factory=dict)
    failed_gates: list[str] = field(default_factory=list)
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    engine: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and not self.failed_gates


def extraction_exact(case: Case, facts: Any, phase: Any) -> bool:
    exp = case.expected
    plans = [{"id": p.id, "name": p.name, "status": p.status, "outcome": p.outcome,
              "agent": p.agent} for p in facts.plans]  # fmt: skip
    return (
        set(facts.requirement_ids) == set(exp["requirement_ids"])
        and set(facts.paths) == set(exp["paths"])
        and plans == exp["plans"]
        and [p.name for _, p in phase.summaries] == exp["summaries"]
        and str(phase.folder.relative_to(case.root)) == exp["phase_dir"]
    )


def solve_and_score(case: Case, engine: Engine, today: date, gates: dict[str, Any]) -> CaseResult:
    exp = case.expected
    phase = find_phase(case.root, exp["phase"])
    prep = prepare(phase)
    result = compact_phase(phase, engine, today=today, force=True, write=False)
    text = result.text
    summaries = [d.text for d in prep.docs]
    scores: dict[str, Any] = {
        "id_recall": id_recall(exp["requirement_ids"], text),
        "path_recall": path_recall(exp["paths"], text),
        "invented": len(result.report.invented()),
        "ratio": result.report.ratio,
        "tokens_original": result.report.tokens_original,
        "tokens_output": result.report.tokens_output,
        "log_share": round(fenced_share(summaries, count_tokens), 3),
        "section_completeness": section_completeness(text),
        "plan_coverage": plan_coverage([p["id"] for p in exp["plans"]], text),
        "extraction_exact": extraction_exact(case, prep.facts, phase),
        "repaired": len(result.repaired),
        "chunks": result.chunks,
        **grounding_scores(ground_text(text, prep)),
        "sections_from_offline": sorted(
            name for name, s in result.settled.sections.items() if s["fallback"]
        ),
    }
    offline = all(a["engine"] == "offline" for a in result.answers)
    out = CaseResult(case.name, exp["phase"], scores, gate_failures(scores, gates, offline))
    out.engine = result.engine
    return out


@dataclass
class EvalRun:
    cases: list[CaseResult]
    gates: dict[str, Any]
    duration_s: float

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    def summary(self) -> dict[str, Any]:
        scored = [c for c in self.cases if c.error is None]
        ratios = [c.scores["ratio"] for c in scored]
        return {
            "cases": len(self.cases),
            "passed": sum(c.passed for c in self.cases),
            "errors": sum(c.error is not None for c in self.cases),
            "id_recall_min": min((c.scores["id_recall"] for c in scored), default=None),
            "path_recall_min": min((c.scores["path_recall"] for c in scored), default=None),
            "invented_total": sum(c.scores["invented"] for c in scored),
            "ratio_min": min(ratios, default=None),
            "ratio_max": max(ratios, default=None),
            **{f"{name}_total": sum(c.scores.get(name, 0) for c in scored)
               for name in GROUNDING_SCORES},
            "cases_with_offline_sections": sum(bool(c.scores.get("sections_from_offline"))
                                               for c in scored),
        }  # fmt: skip


def run_compaction_eval(
    engine: Engine,
    fixtures: Path | None = None,
    *,
    today: date,
    definition: Path = DEFINITION,
    on_case: Callable[[str], None] | None = None,
) -> EvalRun:
    """Run every case; an exception in one case becomes that case's error."""
    dataset, gates = load_definition(definition)
    fixtures = fixtures or dataset
    if fixtures is None:
        raise InputError(f"no --fixtures folder given and no eval definition at {definition}")
    started = time.monotonic()
    results = []
    for case in load_cases(fixtures):
        before = engine.meter.total.copy()
        try:
            result = solve_and_score(case, engine, today, gates)
        except Exception as exc:  # one failing case never aborts the run
            result = CaseResult(case.name, str(case.expected.get("phase")),
                                error=f"{type(exc).__name__}: {exc}")  # fmt: skip
        after = engine.meter.total
        result.usage = {k: round(v - getattr(before, k), 6) for k, v in vars(after).items()}
        results.append(result)
        if on_case:
            on_case(case.name)
    return EvalRun(results, gates, round(time.monotonic() - started, 2))


def eval_log(
    run: EvalRun, engine: Engine, *, prompt_sha256: str, commit: str | None
) -> dict[str, Any]:
    """The JSON log: engine, model, prompt hash, usage, gates, per-case scores, git commit."""
    return {
        "eval": "compaction",
        "engine": engine.meter.engine_label(engine.name),
        "model": engine.model,
        "prompts": {"compact-phase": prompt_sha256},
        "git_commit": commit,
        "usage": engine.meter.as_dict(engine.name),
        "gates": run.gates,
        "passed": run.passed,
        "duration_s": run.duration_s,
        "summary": run.summary(),
        "cases": [asdict(c) | {"passed": c.passed} for c in run.cases],
    }
