"""Reading and writing memory files: atomic replace, fsync, one lock per memory folder, and a
guard that refuses any write outside the project root."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError, LegionError, WriteFailedError


class NotUtf8Error(UnicodeDecodeError):
    """A UnicodeDecodeError that names the file (the CLI prints it as one line)."""

    def __init__(self, path: Path, cause: UnicodeDecodeError) -> None:
        super().__init__(cause.encoding, cause.object, cause.start, cause.end, cause.reason)
        self.path = path

    def __str__(self) -> str:
        return f"{self.path} is not UTF-8 text (byte {self.start}: {self.reason})"


def read_text(path: Path) -> str | None:
    """The file's text (a UTF-8 byte-order mark dropped), or None when it does not exist.
    Undecodable bytes raise UnicodeDecodeError."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(path, exc) from None


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


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: Path, content: str | Sequence[bytes | memoryview], *, root: Path) -> int:
    """Write `content` (text, or byte chunks) to `path` through a temp file in the same folder, fsync, rename, fsync folder.

    Either the old or the new content is on disk at every instant; a failure leaves no temp file.
    Returns the number of bytes written.
    """
    chunks = [content.encode("utf-8")] if isinstance(content, str) else content
    target = ensure_inside(path, root)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = _new_file_mode()
    else:
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
        if not os.access(target, os.W_OK):  # a rename would replace a file we may not change
            raise PermissionError(errno.EACCES, "Permission denied", str(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
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
    _fsync_folder(target.parent)
    return size


def _fsync_folder(folder: Path) -> None:
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_temp_files(folder: Path) -> None:
    """Temp files left by a writer that was killed mid-write (only the lock holder writes)."""
    for stale in folder.glob(".*.md.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()


@contextlib.contextmanager
def locked(folder: Path, *, root: Path) -> Iterator[None]:
    """Exclusive lock on a memory folder (created if needed) for one read-modify-write.

    On POSIX the folder itself is locked with flock, so no lock file is left in the project.
    """
    ensure_inside(folder, root)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        from filelock import FileLock

        with FileLock(str(folder / ".legion-llm.lock")):
            _remove_stale_temp_files(folder)
            yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _remove_stale_temp_files(folder)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
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
