"""The distillation eval over a corpus of real projects (`eval distill --corpus DIR`, issue 33).

A corpus is a folder of projects, each with its `.planning` (../shared/realworld's layout), or
a folder of such corpora. It has no ground truth, so it checks what the sources declare and
what no written pattern may be. Each project is copied to a temporary folder (the corpus is
never written) and distilled from every phase's summaries (and OUTCOMES.md when it has one),
then distilled again. Scored from the PATTERNS.md rows actually written, by readers of the raw
files independent of the pipeline's own checks:

- recall: of the entries every `patterns-established:` list declares (plans that did not fail),
  the share whose words appear, in order, in a written row's Pattern or Context;
- not patterns: written rows whose Pattern is a status or a file list (gate 0);
- unsupported: written rows citing a plan or outcome that does not exist, or naming an entity
  (a name, number, path, identifier: memory/entities.py) that none of the cited sources states
  (gate 0);
- near-duplicates: written rows on the topic of a row written before them or of a pattern the
  project already had (the topic matcher; gate 0);
- second-run rows: rows a second run writes (gate 0).

Reported per project and in total.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import LegionError
from legion_llm.evals import distill_oracle as oracle
from legion_llm.llm.engine import Engine
from legion_llm.memory.entities import new_entities
from legion_llm.memory.knowledge.read import PATTERNS, read_knowledge
from legion_llm.memory.phases.find import (
    PLAN_FILE_RE,
    SINGLE_PLAN_FILE_RE,
    folder_slug,
    load_phase,
    phase_folders,
)
from legion_llm.memory.phases.patterns import established, source_of
from legion_llm.memory.phases.statements import token_line
from legion_llm.memory.signatures.topics import TopicIndex
from legion_llm.pipeline.distill import pattern_terms, run_distill
from legion_llm.pipeline.distill_sources import not_a_pattern, phase_names
from legion_llm.project import MemoryPaths
from legion_llm.records import split_list

GATES: dict[str, dict[str, float]] = {
    "not_patterns": {"max": 0},
    "unsupported": {"max": 0},
    "near_duplicates": {"max": 0},
    "second_run_written": {"max": 0},
    # a second reader written apart from the pipeline's rules (distill_oracle.py): a status, a
    # file list, a name no cited source states, or a near-copy of an earlier row
    "oracle_flags": {"max": 0},
    # offline: a declared entry is taken whole, so every one of a plan that did not fail is
    # written or quoted (measured 302 of 302 on ../shared/realworld*, 2026-12-07); a model may
    # merge or reword entries, so its recall is reported, not gated
    "recall": {"min": 1.0, "offline_only": 1},
}
_O_ID = re.compile(r"\bO-\d{3,}\b")
_ROW = re.compile(r"^\|\s*(O-\d{3,})\s*\|.*$", re.M)


@dataclass
class ProjectScore:
    name: str
    phases: int = 0
    phases_declaring: int = 0
    declared: int = 0
    recalled: int = 0
    written: int = 0
    skipped: int = 0
    not_patterns: int = 0
    unsupported: int = 0
    near_duplicates: int = 0
    second_run_written: int = 0
    oracle_flags: int = 0  # rows the independent reader (distill_oracle.py) refuses
    problems: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass
class CorpusDistillRun:
    projects: list[ProjectScore]
    offline: bool
    duration_s: float
    gates: dict[str, dict[str, float]] = field(default_factory=lambda: dict(GATES))

    def summary(self) -> dict[str, Any]:
        total: dict[str, Any] = {"projects": len(self.projects)}
        for name in ("phases", "phases_declaring", "declared", "recalled", "written", "skipped",
                     "not_patterns", "unsupported", "near_duplicates", "second_run_written",
                     "oracle_flags"):  # fmt: skip
            total[name] = sum(getattr(p, name) for p in self.projects)
        total["errors"] = sum(p.error is not None for p in self.projects)
        total["recall"] = (
            round(total["recalled"] / total["declared"], 4) if total["declared"] else 1.0
        )
        return total

    def failed_gates(self) -> list[str]:
        summary = self.summary()
        failed = [] if summary["errors"] == 0 else [f"errors {summary['errors']} > 0"]
        for name, bound in self.gates.items():
            if bound.get("offline_only") and not self.offline:
                continue
            value = summary[name]
            if "max" in bound and value > bound["max"]:
                failed.append(f"{name} {value} > {bound['max']}")
            if "min" in bound and value < bound["min"]:
                failed.append(f"{name} {value} < {bound['min']}")
        return failed

    @property
    def passed(self) -> bool:
        return not self.failed_gates()

    def as_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "gates": self.gates,
            "passed": self.passed,
            "failed_gates": self.failed_gates(),
            "projects": [asdict(p) for p in self.projects],
            "duration_s": round(self.duration_s, 2),
        }


def projects_of(corpus: Path) -> list[Path]:
    from legion_llm.evals.compaction_corpus import corpus_projects

    return corpus_projects(corpus)


def run_distill_corpus(engine: Engine, corpus: Path, today: date) -> CorpusDistillRun:
    started = time.monotonic()
    projects = projects_of(corpus)
    scores = [_project(p, p.relative_to(corpus).as_posix(), engine, today) for p in projects]
    return CorpusDistillRun(scores, engine.name == "offline", time.monotonic() - started)


def _copy(project: Path, target: Path) -> Path:
    """The project's `.planning` copied, writable (the corpus's files may be read-only)."""
    root = target / "project"
    for path in sorted((project / ".planning").rglob("*")):
        dest = root / ".planning" / path.relative_to(project / ".planning")
        if path.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    return root


def _project(project: Path, name: str, engine: Engine, today: date) -> ProjectScore:
    score = ProjectScore(name)
    with tempfile.TemporaryDirectory(prefix="distill-corpus-") as tmp:
        root = _copy(project, Path(tmp))
        planning = root / ".planning"
        folders = []
        for folder in phase_folders(planning):
            try:
                if load_phase(folder, planning).summaries:
                    folders.append(folder)
            except LegionError:
                continue
        score.phases = len(folders)
        texts = _summaries(folders)
        for folder in folders:
            entries = [e for _, plan, text in texts.get(folder, []) for e in _declared(plan, text)]
            score.phases_declaring += bool(entries)
            score.declared += len(entries)
        if not folders:
            return score
        paths = MemoryPaths(root)
        before = read_knowledge(PATTERNS, paths.patterns).records
        specs = [f.relative_to(root).as_posix() for f in folders]
        try:
            first = run_distill(paths, engine, today=today, phases=specs)
            second = run_distill(paths, engine, today=today, phases=specs)
            if (root / ".planning/memory/OUTCOMES.md").is_file():  # the outcome route too
                run_distill(paths, engine, today=today)
        except LegionError as exc:
            score.error = str(exc)
            return score
        score.second_run_written = len(second.written)
        score.skipped = len(first.skipped)
        rows = read_knowledge(PATTERNS, paths.patterns).records[len(before) :]
        score.written = len(rows)
        _score_rows(score, rows, before, texts, root)
    return score


def _summaries(folders: list[Path]) -> dict[Path, list[tuple[Path, str, str]]]:
    found: dict[Path, list[tuple[Path, str, str]]] = {}
    for folder in folders:
        for path in sorted(folder.iterdir()):
            match = PLAN_FILE_RE.match(path.name)
            single = SINGLE_PLAN_FILE_RE.match(path.name)
            if match and (match.group("kind") or match.group("kind2")).upper() == "SUMMARY":
                plan = f"{match.group('phase')}-{match.group('plan') or match.group('plan2')}"
            elif single and single.group(2).upper() == "SUMMARY":
                plan = single.group(1)
            else:
                continue
            text = read_summary(path)
            found.setdefault(folder, []).append((path, plan, text))
    return found


def read_summary(path: Path) -> str:
    """A summary's text as this eval reads it (a byte-order mark and CRLF dropped)."""
    return path.read_text(encoding="utf-8-sig", errors="replace").replace("\r\n", "\n")


def as_cited(folder: Path, text: str) -> str:
    """What a row citing this summary may name: its text, its declared entries as YAML reads
    them (a quoted scalar decoded) and its phase folder's topic."""
    return source_of("", "", "", text, folder_slug(folder.name)).cited_text


def _declared(plan: str, text: str) -> list[str]:
    """The entries a summary declares, for a plan that did not fail (a failed plan's entries
    are not what worked)."""
    if source_of(plan, "", "", text).outcome == "failed":
        return []
    return established(text)


def oracle_flag(values: dict[str, str], said: str, known: list[str], earlier: list[str]) -> str:
    """What the independent reader refuses in a written row, else ""."""
    pattern = values.get("pattern", "")
    if oracle.looks_like_status(pattern):
        return f"a status: {pattern[:80]}"
    if oracle.looks_like_file_list(pattern):
        return f"a file list: {pattern[:80]}"
    text = " ".join(values.get(k, "") for k in ("pattern", "context", "reuse_criteria"))
    missing = oracle.unstated(text, said, known)
    if missing:
        return f"names no cited source states: {', '.join(missing[:5])}"
    copy = oracle.near_duplicate(pattern, earlier)
    return f"a near-copy of {copy[:60]!r}" if copy else ""


def _score_rows(score: ProjectScore, rows: list[Any], before: list[Any],
                texts: dict[Path, list[tuple[Path, str, str]]], root: Path) -> None:  # fmt: skip
    by_plan: dict[str, list[str]] = {}
    for folder, items in texts.items():
        for _, plan, text in items:
            by_plan.setdefault(plan, []).append(as_cited(folder, text))
    outcomes = root / ".planning/memory/OUTCOMES.md"
    lines = {m.group(1): m.group(0) for m in _ROW.finditer(outcomes.read_text(encoding="utf-8"))
             } if outcomes.is_file() else {}  # fmt: skip
    written_lines = []
    index_items = [(f"existing {r.id}", pattern_terms(r.title, r.tags)) for r in before]
    earlier = [r.values.get("pattern", "") for r in before]
    for row in rows:
        values = row.values
        pattern, context = values.get("pattern", ""), values.get("context", "")
        written_lines.append(token_line(f"{pattern} {context}"))
        if not_a_pattern(pattern):
            score.not_patterns += 1
            score.problems.append(f"{row.id}: {not_a_pattern(pattern)}: {pattern[:80]}")
        ids = [s for s in split_list(values.get("source", "")) if s]
        sources = [t for i in ids for t in by_plan.get(i, [])] + [
            lines[i] for i in ids if i in lines
        ]
        missing = [i for i in ids if i not in by_plan and i not in lines]
        said = "\n".join(sources)
        fields = ("pattern", "context", "reuse_criteria")
        known = [*ids, *phase_names(ids)]
        new = [e for k in fields for e in new_entities(values.get(k, ""), said, known)]
        if missing or new or not ids:
            score.unsupported += 1
            score.problems.append(
                f"{row.id}: unsupported ({', '.join(missing + new) or 'no source'})"
            )
        flag = oracle_flag(values, said, known, earlier)
        if flag:
            score.oracle_flags += 1
            score.problems.append(f"{row.id}: second reader: {flag}")
        earlier.append(pattern)
        terms = pattern_terms(row.title, row.tags)
        if index_items:
            best = TopicIndex(index_items).best(terms)
            if best is not None and best.same:
                score.near_duplicates += 1
                score.problems.append(f"{row.id}: near-duplicate of {best.key}")
        index_items.append((f"row {row.id}", terms))
    for items in texts.values():
        for _, plan, text in items:
            for entry in _declared(plan, text):
                words = token_line(entry)
                if any(f" {words} " in f" {line} " for line in written_lines):
                    score.recalled += 1
                else:
                    score.problems.append(f"{plan}: not written: {entry[:80]}")
