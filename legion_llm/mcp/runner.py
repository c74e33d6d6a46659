"""One call of one tool: the fixed root, one call at a time, the CLI's --json object, and every
failure turned into a tool error whose text is the one-line message (the server keeps serving).
Both leave scrubbed of any key (the envelope's own scrub, and `scrub` on the error text)."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError

from legion_llm.app.context import Common, parse_today, with_trust_warnings
from legion_llm.app.result import CommandResult, envelope, notice_line, secret_free
from legion_llm.errors import LegionError, WriteFailedError
from legion_llm.llm.scrub import scrub

if TYPE_CHECKING:
    from legion_llm.memory.phases.find import Phase


class Runner:
    """What every tool shares: the project root (fixed at start) and a lock, so two calls never
    write the same memory file at once."""

    def __init__(self, root: Path, *, today: date | None = None, root_given: bool = True) -> None:
        self.root = root.resolve()
        self.root_given = root_given  # False: found from the client's folder (no --root)
        self.today = today  # `legion-llm mcp --today`: the date of a call that passes none
        self._lock = threading.Lock()
        self.argument_names: frozenset[str] = frozenset()  # every tool's (build_server sets them)

    def common(self, today: str | None) -> Common:
        day = self.today if today is None and self.today is not None else parse_today(today)
        return Common(self.root, day, True, log_notice, root_given=self.root_given)

    def run(self, build: Callable[[], CommandResult]) -> dict[str, Any]:
        """The object `legion-llm ... --json` prints, or a ToolError with the one-line message."""
        with self._lock:
            try:
                result = build()
            except Exception as exc:
                text = tool_wording(error_text(exc), self.argument_names)
                raise ToolError(scrub(secret_free(text))) from exc
        result = with_trust_warnings(result, self.root)
        result.warnings = [tool_wording(w, self.argument_names) for w in result.warnings]
        text = envelope(result.command, result.data, result.warnings, ok=result.exit_code == 0)
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    def inside(self, value: str, what: str) -> Path:
        """`value` as a path under the root (relative to the root, or absolute inside it)."""
        if "\x00" in value:  # no path holds one (resolving it would raise ValueError)
            raise ToolError(f"{what} {value!r} must not hold a NUL character")
        path = Path(value.strip()).expanduser()
        resolved = (path if path.is_absolute() else self.root / path).resolve()
        if not value.strip() or not resolved.is_relative_to(self.root):
            raise ToolError(f"{what} {value!r} is outside the project root {self.root}")
        return resolved

    def mission(self, value: str) -> Path:
        """The folder `value` names (inside the root), or the mission with that id."""
        from legion_llm.app.commands.learnings import mission_by_id, no_mission

        folder = self.inside(value, "mission")
        if folder.exists():
            return folder
        return mission_by_id(self.root, value) or no_mission(Path(value))

    def phase(self, given: str | int | float) -> Phase:
        """The phase named by `given` (a number or a string); its folder, files and COMPACTED.md
        must all be under the root."""
        from legion_llm.mcp.params import phase_text
        from legion_llm.memory.phases.find import find_phase

        spec = phase_text(given)
        if not spec:
            raise ToolError("argument 'phase' must not be empty")
        self.inside(spec, "phase")
        try:
            found = find_phase(self.root, spec.strip())
        except LegionError as exc:
            raise ToolError(exc.message) from exc
        files = [found.folder, found.compacted_path, *(path for _, path in found.summaries)]
        if found.roadmap.path is not None:
            files.append(found.roadmap.path)
        for path in files:
            if not path.resolve().is_relative_to(self.root):
                raise ToolError(f"phase {spec!r} is outside the project root {self.root}")
        return found


# A command line a message points to -> the tool call that does the same here.
_COMMANDS = (
    (re.compile(r"`legion-llm compact --suggest`"), "phase_read view=pending"),
    (re.compile(r"`legion-llm compact(?: [^`]*)?`"), "phase_compact with apply=true"),
    (re.compile(r"`legion-llm scan --fix`"), "memory_scan with apply=true"),
    (re.compile(r"`legion-llm prune`"), "memory_prune with apply=true"),
)
_PASS_FLAG = re.compile(r"\bpass --([a-z][a-z0-9-]*)")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")


def tool_wording(text: str, names: frozenset[str]) -> str:
    """A CLI message worded for a tool call: `--max-cost` -> `max_cost` and `pass --force` ->
    `pass force=true`, for the flags that are tool arguments (others, such as Claude Code's own
    flags, stay as they are), and `legion-llm compact` -> `phase_compact with apply=true`."""

    def argument(flag: str) -> str | None:
        name = flag.replace("-", "_")
        return name if name in names else None

    def passed(match: re.Match[str]) -> str:
        name = argument(match[1])
        return f"pass {name}=true" if name else match[0]

    def named(match: re.Match[str]) -> str:
        return argument(match[1]) or match[0]

    for command, call in _COMMANDS:
        text = command.sub(call, text)
    return _FLAG.sub(named, _PASS_FLAG.sub(passed, text))


def error_text(exc: Exception) -> str:
    """The one line the CLI would print on stderr (a failed write adds the record, never lost)."""
    if isinstance(exc, ToolError):
        return str(exc)
    if isinstance(exc, WriteFailedError):
        return f"{exc.message}\nrecord not written: {exc.record_text}"
    if isinstance(exc, LegionError):
        return exc.message
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    return f"internal error ({type(exc).__name__}: {' '.join(str(exc).split())})"


def log_notice(text: str) -> None:
    """An engine's notice as it happens, on the server's stderr (the client's log of it)."""
    print(notice_line(text), file=sys.stderr, flush=True)
