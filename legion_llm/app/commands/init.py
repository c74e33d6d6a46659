"""`init`: start a project's memory, `.planning/memory/`, in the root (the current folder, or
--root); the one command that makes it where there was none (the add commands refuse to, found
from the current folder, so that no project is started by accident)."""

from __future__ import annotations

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult
from legion_llm.errors import InputError


def init_result(c: Common) -> CommandResult:
    """Make `.planning/` and `.planning/memory/` where missing (never through a link out of the
    root); nothing else is written, and a second run makes nothing."""
    from legion_llm.memory.files import locked

    paths = c.paths
    wanted = [paths.planning, paths.memory_dir]
    missing = [folder for folder in wanted if not folder.is_dir()]
    try:
        with locked(paths.memory_dir, root=paths.root):
            pass
    except OSError as exc:
        raise InputError(
            f"could not make {paths.memory_dir}: {getattr(exc, 'strerror', None) or exc}"
        ) from exc
    made = [f"{folder.relative_to(paths.root).as_posix()}/" for folder in missing]
    data = {"root": str(paths.root), "made": made}
    if made:
        human = f"Made {' and '.join(made)} in {paths.root}: memory commands now store here"
    else:
        human = f"{paths.root} already holds .planning/memory/; nothing was made"
    return CommandResult("init", data, human)
