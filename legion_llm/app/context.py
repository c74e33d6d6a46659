"""What every use case takes: the project root, the day, whether the caller wants JSON, and where
what happens along the way goes (an engine's notices, a progress bar); and the small parsers of
the values every front end passes (a date, a comma list, a branch, a stored field's size)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from legion_llm.app.result import CommandResult
from legion_llm.config import Settings, load_settings
from legion_llm.errors import InputError, UsageError
from legion_llm.project import MemoryPaths, resolve_root

# One text field an add command stores (a summary, a fix, a learning's body, the tags together).
# Larger is not a memory but a file pasted by mistake, and it slows every later read.
MAX_STORED_CHARS = 20_000


class Bar(Protocol):
    """One progress bar: `bar(advance=1, description=...)` or `bar(completed=, total=)`."""

    def __call__(self, **update: Any) -> None: ...


# (label, total or None, clock: show the time elapsed) -> a bar for the length of a `with`
Progress = Callable[..., AbstractContextManager[Bar]]


@contextmanager
def no_progress(label: str, total: int | None = None, *, clock: bool = False) -> Iterator[Bar]:
    """No bar at all (a --json run, an MCP tool call, a planning pass)."""

    def ignore(**update: Any) -> None:
        return None

    yield ignore


@dataclass(frozen=True)
class Common:
    """The options every command takes, and where its notices and progress go: `notify` gets
    each engine notice as it happens (None: they are only collected), `progress` draws bars.
    `root_given`: the caller named the root (--root, the MCP server's fixed root), rather than
    it being found from the current folder."""

    root: Path
    today: date
    as_json: bool
    notify: Callable[[str], None] | None = None
    progress: Progress = no_progress
    root_given: bool = True

    @property
    def paths(self) -> MemoryPaths:
        return MemoryPaths(self.root)

    @property
    def has_project(self) -> bool:
        """The root holds `.planning/` (the project's memory lives under it)."""
        return self.paths.planning.is_dir()

    def no_project_here(self) -> str | None:
        """For a read outside a project: the line saying there is none, else None."""
        return (
            None if self.has_project else no_project_warning(self.root, upward=not self.root_given)
        )

    def require_project(self) -> None:
        """A write is not where a project was never started by accident: outside a project
        (no `.planning/` at the root found from the current folder) it is refused, unless the
        root was named (--root, the MCP server's root), where the memory folder is made."""
        if self.root_given or self.has_project:
            return
        raise InputError(
            f"no .planning/ in {self.root} or any folder above it; run `legion-llm init` to start "
            "a project here, or pass --root DIR (nothing was written)"
        )

    def settings(self) -> Settings:
        return load_settings(self.paths.settings)


def common(
    root: Path | None,
    today: str | None,
    as_json: bool,
    *,
    notify: Callable[[str], None] | None = None,
    progress: Progress = no_progress,
) -> Common:
    found = resolve_root(root)
    return Common(found, parse_today(today), as_json, notify, progress, root is not None)


def split_option(value: str | None) -> list[str]:
    """'a, b,c' -> ['a', 'b', 'c']."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def check_stored_sizes(fields: Mapping[str, object]) -> None:
    """Refuse a field an add command would store when it is past MAX_STORED_CHARS (a list counts
    as its items joined), naming it as its option. For the CLI and the MCP server alike."""
    for name, value in fields.items():
        if isinstance(value, list | tuple):
            value = ", ".join(str(item) for item in value)
        if isinstance(value, str) and len(value) > MAX_STORED_CHARS:
            raise InputError(
                f"--{name.replace('_', '-')} is {len(value):,} characters; a memory field holds "
                f"at most {MAX_STORED_CHARS:,} characters (keep the gist, point to a file for the rest)"
            )


def parse_today(value: str | None) -> date:
    if value is None:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"--today must be a date like 2026-03-01, not {value!r}") from None


def resolve_branch(value: str, root: Path) -> str | None:
    """--branch all -> None (no filter); current -> the git branch; else the name given."""
    if value == "all":
        return None
    if value == "current":
        from legion_llm.memory.gitinfo import current_branch

        return current_branch(root)
    return value


# The reads of a project's memory under .planning/ (`briefing` says it in its own view).
MEMORY_READS = frozenset({
    "outcomes recall", "outcomes agent-scores", "outcomes archetypes", "patterns recall",
    "errors recall", "errors match", "preferences recall", "recall", "signals",
})  # fmt: skip


def no_project_warning(root: Path, *, upward: bool = False) -> str:
    """The one line a read outside a project says (`upward`: the root was looked for from the
    current folder up, not named)."""
    where = f"in {root} or any folder above it" if upward else f"in {root}"
    return (
        f"No project here: no .planning/ {where}, so no memory to read "
        "(`legion-llm init` starts one; --root DIR names another project)"
    )


def with_trust_warnings(result: CommandResult, root: Path) -> CommandResult:
    """The result as it leaves any front end: its warnings, then the one about the settings an
    untrusted project set and that were ignored (config.py), whether the command read those
    settings or not; each warning once. A read of memory where the root holds no .planning/
    says that there is no project (exit 0, as for missing memory)."""
    from legion_llm.config import untrusted_warning

    paths = MemoryPaths(root)
    settings = load_settings(paths.settings)
    ignored = [untrusted_warning(paths.settings.name, settings.ignored)] if settings.ignored else []
    if result.command in MEMORY_READS and not paths.planning.is_dir():
        ignored.insert(0, no_project_warning(root))
    result.warnings = list(dict.fromkeys([*result.warnings, *ignored]))
    return result
