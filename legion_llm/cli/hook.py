"""`legion-llm hook session-start` and `legion-llm hook stop`: the Claude Code plugin's hooks.

Claude Code runs each with the hook's JSON on stdin (`session_id`, `cwd`, `hook_event_name`,
`source` at SessionStart, `stop_hook_active` at Stop, ...). Both find the project from the
JSON's `cwd` (else the folder they run in) and do nothing, silently, outside a project that has
`.planning/`. Inside one:

- session-start prints `{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": ...}}`: what the memory-manager spec has an agent load at the start (the
  session briefing: record count, the 5 most recent outcomes, the top 3 agents) and what the
  mission-memory spec loads into a mission (the "Project Learnings": every gotcha, and the
  learnings whose tags appear in .planning/STATE.md, the nearest thing to a goal a session has),
  in at most MAX_CONTEXT_CHARS characters.
- stop prints `{"systemMessage": ...}`, one line naming the phases that are complete and have
  no COMPACTED.md yet, and nothing when there are none.

A hook never fails the session: whatever happens (unreadable JSON, a broken memory file, a bug)
it exits 0, prints no traceback and never blocks (no `"decision": "block"`); a memory file it
cannot read becomes one line of the context. Nothing here imports typer, the pipeline or the LLM
layer: cli/fast.py answers both commands; their typer declarations (for --help, and any command
line the fast path leaves to typer) are in cli/hook_app.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

MAX_STDIN_BYTES = 1_000_000  # the hook JSON is a few hundred bytes; never read more than this
MAX_CONTEXT_CHARS = 4000  # the SessionStart context, all of it
LEARNINGS_TOKENS = 600  # the learnings' share of it (characters / 4, as learnings load counts)
GOAL_CHARS = 4000  # how much of STATE.md is read as the "goal" the learnings' tags match
SUMMARY_CHARS = 120  # one recent outcome's summary, in the briefing
MAX_WARNINGS = 3  # broken files named in the context, one line each
TRUNCATED = "\n… (cut to stay short: `legion-llm briefing --json` and `legion-llm learnings load`)"


def read_payload(stream: Any = None) -> dict[str, Any]:
    """The hook's JSON object from stdin; {} when there is none (a terminal) or it is not JSON."""
    stream = sys.stdin if stream is None else stream
    try:
        if stream is None or stream.isatty():
            return {}
        raw = stream.buffer.read(MAX_STDIN_BYTES) if hasattr(stream, "buffer") else stream.read()
        found = json.loads(raw or "{}")
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def project_root(payload: dict[str, Any]) -> Path | None:
    """The nearest folder at or above the payload's cwd (else this process's) holding
    `.planning/`; None outside such a project."""
    from legion_llm.project import planning_root

    cwd = payload.get("cwd")
    try:
        return planning_root(Path(cwd) if isinstance(cwd, str) and cwd else None)
    except (OSError, RuntimeError, ValueError):
        return None


# ---------------------------------------------------------------- SessionStart


def session_context(root: Path, today: date) -> str:
    """The SessionStart context: the briefing, then the learnings, then any broken file."""
    warnings: list[str] = []
    parts = [_guarded(lambda: _briefing_text(root, today, warnings), "the memory briefing")]
    learnings = _guarded(lambda: _learnings_text(root, warnings), "the mission learnings")
    if learnings:
        parts.append(learnings)
    shown_warnings = list(dict.fromkeys(warnings))
    parts += [f"Warning: {w}" for w in shown_warnings[:MAX_WARNINGS]]
    if len(shown_warnings) > MAX_WARNINGS:
        parts.append(f"(and {len(shown_warnings) - MAX_WARNINGS} more warnings)")
    return bounded("\n\n".join(part for part in parts if part))


def _guarded(make: Callable[[], str], what: str) -> str:
    """`make()`, or the one line that says why it could not be made."""
    try:
        return make()
    except Exception as exc:  # a hook never fails the session: the reason becomes context
        return f"legion-llm: {what} is unavailable ({type(exc).__name__}: {_one_line(str(exc))})"


def _briefing_text(root: Path, today: date, warnings: list[str]) -> str:
    from legion_llm.memory.outcomes.fastrecall import brief_outcomes
    from legion_llm.project import MemoryPaths

    data, found = brief_outcomes(MemoryPaths(root).outcomes, today)
    warnings.extend(found)
    total = data["total_records"]
    lines = [
        f"legion-llm memory briefing ({total} outcome records in .planning/memory/; "
        "the memory-manager skill and the legion-llm MCP tools recall and store more)"
    ]
    if data["recent_outcomes"]:
        lines.append("Recent outcomes:")
        lines += [_outcome_line(record) for record in data["recent_outcomes"]]
    if data["top_agents"]:
        agents = ", ".join(
            f"{a['agent']} ({a['total_tasks']} tasks, {round(100 * a['success_rate'])}% success)"
            for a in data["top_agents"]
        )
        lines.append(f"Top agents: {agents}")
    return "\n".join(lines)


def _outcome_line(record: dict[str, Any]) -> str:
    summary = _one_line(str(record.get("summary", "")))
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    return (
        f"- {record.get('id')} {record.get('date')} {record.get('agent')} "
        f"{record.get('outcome')}: {summary}"
    )


def _learnings_text(root: Path, warnings: list[str]) -> str:
    from legion_llm.project import MemoryPaths

    paths = MemoryPaths(root)
    if not any(paths.learnings_dir.glob("*.md")):
        return ""  # no learnings: the YAML reader is not even imported
    from legion_llm.memory.learnings.load import load_for_goal
    from legion_llm.memory.learnings.read import read_learnings

    found = read_learnings(paths.learnings_dir)
    warnings.extend(found.warnings)
    loaded = load_for_goal(found.learnings, _goal(paths.state), max_tokens=LEARNINGS_TOKENS)
    if not loaded.section:
        return ""
    left = len(loaded.left_out)
    more = f"\n({left} more learnings did not fit: `legion-llm learnings load`)" if left else ""
    return loaded.section.strip() + more


def _goal(state: Path) -> str:
    """What the project works on now, to match learnings' tags against: STATE.md's start."""
    from legion_llm.memory.files import read_text

    try:
        return (read_text(state) or "")[:GOAL_CHARS]
    except (OSError, UnicodeDecodeError):
        return ""


def bounded(text: str) -> str:
    """At most MAX_CONTEXT_CHARS characters, cut at a line end with a note saying so."""
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    room = MAX_CONTEXT_CHARS - len(TRUNCATED)
    cut = text.rfind("\n", 0, room)
    return text[: cut if cut > 0 else room] + TRUNCATED


# ---------------------------------------------------------------- Stop


def stop_message(root: Path) -> str | None:
    """One line naming the complete phases without a COMPACTED.md, or None when there are none."""
    try:
        from legion_llm.memory.phases.find import completed_without_compaction, phase_specs

        phases = completed_without_compaction(root)
        specs = phase_specs(phases, root)
    except Exception as exc:  # a broken ROADMAP or phase file: say so in one line, never fail
        return f"legion-llm: could not look for phases to compact ({_one_line(str(exc))})"
    if not phases:
        return None
    named = ", ".join(
        f"{spec} ({_one_line(p.name)})" for spec, p in zip(specs, phases, strict=True)
    )
    first = specs[0]
    noun = "Phase" if len(phases) == 1 else "Phases"
    verb = "is" if len(phases) == 1 else "are"
    return (
        f"legion-llm: {noun} {named} {verb} complete and not compacted yet "
        f"(`legion-llm compact {first}` compacts one; `legion-llm compact --suggest` lists them)"
    )


# ---------------------------------------------------------------- the commands


def session_start_cmd(root: Path | None = None, today: str | None = None,
                      json_: bool = False) -> int:  # fmt: skip
    """`legion-llm hook session-start`: the briefing and learnings as SessionStart context."""
    return _answer(root, today, lambda found, day: _session_output(found, day))


def stop_cmd(root: Path | None = None, today: str | None = None, json_: bool = False) -> int:
    """`legion-llm hook stop`: one line naming the phases to compact, or nothing."""
    return _answer(root, today, lambda found, _: _stop_output(found))


def _session_output(root: Path, today: date) -> dict[str, Any] | None:
    context = session_context(root, today)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def _stop_output(root: Path) -> dict[str, Any] | None:
    message = stop_message(root)
    return None if message is None else {"systemMessage": message}


def _answer(
    root: Path | None, today: str | None, make: Callable[[Path, date], dict[str, Any] | None]
) -> int:
    """Read the payload, find the project (from --root when given, else the payload's cwd),
    print what `make` answers as one JSON line. Exit 0 whatever happens: a failure is one line
    on stderr, which Claude Code shows only in its debug output (LEGION_LLM_DEBUG=1 lets a
    bug's traceback through)."""
    try:
        payload = read_payload()
        if payload.get("stop_hook_active") is True:
            return 0  # Claude is already continuing because of a Stop hook: say nothing more
        found = project_root({**payload, "cwd": str(root)} if root is not None else payload)
        if found is None:
            return 0
        from legion_llm.cli.result import parse_today

        output = make(found, parse_today(today))
        if output is not None:
            print(json.dumps(_scrubbed(output)), flush=True)
    except Exception as exc:
        if os.environ.get("LEGION_LLM_DEBUG"):
            raise
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        print(f"legion-llm hook: {_one_line(str(message))}", file=sys.stderr, flush=True)
    return 0


def _scrubbed(output: dict[str, Any]) -> Any:
    """What a hook hands Claude Code goes to a model: the one redaction step every request
    passes (a memory file edited by hand, or a cloned repository's, may hold a secret the store
    would have redacted), and no configured key."""
    from legion_llm.llm.scrub import scrub_data
    from legion_llm.memory.redact import redacted_data

    return scrub_data(redacted_data(output))


def _one_line(text: str) -> str:
    return " ".join(text.split())
