"""The user's own folders, outside every project: their settings, the projects they trusted, the
key that signs host tickets. Nothing in a repository can choose or change them.

    config   $XDG_CONFIG_HOME/legion-llm  (default ~/.config/legion-llm)   settings.json
    data     $XDG_DATA_HOME/legion-llm    (default ~/.local/share/legion-llm)
             trusted.json (`legion-llm trust`), ticket.key (host tickets' MAC key)

The XDG base directories on every platform, as git and most command-line tools use them; on
Windows %APPDATA% and %LOCALAPPDATA% when the XDG variables are not set. A relative XDG value is
ignored, as the specification says. Tests point both at temporary folders through the variables.

    cache    $XDG_CACHE_HOME/legion-llm   (default ~/.cache/legion-llm)    derived data only
             (token ranks, the MCP handshake: legion_llm/cache.py; deleting it is safe)

These are the only files legion-llm writes outside a project root: the config and data ones
only when the user runs `legion-llm trust` or prepares a host ticket for the first time (the
data folder is created 0700 and the key 0600), the cache ones to start faster.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from legion_llm.errors import LegionError

APP = "legion-llm"
SETTINGS = "settings.json"


class UserFolderError(LegionError):
    """A file in the user's own folders cannot be read or written."""


def _base(env: Mapping[str, str], xdg: str, windows: str, fallback: str) -> Path:
    value = env.get(xdg, "")
    if value and Path(value).is_absolute():
        return Path(value)
    if os.name == "nt" and env.get(windows):
        return Path(env[windows])
    return Path.home() / fallback


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    return _base(os.environ if env is None else env, "XDG_CONFIG_HOME", "APPDATA", ".config") / APP


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    environment = os.environ if env is None else env
    return _base(environment, "XDG_DATA_HOME", "LOCALAPPDATA", ".local/share") / APP


def user_settings_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / SETTINGS


def private_folder(folder: Path) -> Path:
    """`folder`, created 0700 when it is not there (its parents as the umask says)."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    except OSError as exc:
        raise UserFolderError(f"cannot create {folder}: {exc.strerror or exc}") from None
    if not folder.is_dir():
        raise UserFolderError(f"{folder} is not a folder")
    return folder


def private_key(path: Path, size: int = 32) -> bytes:
    """The random key in `path`, made on first use (0600, written whole before it has its name,
    so two processes starting at once share one key and never read half of one)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = _create_key(path, size)
    except OSError as exc:
        raise UserFolderError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) < size:
        raise UserFolderError(
            f"{path} holds {len(data)} bytes, not a key of {size}; remove it to make a new one"
        )
    return data


def _create_key(path: Path, size: int) -> bytes:
    import secrets  # only when a key is made: the reads that start every call do without it

    private_folder(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(size))
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
            os.link(temp, path)
        return path.read_bytes()
    except OSError as exc:
        raise UserFolderError(f"cannot create {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
