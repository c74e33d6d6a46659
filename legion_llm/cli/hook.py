"""`legion-llm hook session-start` and `legion-llm hook stop`: the Claude Code plugin's hooks.

Claude Code runs each with the hook's JSON on stdin (`session_id`, `cwd`, `hook_event_name`,
`source` at SessionStart, `stop_hook_active` at Stop, ...). Both find the project from the
JSON's `cwd` (else the folder they run in) and do nothing, silently, outside a project that has
`.planning/`. Inside one:

- session-start prints `{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": ...}}`: the briefing and the learnings (app/commands/hooks.py says
  what, and in how many characters).
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


# ---------------------------------------------------------------- the commands


def session_start_cmd(root: Path | None = None, today: str | None = None,
                      json_: bool = False) -> int:  # fmt: skip
    """`legion-llm hook session-start`: the briefing and learnings as SessionStart context."""
    return _answer(root, today, lambda found, day: _session_output(found, day))


def stop_cmd(root: Path | None = None, today: str | None = None, json_: bool = False) -> int:
    """`legion-llm hook stop`: one line naming the phases to compact, or nothing."""
    return _answer(root, today, lambda found, _: _stop_output(found))


def _session_output(root: Path, today: date) -> dict[str, Any] | None:
    from legion_llm.app.commands.hooks import session_context

    context = session_context(root, today)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def _stop_output(root: Path) -> dict[str, Any] | None:
    from legion_llm.app.commands.hooks import stop_message

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
        from legion_llm.app.context import parse_today

        output = make(found, parse_today(today))
        if output is not None:
            print(json.dumps(_scrubbed(output)), flush=True)
    except Exception as exc:
        if os.environ.get("LEGION_LLM_DEBUG"):
            raise
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        print(f"legion-llm hook: {_one_line(str(message))}", file=sys.stderr, flush=True)
    return 0


def _scrubbed(output: Any) -> Any:
    """What a hook hands Claude Code goes to a model and to the user's terminal: the one
    redaction step every request passes (a memory file edited by hand, or a cloned repository's,
    may hold a secret the store would have redacted), no configured key, and no control
    character (shown as a visible symbol, as in the CLI's human output: an ESC or OSC sequence
    from a ROADMAP.md could set the window title, write the clipboard or clear the screen)."""
    from legion_llm.app.result import visible
    from legion_llm.llm.scrub import scrub_data
    from legion_llm.memory.redact import redacted_data

    def shown(value: Any) -> Any:
        if isinstance(value, str):
            return visible(value)
        if isinstance(value, dict):
            return {key: shown(item) for key, item in value.items()}
        return [shown(item) for item in value] if isinstance(value, list) else value

    return shown(scrub_data(redacted_data(output)))


def _one_line(text: str) -> str:
    return " ".join(text.split())
