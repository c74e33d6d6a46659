"""Where the project is: the root folder and the paths of the memory files under it.

The upward search from the current folder stops at the nearest folder holding `.planning/` (or
`.mission-control/`), and that folder must be the user's own: a `.planning/` another user owns
(one made in a shared /tmp above your working folder, on a shared mount) would be read into your
session and receive your records, so it is refused with one line, as git refuses a repository
another user owns (`safe.directory`). You allow such a project by naming it: `--root DIR`, or
the environment variable LEGION_LLM_SAFE_ROOTS (folders separated by the path separator, `*` for
any). Never a repository setting: the folder in question is the one that is not trusted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from legion_llm.errors import InputError

PLANNING = ".planning"
MISSION_CONTROL = ".mission-control"
SAFE_ROOTS = "LEGION_LLM_SAFE_ROOTS"


class ForeignRootError(InputError):
    """The project found upward is owned by another user (and not allowed by name)."""


def _owner(path: Path) -> int | None:
    """The user id owning `path` (None where there are none: Windows). A seam for tests."""
    return path.stat().st_uid if hasattr(os, "geteuid") else None


def _own_ids() -> set[int] | None:
    """The user ids this process acts for: its effective id, and under sudo the id of the user
    who ran sudo (as git does). None where there are no user ids."""
    if not hasattr(os, "geteuid"):
        return None
    ids = {os.geteuid()}
    sudo = os.environ.get("SUDO_UID", "")
    if ids == {0} and sudo.isdigit():
        ids.add(int(sudo))
    return ids


def _allowed(root: Path) -> bool:
    """Is `root` named in LEGION_LLM_SAFE_ROOTS (or is `*` there)?"""
    for entry in os.environ.get(SAFE_ROOTS, "").split(os.pathsep):
        entry = entry.strip()
        if entry == "*":
            return True
        if entry and Path(entry).expanduser().resolve() == root:
            return True
    return False


def foreign_owner(folder: Path, markers: tuple[str, ...]) -> tuple[str, int] | None:
    """The first of `markers` under `folder` that another user owns, and that user's id."""
    ids = _own_ids()
    if ids is None:
        return None
    for marker in markers:
        path = folder / marker
        if path.is_dir():
            owner = _owner(path)
            if owner is not None and owner not in ids:
                return marker, owner
    return None


def _refusal(folder: Path, marker: str, owner: int) -> str:
    return (
        f"{folder / marker} is owned by another user (uid {owner}), so it is not read as your "
        f"project nor written to (as git refuses a repository another user owns); if you trust "
        f"it, pass --root {folder} or add it to {SAFE_ROOTS}"
    )


def _nearest(here: Path, markers: tuple[str, ...]) -> Path | None:
    """The nearest folder at or above `here` (resolved) holding one of the `markers` folders.
    One another user owns ends the search: ForeignRootError, unless LEGION_LLM_SAFE_ROOTS names it."""
    for folder in (here, *here.parents):
        if any((folder / marker).is_dir() for marker in markers):
            foreign = foreign_owner(folder, markers)
            if foreign is not None and not _allowed(folder):
                raise ForeignRootError(_refusal(folder, *foreign))
            return folder
    return None


def find_root(start: Path | None = None) -> Path:
    """Nearest folder upward from `start` holding `.planning/` (or `.mission-control/`), else `start`.
    ForeignRootError when that folder's marker belongs to another user."""
    here = (start or Path.cwd()).resolve()
    return _nearest(here, (PLANNING, MISSION_CONTROL)) or here


def planning_root(start: Path | None = None) -> Path | None:
    """Nearest folder upward from `start` holding `.planning/`; None outside such a project, and
    None when that `.planning/` belongs to another user (a hook then says nothing of it)."""
    try:
        return _nearest((start or Path.cwd()).resolve(), (PLANNING,))
    except ForeignRootError:
        return None


def resolve_root(root: Path | None) -> Path:
    """The --root option: an existing folder (named, so used whoever owns it), or discovery from
    the current folder (which refuses another user's project: find_root)."""
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
