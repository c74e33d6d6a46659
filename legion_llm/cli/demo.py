"""`legion-llm demo`: the whole flow on a copy of the bundled demo project.

Store the outcomes of a finished build, recall and brief, compact a completed phase and verify it,
distil patterns, match a new error to a known fix, extract and load mission learnings, prune. The
LLM steps use the offline engine unless `--engine` (or LEGION_LLM_ENGINE) asks for another:
`--engine auto` takes Claude when a key is set, else the user's logged-in Claude Code. The steps
call the library (the use cases, or the memory and pipeline functions under them), so what the
demo prints is what the commands would find and write.

`--root DIR` makes the copy in DIR (new or empty) instead of a new temporary folder; `--today`
replaces the day the bundled history is dated around; with `--json` the walkthrough goes to
stderr and stdout holds one object: {root, today, engine, files, usage}.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.app.commands import distill, learnings, outcomes, phases
from legion_llm.app.context import Common, parse_today
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, check_engine, open_session
from legion_llm.cli.common import finish
from legion_llm.cli.render import echo, rich_print, stderr_line, table
from legion_llm.errors import InputError
from legion_llm.memory.catalog import DEFAULT_CATALOG
from legion_llm.memory.knowledge.read import ERRORS, read_knowledge
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.outcomes.recall import RecallQuery, agent_scores, recall
from legion_llm.memory.outcomes.store import OutcomeInput, add_outcome
from legion_llm.memory.phases.find import find_phase
from legion_llm.project import MemoryPaths
from legion_llm.resources import demo_project_dir

PROBLEMS = ("missing_ids", "missing_paths", "invented_ids", "invented_paths")
DEMO_TODAY = date(2026, 6, 15)  # the bundled history is dated around this day
MISSION = Path(".mission-control/missions/archive/mission-2026-06-12-audit-export")
GOAL = "Add a CSV export of the audit log for the auditors"
NEW_ERROR = """\
Traceback (most recent call last):
  File "/app/ledger/statements/query.py", line 88, in fetch_page
    rows = cur.execute(PAGE_SQL, params).fetchall()
psycopg.errors.QueryCanceled: canceling statement due to statement timeout
CONTEXT:  while executing query on relation "postings\""""


@dataclass
class Demo:
    root: Path
    session: LLMSession
    today: date = DEMO_TODAY

    @property
    def paths(self) -> MemoryPaths:
        return MemoryPaths(self.root)

    @property
    def common(self) -> Common:
        return Common(self.root, self.today, False, stderr_line)

    @property
    def engine(self) -> str:
        name, model = self.session.engine.name, self.session.config.model
        if name == "anthropic":
            return f"Claude ({model})"
        if name == "claude-code":
            return f"your logged-in Claude Code ({model})"
        return "the offline engine"


def _step(number: int, title: str) -> None:
    rich_print(f"\n[bold cyan]{number}. {title}[/bold cyan]")


def _say(text: str) -> None:
    from rich.markup import escape

    rich_print(f"  {escape(text)}")


@contextmanager
def _progress(text: str) -> Iterator[None]:
    """A spinner on a terminal while a step that may call Claude runs (nothing in a pipe)."""
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield


def _target(root: Path | None) -> tuple[Path, Path | None]:
    """Where the copy goes, checked (`root`: new or empty, else a new temporary folder), and the
    outermost folder this run makes for it (None: `root` existed, empty)."""
    if root is None:
        target = Path(tempfile.mkdtemp(prefix="legion-llm-demo-"))
        return target, target
    target = root.expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise InputError(f"{target} is a file; the demo copies its project into a new or "
                         "empty folder")  # fmt: skip
    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} is not empty; the demo copies its project into a new or "
                         "empty folder")  # fmt: skip
    made = None
    for folder in (target, *target.parents):
        if folder.exists():
            break
        made = folder
    return target, made


@contextmanager
def _copy_project(root: Path | None) -> Iterator[Path]:
    """The bundled project copied into `root` (new or empty), else into a new temporary folder.
    A run that fails removes what it made: the folders it created, or, in a `root` that existed
    (empty), what it put there; a run that succeeds leaves the copy for the user to try."""
    target, made = _target(root)
    try:
        shutil.copytree(demo_project_dir(), target, dirs_exist_ok=True)
        yield target
    except BaseException:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        else:
            for child in target.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        raise


def command_here() -> str:
    """The command that runs this same legion-llm from any folder: `legion-llm` when that name
    on PATH is this program, else its absolute path, else (`python -m legion_llm`, or a caller
    inside Python) this interpreter's absolute path with `-m legion_llm`."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name in ("legion-llm", "legion-llm.exe"):
        script = Path(argv0).absolute()
        on_path = shutil.which("legion-llm")
        if on_path is not None and Path(on_path).resolve() == script.resolve():
            return "legion-llm"
        if script.is_file():
            return shlex.quote(str(script))
    return f"{shlex.quote(str(Path(sys.executable).absolute()))} -m legion_llm"


def store_build_outcomes(demo: Demo) -> None:
    _step(1, "Store the outcomes of a finished build (plan 04-03 and the phase review)")
    catalog = demo.root / DEFAULT_CATALOG
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
        r = add_outcome(demo.paths, item, today=demo.today, catalog_file=catalog).record
        _say(
            f"stored {r.id}: {r.agent} → {r.outcome}, task type {r.task_type} "
            f"(importance {r.importance})"
        )


def show_recall(demo: Demo) -> None:
    _step(2, "Recall: what do we know about the audit log and about backend work?")
    records = read_outcomes(demo.paths.outcomes).records
    found = recall(records, RecallQuery(tags=["audit-log"], limit=5), demo.today)
    table("recall --tags audit-log", ["ID", "Date", "Agent", "Outcome", "Score", "Summary"],
          [[s.record.id, s.record.date, s.record.agent, s.record.outcome, s.score,
            s.record.summary] for s in found])  # fmt: skip
    scores = agent_scores(records, ["backend"], demo.today)
    table("agent-scores --task-types backend", ["agent", "memory_score", "total_tasks"],
          [[s["agent"], s["memory_score"], s["total_tasks"]] for s in scores])  # fmt: skip


def show_briefing(demo: Demo) -> None:
    _step(3, "Session briefing")
    data = outcomes.briefing_result(demo.common).data
    _say(
        f"{data['total_records']} records; top agents: "
        + ", ".join(f"{a['agent']} ({a['total_tasks']})" for a in data["top_agents"])
    )
    for item in data["recent_outcomes"][:3]:
        _say(f"recent: {item['id']} {item['summary']} (score {item['decay_score']})")


def compact_and_verify(demo: Demo) -> None:
    _step(4, "Compact the completed phase 3 (FX rates) and verify the result")
    phase = find_phase(demo.root, "3")
    _say(f"{len(phase.summaries)} plan summaries in {phase.folder.relative_to(demo.root)}")
    with _progress(f"Compacting phase 3 with {demo.engine}…"):
        done = phases.compact_result(demo.common, phase, demo.session, force=False, dry_run=False)
    data = done.data
    _say(
        f"wrote {data['path']}: {data['tokens_output']} of {data['tokens_original']} tokens "
        f"(ratio {data['ratio']:.2f}); kept {len(data['requirement_ids'])} requirement ids "
        f"({', '.join(data['requirement_ids'])}) and {len(data['paths'])} file paths"
    )
    check = phases.verify_result(demo.common, phase).data
    problems = [f"{k}: {', '.join(check[k])}" for k in PROBLEMS if check[k]]
    if check["ok"]:
        _say("verify-compaction: OK, every requirement id and file path kept, none invented")
    else:
        _say("verify-compaction: FAILED, " + "; ".join(problems))


def distill_patterns(demo: Demo) -> None:
    _step(5, "Distil reusable patterns from the outcome log into PATTERNS.md")
    with _progress(f"Distilling patterns with {demo.engine}…"):
        data = distill.distill_result(demo.common, demo.session, dry_run=False).data
    _say(f"{len(data['candidates'])} candidate outcomes in {len(data['groups'])} groups")
    for record in data["written"]:
        _say(f"wrote {record['id']}: {record['pattern']} (from {record['source']})")
    for item in data["skipped"]:
        _say(f"skipped: {item['pattern']} ({item['reason']})")


def match_new_error(demo: Demo) -> None:
    from legion_llm.app.commands.errors import answer_line
    from legion_llm.pipeline.errmatch import answer_error

    _step(6, "A new error: is there a known fix? (fix, confirm or none)")
    _say(f"error: {NEW_ERROR.splitlines()[-2]}")
    known = read_knowledge(ERRORS, demo.paths.errors).records
    found = answer_error(known, NEW_ERROR, demo.session.engine, 3)
    matches = [found.match_dict(i) for i in range(len(found.matches))]
    _say(answer_line({"answer": found.answer, "shown": found.shown, "matches": matches}))


def extract_and_load(demo: Demo) -> None:
    _step(7, f"Extract learnings from the finished mission {MISSION.name}, then load them")
    now = learnings.now_text(demo.today.isoformat(), demo.common)
    with _progress(f"Extracting learnings with {demo.engine}…"):
        done = learnings.extract_result(demo.common, demo.root / MISSION, demo.session, now, False)
    data = done.data
    for item in data["written"]:
        _say(f"wrote {learnings.MEMORY}/{item['file']}: {item['title']}")
    for item in data["reinforced"]:
        _say(f"reinforced {learnings.MEMORY}/{item['file']}: {item['title']}")
    loaded = learnings.load_result(demo.common, GOAL, 2000, 5).data
    _say(f"next mission's goal: {GOAL!r}")
    _say(
        f"loaded {len(loaded['learnings'])} learnings ({loaded['tokens']} tokens) into its "
        "Project Learnings section:"
    )
    for item in loaded["learnings"]:
        _say(f"  - [{item['category']}] {item['title']}")


def run_prune(demo: Demo) -> None:
    _step(8, "Prune old, low-importance outcomes to ARCHIVE.md (the current phase is kept)")
    data = outcomes.prune_result(demo.common, dry_run=False).data
    for line in data["report"].splitlines():
        _say(line)


def _usage(demo: Demo) -> str:
    usage: dict[str, Any] = demo.session.usage()
    if demo.session.engine.name not in ("anthropic", "claude-code"):
        return f"LLM steps: {usage['offline_calls']} offline calls, no network, no cost"
    return (
        f"LLM steps ({usage['engine']}): {usage['calls']} Claude calls, {usage['input_tokens']} in / "
        f"{usage['output_tokens']} out tokens, about ${usage['estimated_cost_usd']:.4f}"
    )


def _files(root: Path) -> list[Path]:
    memory = sorted((root / ".planning/memory").glob("*.md"))
    compacted = sorted((root / ".planning/phases").glob("*/*-COMPACTED.md"))
    return [*memory, *compacted, root / learnings.MEMORY]


def run_demo(
    root: Path | None = None,
    today: str | None = None,
    as_json: bool = False,
    engine: str | None = None,
) -> None:
    """The walkthrough on stdout; with `as_json` on stderr, and one envelope on stdout. Offline
    unless `engine` or LEGION_LLM_ENGINE names another."""
    day = DEMO_TODAY if today is None else parse_today(today)
    chosen = engine or os.environ.get("LEGION_LLM_ENGINE", "").strip() or "offline"
    check_engine(chosen)  # a wrong --engine is said before the copy is made
    with _copy_project(root) as target:
        demo = Demo(target, open_session(Common(target, day, as_json, stderr_line), chosen), day)
        with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
            _walkthrough(demo)
    data = {"root": str(target), "today": day.isoformat(), "engine": demo.session.engine.name,
            "files": [str(path) for path in _files(target)], "usage": demo.session.usage(),
            "command": command_here()}  # fmt: skip
    finish(CommandResult("demo", data, None, demo.session.warnings),
           Common(target, day, as_json, stderr_line))  # fmt: skip


def _walkthrough(demo: Demo) -> None:
    rich_print("[bold]legion-llm demo[/bold] on a copy of the demo project in")
    echo(f"  {demo.root}")  # plain print: a path is never wrapped
    why = " so the bundled history scores the same every run" if demo.today == DEMO_TODAY else ""
    rich_print(f"('today' is {demo.today}{why}; LLM steps use {demo.engine})")
    for step in (store_build_outcomes, show_recall, show_briefing, compact_and_verify,
                 distill_patterns, match_new_error, extract_and_load, run_prune):  # fmt: skip
        step(demo)
    rich_print(f"\n{_usage(demo)}")
    rich_print("[bold green]Done.[/bold green] Open the files of the project copy:")
    for path in _files(demo.root):
        echo(f"  {path}")
    rich_print("Try the commands yourself there (the README's tour), starting with:")
    command = command_here()  # plain prints below: a path is never wrapped
    echo(f"  cd {shlex.quote(str(demo.root))}")
    echo(f"  {command} outcomes recall --tags audit-log")
    echo(f"  {command} briefing")
