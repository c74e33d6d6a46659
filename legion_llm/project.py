"""Where the project is: the root folder and the paths of the memory files under it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from legion_llm.errors import InputError

PLANNING = ".planning"
MISSION_CONTROL = ".mission-control"


def _nearest(here: Path, markers: tuple[str, ...]) -> Path | None:
    """The nearest folder at or above `here` (resolved) holding one of the `markers` folders."""
    for folder in (here, *here.parents):
        if any((folder / marker).is_dir() for marker in markers):
            return folder
    return None


def find_root(start: Path | None = None) -> Path:
    """Nearest folder upward from `start` holding `.planning/` (or `.mission-control/`), else `start`."""
    here = (start or Path.cwd()).resolve()
    return _nearest(here, (PLANNING, MISSION_CONTROL)) or here


def planning_root(start: Path | None = None) -> Path | None:
    """Nearest folder upward from `start` holding `.planning/`; None outside such a project."""
    return _nearest((start or Path.cwd()).resolve(), (PLANNING,))


def resolve_root(root: Path | None) -> Path:
    """The --root option: an existing folder, or discovery from the current folder."""
    if root is None:
        return find_root()
    resolved = root.expanduser().resolve()
    if not resolved.is_dir():
        raise InputError(f"--root {root} is not a folder")
    return resolved


@dataclass(frozen=True)
class MemoryPaths:
    """The Legion memory files of one project (they may not exist yet)."""

    root: Path

    @property
    def planning(self) -> Path:
        return self.root / PLANNING

    @property
    def memory_dir(self) -> Path:
        return self.planning / "memory"

    @property
    def outcomes(self) -> Path:
        return self.memory_dir / "OUTCOMES.md"

    @property
    def archive(self) -> Path:
        return self.memory_dir / "ARCHIVE.md"

    @property
    def patterns(self) -> Path:
        return self.memory_dir / "PATTERNS.md"

    @property
    def errors(self) -> Path:
        return self.memory_dir / "ERRORS.md"

    @property
    def preferences(self) -> Path:
        return self.memory_dir / "PREFERENCES.md"

    @property
    def retro(self) -> Path:
        return self.memory_dir / "RETRO.md"

    @property
    def state(self) -> Path:
        return self.planning / "STATE.md"

    @property
    def roadmap(self) -> Path:
        return self.planning / "ROADMAP.md"

    @property
    def settings(self) -> Path:
        return self.root / "settings.json"

    @property
    def learnings_dir(self) -> Path:
        return self.root / MISSION_CONTROL / "memory"
