"""Which projects the user trusted with `legion-llm trust`, kept outside every repository.

A project's settings.json is a file of the repository, so of every clone of a stranger's
repository. The few settings that choose a program to run, a host to send the key to, or weaken
redaction (config.SENSITIVE), or loosen a bound on money or time (config.LOWER_ONLY), are
honoured from it only when the user trusted that project: the record holds the project's folder,
the sha256 of its settings.json as it was when trusted and, when they name a program
(`memory.llm.claude_cli`), that program's resolved path and the sha256 of its bytes; a changed
file or program (a pull, a checkout of another branch) needs trusting again. The list is
`trusted.json` in the user's data folder (userdirs.py); no command an agent can call (no MCP
tool) writes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from legion_llm.memory.files import atomic_write, locked, read_text
from legion_llm.memory.untrusted import load_json
from legion_llm.userdirs import UserFolderError, data_dir, private_folder

FORMAT = 1
FILE = "trusted.json"
ABSENT = "absent"  # the digest of a project without settings.json


def settings_digest(data: bytes | None) -> str:
    """What a trust record pins: the sha256 of the settings file's bytes (ABSENT: no file)."""
    return ABSENT if data is None else hashlib.sha256(data).hexdigest()


def program_pin(name: Any) -> dict[str, str] | None:
    """What a trust record pins of the program a project's `memory.llm.claude_cli` names: the
    file it resolves to now (as the claude-code engine looks it up: a path, or a name on PATH)
    and the sha256 of its bytes, so a pull that changes only that program (a committed
    `tools/claude`) asks for trust again. None when no program is named; ABSENT when none is
    found (one appearing later changes the pin too)."""
    if not isinstance(name, str) or not name.strip():
        return None
    found = shutil.which(os.path.expanduser(name.strip()))
    if found is None:
        return {"path": name.strip(), "sha256": ABSENT}
    path = Path(found).resolve()
    try:  # never blocks on a FIFO: only a regular file is read
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return {"path": str(path), "sha256": "not a regular file"}
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        return {"path": str(path), "sha256": f"unreadable ({exc.strerror or exc})"}
    return {"path": str(path), "sha256": digest}


def store_path() -> Path:
    return data_dir() / FILE


def _key(root: Path) -> str:
    return str(root.resolve())


@dataclass(frozen=True)
class TrustState:
    """Whether a project is trusted, and why not (never trusted, or its settings changed)."""

    trusted: bool
    recorded: str | None = None  # the digest recorded at `legion-llm trust`, if any
    trusted_at: str | None = None

    @property
    def changed(self) -> bool:
        return self.recorded is not None and not self.trusted


def _read_store(path: Path) -> dict[str, Any]:
    """The projects in the trust list; a missing, unreadable or damaged list trusts nothing."""
    try:
        text = read_text(path, root=path.parent)
        data = load_json(text) if text else {}
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    return projects if isinstance(projects, dict) else {}


def trust_state(root: Path, digest: str, program: dict[str, str] | None = None) -> TrustState:
    """Trusted when the record pins these settings (`digest`) and this program (`program`:
    program_pin of what they name, None when they name none)."""
    entry = _read_store(store_path()).get(_key(root))
    if not isinstance(entry, dict) or not isinstance(entry.get("settings_sha256"), str):
        return TrustState(False)
    recorded = entry["settings_sha256"]
    when = entry.get("trusted_at") if isinstance(entry.get("trusted_at"), str) else None
    same_program = entry.get("program") == program
    return TrustState(recorded == digest and same_program, recorded, when)


def record_trust(root: Path, digest: str | None, program: dict[str, str] | None = None) -> Path:
    """Trust `root` with its settings as they are (`digest`) and the program they name as it is
    (`program`), or forget it (None)."""
    path = store_path()
    folder = private_folder(path.parent)
    try:
        with locked(folder, root=folder):
            projects = _read_store(path)
            if digest is None:
                projects.pop(_key(root), None)
            else:
                now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
                entry: dict[str, Any] = {"settings_sha256": digest, "trusted_at": now}
                if program is not None:
                    entry["program"] = program
                projects[_key(root)] = entry
            text = json.dumps({"format": FORMAT, "projects": projects}, indent=1, sort_keys=True)
            atomic_write(path, text + "\n", root=folder)
    except OSError as exc:
        raise UserFolderError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
