"""What the Claude Code plugin's hooks say (cli/hook.py reads their payload and prints the
answer): at SessionStart, what the memory-manager spec has an agent load at the start (the
session briefing: record count, the 5 most recent outcomes, the top 3 agents) and what the
mission-memory spec loads into a mission (the "Project Learnings": every gotcha, and the
learnings whose tags appear in .planning/STATE.md, the nearest thing to a goal a session has), in
at most MAX_CONTEXT_CHARS characters; at Stop, one line naming the phases that are complete and
have no COMPACTED.md yet.

Neither fails: a memory file it cannot read, or a bug, becomes one line of the answer. Nothing
here imports the pipeline or the LLM layer, and the YAML reader only when there are learnings;
without PyYAML (the plugin's first start runs the hooks on the standard library while its
environment is built) the learnings are one line saying when they load.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from importlib.util import find_spec
from pathlib import Path
from typing import Any

MAX_CONTEXT_CHARS = 4000  # the SessionStart context, all of it
LEARNINGS_TOKENS = 600  # the learnings' share of it (characters / 4, as learnings load counts)
GOAL_CHARS = 4000  # how much of STATE.md is read as the "goal" the learnings' tags match
SUMMARY_CHARS = 120  # one recent outcome's summary, in the briefing
MAX_WARNINGS = 3  # broken files named in the context, one line each
LEARNINGS_LATER = (
    "legion-llm: the mission learnings (.mission-control/memory/) load once legion-llm's install "
    "has finished (reading them needs PyYAML; `legion-llm learnings load` shows them then)"
)
TRUNCATED = "\n… (cut to stay short: `legion-llm briefing --json` and `legion-llm learnings load`)"


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
    if find_spec("yaml") is None:  # the plugin's first start: its environment is being built
        return LEARNINGS_LATER
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


def _one_line(text: str) -> str:
    return " ".join(text.split())
