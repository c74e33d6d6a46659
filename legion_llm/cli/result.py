"""What every command shares and needs no typer: the options every command takes (--root,
--today, --json) as values, the result every command returns, and the small option parsers.

The typer declarations of the same options are in cli/common.py; this module is what the fast
path (cli/fast.py) and the MCP server use, so neither imports typer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.config import Settings, load_settings
from legion_llm.errors import InputError, UsageError
from legion_llm.project import MemoryPaths, resolve_root

# One text field an add command stores (a summary, a fix, a learning's body, the tags together).
# Larger is not a memory but a file pasted by mistake, and it slows every later read.
MAX_STORED_CHARS = 20_000


def split_option(value: str | None) -> list[str]:
    """'a, b,c' -> ['a', 'b', 'c']."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]


@dataclass(frozen=True)
class Common:
    root: Path
    today: date
    as_json: bool

    @property
    def paths(self) -> MemoryPaths:
        return MemoryPaths(self.root)

    def settings(self) -> Settings:
        return load_settings(self.paths.settings)


def common(root: Path | None, today: str | None, as_json: bool) -> Common:
    return Common(resolve_root(root), parse_today(today), as_json)


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


@dataclass
class CommandResult:
    """What a command hands to the renderer: data for --json, a human view, warnings."""

    command: str
    data: Any
    human: Callable[[], None] | str | None = None
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0


def resolve_branch(value: str, root: Path) -> str | None:
    """--branch all -> None (no filter); current -> the git branch; else the name given."""
    if value == "all":
        return None
    if value == "current":
        from legion_llm.memory.gitinfo import current_branch

        return current_branch(root)
    return value


def deliver(result: CommandResult, options: Common) -> int:
    """Print a command's result (cli/render.py) and return its exit code: how every command
    ends, through typer (cli/common.py's `finish`) or through the fast path (cli/fast.py)."""
    from legion_llm.cli.render import emit

    result.warnings = list(dict.fromkeys([*result.warnings, *trust_warnings(options.root)]))
    return emit(result, options.as_json)


def trust_warnings(root: Path) -> list[str]:
    """The one warning about the settings an untrusted project set and that were ignored
    (config.py), for every command's result, whether it read those settings or not."""
    from legion_llm.config import untrusted_warning

    paths = MemoryPaths(root)
    settings = load_settings(paths.settings)
    return [untrusted_warning(paths.settings.name, settings.ignored)] if settings.ignored else []
