"""The low-level half of memory/files.py: folder handles opened without following symbolic links,
the checks on what a path names, and the names of this program's temp files.

`folder_handle` opens every folder from the root to the target with O_NOFOLLOW relative to the
one before (`dir_fd`), so whatever is done with the handle happens in the folder that was
checked: a folder swapped for a symlink after the root check makes the open fail instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

_TEMP_RE = re.compile(
    r"^\.(?P<target>.+)\.(?P<nonce>[0-9a-f]{16})(?P<mark>[0-9a-f]{8})\.legion-llm\.tmp$"
)
_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}  # fmt: skip


class UnsafeFileError(OSError):
    """A file that is not read or written, and why (`problem`, said after the file's name)."""

    def __init__(self, path: Path | str, problem: str, code: int = errno.EPERM) -> None:
        super().__init__(code, problem, str(path))
        self.problem = problem

    def __str__(self) -> str:
        return f"{self.filename} {self.problem}"


def not_regular(path: Path | str, mode: int) -> UnsafeFileError:
    kind = _KINDS.get(stat.S_IFMT(mode), "special")
    return UnsafeFileError(path, f"is not a regular file ({kind})")


def swapped(path: Path | str) -> UnsafeFileError:
    return UnsafeFileError(
        path, "is behind a symbolic link that appeared after the root check; refused", errno.ELOOP
    )


def open_at(folder: int, name: str, flags: int, shown: Path | str, mode: int = 0o777) -> int:
    """Open `name` in the folder handle, never through a symbolic link."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(folder, name)):
            raise swapped(shown) from None
        raise


def _is_link(folder: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def folder_handle(folder: Path, root: Path, *, create: bool) -> Iterator[int]:
    """A handle of `folder` (resolved, inside the root) opened one folder at a time from the
    root, none of them through a symbolic link; missing folders are made when `create`."""
    base = root.resolve()
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    handle = os.open(base, flags)
    try:
        for part in folder.relative_to(base).parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=handle)
            inner = open_at(handle, part, flags, folder)
            os.close(handle)
            handle = inner
        yield handle
    finally:
        os.close(handle)


def new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def mode_to_keep(info: os.stat_result | None, writable: bool, shown: Path) -> int:
    """The mode of the file being replaced (a new file: the umask's); refuses what is not a
    regular file, and a file we may not change (the rename would replace it anyway)."""
    if info is None:
        return new_file_mode()
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(shown))
    if stat.S_ISLNK(info.st_mode):
        raise swapped(shown)
    if not stat.S_ISREG(info.st_mode):
        raise not_regular(shown, info.st_mode)
    if not writable:
        raise PermissionError(errno.EACCES, "Permission denied", str(shown))
    return info.st_mode & 0o7777


# ---------------------------------------------------------------- temp files


# hashlib, hmac and secrets are imported where a temp file is named or checked: only a write
# needs them, and every plain read (recall, the hooks) would pay for them at start-up.


def _mark(target: str, nonce: str) -> str:
    import hashlib

    return hashlib.sha256(f"legion-llm temp file\0{target}\0{nonce}".encode()).hexdigest()[:8]


def temp_name(target: str) -> str:
    """`.<target>.<nonce><mark>.legion-llm.tmp`: a name only this program uses, with a mark (a
    hash of the target and the nonce) that `is_own_temp` checks."""
    import secrets

    nonce = secrets.token_hex(8)
    return f".{target}.{nonce}{_mark(target, nonce)}.legion-llm.tmp"


def is_own_temp(name: str) -> bool:
    import hmac

    found = _TEMP_RE.match(name)
    return found is not None and hmac.compare_digest(
        found["mark"], _mark(found["target"], found["nonce"])
    )


def remove_own_temp_files(names: Iterable[str], unlink: Callable[[str], None]) -> None:
    """Temp files left by a writer that was killed mid-write (only the lock holder writes);
    any other file, however its name looks, stays."""
    for name in names:
        if is_own_temp(name):
            with contextlib.suppress(OSError):
                unlink(name)
