"""`legion-llm demo`: the whole flow on a copy of the bundled demo project, offline by default."""

from __future__ import annotations

import shutil
import tempfile
from datetime import date
from pathlib import Path

from legion_llm.cli.render import rich_print, table
from legion_llm.config import load_settings
from legion_llm.memory.catalog import DEFAULT_CATALOG
from legion_llm.memory.outcomes import read_outcomes
from legion_llm.memory.prune import prune
from legion_llm.memory.recall import RecallQuery, agent_scores, briefing, recall
from legion_llm.memory.store import OutcomeInput, add_outcome
from legion_llm.project import MemoryPaths
from legion_llm.resources import demo_project_dir

DEMO_TODAY = date(2026, 6, 15)  # the bundled history is dated around this day


def _step(number: int, title: str) -> None:
    rich_print(f"\n[bold cyan]{number}. {title}[/bold cyan]")


def _copy_project() -> Path:
    target = Path(tempfile.mkdtemp(prefix="legion-llm-demo-"))
    shutil.copytree(demo_project_dir(), target, dirs_exist_ok=True)
    return target


def store_build_outcomes(paths: MemoryPaths) -> None:
    _step(1, "Store the outcomes of a finished build (plan 04-03 and the phase review)")
    catalog = paths.root / DEFAULT_CATALOG
    build = [
        OutcomeInput(phase="4", plan="04-03", agent="engineering-security-engineer",
                     outcome="success", summary="Audit export signed with the hash chain head",
                     tags=["audit-log", "security"], branch="main"),
        OutcomeInput(phase="4", plan="review", agent="testing-qa-verification-specialist",
                     outcome="success", summary="Phase 4 review passed in 2 cycle(s). 3 blockers fixed.",
                     task_type="quality-review", review_cycles=2, blockers=3,
                     tags=["review", "review-passed", "2-cycles"], branch="main"),
    ]  # fmt: skip
    for item in build:
        stored = add_outcome(paths, item, today=DEMO_TODAY, catalog_file=catalog)
        r = stored.record
        rich_print(
            f"  stored {r.id}: {r.agent} → {r.outcome}, task type {r.task_type} "
            f"(importance {r.importance})"
        )


def show_recall(paths: MemoryPaths) -> None:
    _step(2, "Recall: what do we know about the audit log and about backend work?")
    records = read_outcomes(paths.outcomes).records
    found = recall(records, RecallQuery(tags=["audit-log"], limit=5), DEMO_TODAY)
    table("recall --tags audit-log", ["ID", "Date", "Agent", "Outcome", "Score", "Summary"],
          [[s.record.id, s.record.date, s.record.agent, s.record.outcome, s.score,
            s.record.summary] for s in found])  # fmt: skip
    scores = agent_scores(records, ["backend"], DEMO_TODAY)
    table("agent-scores --task-types backend", ["agent", "memory_score", "total_tasks"],
          [[s["agent"], s["memory_score"], s["total_tasks"]] for s in scores])  # fmt: skip


def show_briefing(paths: MemoryPaths) -> None:
    _step(3, "Session briefing")
    data = briefing(read_outcomes(paths.outcomes), DEMO_TODAY)
    rich_print(
        f"  {data['total_records']} records; top agents: "
        + ", ".join(f"{a['agent']} ({a['total_tasks']})" for a in data["top_agents"])
    )
    for item in data["recent_outcomes"][:3]:
        rich_print(f"  recent: {item['id']} {item['summary']} (score {item['decay_score']})")


def run_prune(paths: MemoryPaths) -> None:
    _step(4, "Prune old, low-importance outcomes to ARCHIVE.md (the current phase is kept)")
    report = prune(paths, load_settings(paths.settings), DEMO_TODAY)
    for line in report.text().splitlines():
        rich_print(f"  {line}")


def run_demo() -> None:
    root = _copy_project()
    paths = MemoryPaths(root)
    rich_print(f"[bold]legion-llm demo[/bold] on a copy of the demo project in {root}")
    rich_print(
        f"(offline; 'today' is {DEMO_TODAY} so the bundled history scores the same every run)"
    )
    store_build_outcomes(paths)
    show_recall(paths)
    show_briefing(paths)
    run_prune(paths)
    rich_print("\n[bold green]Done.[/bold green] Open the files:")
    for path in sorted(paths.memory_dir.glob("*.md")):
        rich_print(f"  {path}")
