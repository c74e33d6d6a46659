"""Which projects the user trusted with `legion-llm trust`, kept outside every repository.

A project's settings.json is a file of the repository, so of every clone of a stranger's
repository. The few settings that choose a program to run, a host to send the key to, or weaken
redaction (config.SENSITIVE) are honoured from it only when the user trusted that project: the
record holds the project's folder and the sha256 of its settings.json as it was when trusted,
so a changed file (a pull, a checkout of another branch) needs trusting again. The list is
`trusted.json` in the user's data folder (userdirs.py); no command an agent can call (no MCP
tool) writes it.
"""

from __future__ import annotations

import hashlib
import json
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


def trust_state(root: Path, digest: str) -> TrustState:
    entry = _read_store(store_path()).get(_key(root))
    if not isinstance(entry, dict) or not isinstance(entry.get("settings_sha256"), str):
        return TrustState(False)
    recorded = entry["settings_sha256"]
    when = entry.get("trusted_at") if isinstance(entry.get("trusted_at"), str) else None
    return TrustState(recorded == digest, recorded, when)


def record_trust(root: Path, digest: str | None) -> Path:
    """Trust `root` with its settings as they are (`digest`), or forget it (None)."""
    path = store_path()
    folder = private_folder(path.parent)
    try:
        with locked(folder, root=folder):
            projects = _read_store(path)
            if digest is None:
                projects.pop(_key(root), None)
            else:
                now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
                projects[_key(root)] = {"settings_sha256": digest, "trusted_at": now}
            text = json.dumps({"format": FORMAT, "projects": projects}, indent=1, sort_keys=True)
            atomic_write(path, text + "\n", root=folder)
    except OSError as exc:
        raise UserFolderError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
