"""The user's cache folder: what is kept there to start faster, and the one way to write it.

`$XDG_CACHE_HOME/legion-llm`, else `$HOME/.cache/legion-llm`; no cache at all when neither names
an absolute folder. Only derived data lives there (docs/performance.md lists each file), each
file named by a hash of what it was made from, so a stale one is never read; deleting the
folder loses nothing but the time to rebuild it. The other user folders: legion_llm/userdirs.py.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path


def cache_folder() -> Path | None:
    """$XDG_CACHE_HOME/legion-llm, else $HOME/.cache/legion-llm; None when neither variable
    holds an absolute path (the XDG spec ignores a relative one)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.environ.get("HOME") or ""
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "legion-llm"


def keep(name: str, data: bytes, *, family: str | None = None, newest: int = 4) -> None:
    """Write `data` as the cache file `name`, atomically (a temp file, then a rename). A folder
    that cannot be written is no error: the cache is only ever a shortcut. With `family` (a
    name prefix), only the `newest` files of that family stay (older versions' files go)."""
    folder = cache_folder()
    if folder is None:
        return
    path = folder / name
    tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(tmp, "xb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError:
        with suppress(OSError):
            tmp.unlink()
        return
    if family is not None:
        _keep_newest(folder, family, newest)


def _keep_newest(folder: Path, family: str, newest: int) -> None:
    with suppress(OSError):
        files = [p for p in folder.iterdir() if p.name.startswith(family)]
        files.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in files[newest:]:
            with suppress(OSError):
                old.unlink()


def read(name: str) -> bytes | None:
    """The cache file `name`, or None (no cache folder, no such file, unreadable)."""
    folder = cache_folder()
    if folder is None:
        return None
    try:
        return (folder / name).read_bytes()
    except OSError:
        return None
