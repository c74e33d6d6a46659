"""Reading and writing memory files: one reader for every file, atomic replace, fsync, one lock
per memory folder, and a guard that refuses any read or write outside the project root.

Reading (`read_bytes`, `read_text`, `read_text_keeping`): only regular files are read (a FIFO,
a device or a folder named like a memory file is refused without blocking), and a path whose
real location is outside the project root is refused. The root is the one given, else the folder
holding the `.planning/` or `.mission-control/` the path runs through (or the nearest one upward
holding either); Claude Code's own memory note is the one file read outside it
(`contained=False`).

Writing (`atomic_write`, `locked`): on POSIX every folder on the way from the root to the target is
opened with O_NOFOLLOW relative to the one before (`dir_fd`), and the temp file, the rename and
the fsync all happen relative to the target folder's handle, so the root check and the write are
one step: a folder swapped for a symlink after the check makes the write fail instead of landing
outside. Windows has no `dir_fd`; there the path-based fallback (resolve, check, write) is used.

Temp files have a name only this program uses, with a mark it checks (memory/handles.py): the lock
holder removes a stale one left by a killed writer, never a file of the user's.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator, Sequence
from itertools import compress
from operator import not_
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError, LegionError, WriteFailedError
from legion_llm.memory.handles import (
    UnsafeFileError,
    folder_handle,
    mode_to_keep,
    not_regular,
    open_at,
    remove_own_temp_files,
    temp_name,
)

DIR_FD = (
    os.name != "nt"
    and {os.open, os.mkdir, os.rename, os.unlink, os.stat, os.access} <= os.supports_dir_fd
    and hasattr(os, "O_NOFOLLOW")
    and hasattr(os, "O_DIRECTORY")
)
_ANCHORS = (".planning", ".mission-control")
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not wait for a writer
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class NotUtf8Error(UnicodeDecodeError):
    """A UnicodeDecodeError that names the file and the line (the CLI prints it as one line)."""

    def __init__(self, path: Path, cause: UnicodeDecodeError) -> None:
        super().__init__(cause.encoding, cause.object, cause.start, cause.end, cause.reason)
        self.path = path
        self.line = bytes(cause.object[: cause.start]).count(b"\n") + 1

    @property
    def byte(self) -> int:
        return self.object[self.start]

    @property
    def problem(self) -> str:
        return f"is not UTF-8 text (line {self.line}, byte 0x{self.byte:02x})"

    def __str__(self) -> str:
        return f"{self.path} {self.problem}"


def read_problem(exc: OSError | UnicodeDecodeError) -> str:
    """What is wrong with a file that could not be read, said after its name, in one line."""
    if isinstance(exc, NotUtf8Error | UnsafeFileError):
        return exc.problem
    if isinstance(exc, PermissionError):
        return "cannot be read (permission denied)"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(exc, UnicodeDecodeError):
        return "is not UTF-8 text"
    return f"cannot be read ({exc.strerror or exc})"


# ---------------------------------------------------------------- reading


def read_bytes(path: Path, *, root: Path | None = None, contained: bool = True) -> bytes | None:
    """The bytes of a regular file, or None when it does not exist.

    Refused (UnsafeFileError): anything but a regular file, and a file whose real path is outside
    `root` (default: the project the path runs through; `contained=False` for Claude Code's note).
    """
    base = (root or _project_of(path)) if contained else None
    try:
        fd = _open_for_reading(path, base)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        with open(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def read_text(path: Path, *, root: Path | None = None, contained: bool = True) -> str | None:
    """The file's text (a UTF-8 byte-order mark dropped), or None when it does not exist.
    Undecodable bytes raise NotUtf8Error, which names the line."""
    data = read_bytes(path, root=root, contained=contained)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(path, exc) from None


def read_text_keeping(path: Path, *, root: Path | None = None) -> str | None:
    """Like `read_text`, but a byte that is not UTF-8 is kept as a lone surrogate (surrogateescape)
    so a rewrite gives the same bytes back; `undecodable_lines` finds those lines."""
    data = read_bytes(path, root=root)
    return (
        None
        if data is None
        else data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogateescape")
    )


_SURROGATE = re.compile("[\udc80-\udcff]")


def undecodable_lines(lines: Sequence[str]) -> dict[int, int]:
    """0-based line number -> the first byte that is not UTF-8 in it (see `read_text_keeping`)."""
    found = {}
    for number in compress(range(len(lines)), map(not_, map(str.isascii, lines))):
        bad = _SURROGATE.search(lines[number])
        if bad:
            found[number] = ord(bad.group(0)) - 0xDC00
    return found


def not_utf8_warning(name: str, line_no: int, byte: int) -> str:
    return f"Warning: {name} line {line_no + 1} is not UTF-8 text (byte 0x{byte:02x}); that line is skipped."


def undecodable_refusal(name: str, lines: dict[int, int]) -> str:
    """Why a store into a file holding bytes that are not UTF-8 is refused (nothing written)."""
    line_no, byte = next(iter(lines.items()))
    return (
        f"{name} line {line_no + 1} is not UTF-8 text (byte 0x{byte:02x}); fix that line "
        "before storing into it (nothing was written)"
    )


def _project_of(path: Path) -> Path | None:
    """The project a path belongs to: the folder holding the last `.planning` / `.mission-control`
    the path runs through, else its nearest folder upward holding one (paths as written)."""
    absolute = path.absolute()
    parts = absolute.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in _ANCHORS:
            return Path(*parts[:i])
    for folder in absolute.parents:
        if any((folder / anchor).is_dir() for anchor in _ANCHORS):
            return folder
    return None


def _open_for_reading(path: Path, root: Path | None) -> int:
    if root is None:
        return os.open(path, _READ_FLAGS)
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise UnsafeFileError(path, f"leads outside the project root {root}")
    if not DIR_FD:
        return os.open(resolved, _READ_FLAGS)
    with folder_handle(resolved.parent, root, create=False) as folder:
        return open_at(folder, resolved.name, _READ_FLAGS, path)


# ---------------------------------------------------------------- the root check and handles


def ensure_inside(path: Path, root: Path) -> Path:
    """The resolved path; a write outside the root is refused (a bug or a hostile argument)."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise LegionError(f"refusing to write {path}: it is outside the project root {root}")
    return resolved


def require_inside(path: Path, root: Path) -> Path:
    """The resolved path of an input (a phase or mission folder) that must be in the project."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise InputError(f"{path} is outside the project root {root}")
    return resolved


# ---------------------------------------------------------------- writing


def atomic_write(
    path: Path,
    content: str | Sequence[bytes | memoryview],
    *,
    root: Path,
    keep_undecodable: bool = False,
) -> int:
    """Write `content` (text, or byte chunks) to `path` through a temp file in the same folder,
    fsync, rename, fsync the folder.

    Either the old or the new content is on disk at every instant; a failure leaves no temp file.
    `keep_undecodable` writes the lone surrogates of `read_text_keeping` back as their bytes.
    Returns the number of bytes written.
    """
    errors = "surrogateescape" if keep_undecodable else "strict"
    chunks = [content.encode("utf-8", errors)] if isinstance(content, str) else content
    target = ensure_inside(path, root)
    if not DIR_FD:
        return _write_by_path(target, chunks)
    with folder_handle(target.parent, root, create=True) as folder:
        return _write_in_folder(folder, target, chunks)


def _write_in_folder(folder: int, target: Path, chunks: Sequence[bytes | memoryview]) -> int:
    name = target.name
    try:
        info: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    writable = info is None or os.access(name, os.W_OK, dir_fd=folder, follow_symlinks=False)
    mode = mode_to_keep(info, writable, target)
    tmp = temp_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = open_at(folder, tmp, flags, target, 0o600)
    try:
        with open(fd, "wb") as handle:
            size = sum(handle.write(chunk) for chunk in chunks)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise
    os.fsync(folder)
    return size


def _write_by_path(target: Path, chunks: Sequence[bytes | memoryview]) -> int:
    """The fallback without `dir_fd` (Windows): the resolved path was checked, then written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        info: os.stat_result | None = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    mode = mode_to_keep(info, info is None or os.access(target, os.W_OK), target)
    tmp = target.parent / temp_name(target.name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            size = sum(handle.write(chunk) for chunk in chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if os.name != "nt":
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return size


@contextlib.contextmanager
def locked(folder: Path, *, root: Path) -> Iterator[None]:
    """Exclusive lock on a memory folder (created if needed) for one read-modify-write; the
    stale temp files of a killed writer are removed once it is held.

    On POSIX the folder itself is locked with flock, so no lock file is left in the project.
    """
    resolved = ensure_inside(folder, root)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        from filelock import FileLock

        resolved.mkdir(parents=True, exist_ok=True)
        with FileLock(str(resolved / ".legion-llm.lock")):
            _remove_temp_files_by_path(resolved)
            yield
        return
    with _lock_handle(resolved, root) as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if DIR_FD:
                remove_own_temp_files(os.listdir(fd), lambda name: os.unlink(name, dir_fd=fd))
            else:
                _remove_temp_files_by_path(resolved)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _remove_temp_files_by_path(folder: Path) -> None:
    remove_own_temp_files((p.name for p in folder.iterdir()), lambda name: (folder / name).unlink())


@contextlib.contextmanager
def _lock_handle(folder: Path, root: Path) -> Iterator[int]:
    if DIR_FD:
        with folder_handle(folder, root, create=True) as fd:
            yield fd
        return
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def or_print(failure: str, record_text: str, data: dict[str, Any] | None = None) -> Iterator[None]:
    """An OSError inside (disk full, read-only, a file where the folder should be) becomes
    WriteFailedError carrying what would have been written: the CLI prints it and exits 3."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        message = f"{failure}: {reason}" if reason else failure
        raise WriteFailedError(message, record_text=record_text, data=data) from exc


def write_or_fail(
    path: Path,
    content: str | Sequence[bytes | memoryview],
    *,
    root: Path,
    record_text: str,
    record: dict[str, Any],
) -> None:
    """Write atomically and check the size on disk; on any failure raise WriteFailedError carrying
    the record, so the caller prints it and nothing is lost."""
    with or_print(f"could not write {path}", record_text, {"record": record}):
        written = atomic_write(path, content, root=root)
        if os.stat(path).st_size != written:
            raise OSError("the file on disk does not hold the new row after writing")
