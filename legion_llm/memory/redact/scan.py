"""`legion-llm scan [--fix]`: secrets already written into the memory files and compacted
summaries, listed by file, line and kind (never the value); `fix` redacts them in place, each
file re-read and replaced atomically under its folder's lock. Only the secrets change: line
endings, a byte-order mark, a byte that is not UTF-8 and every other character stay as they were.

A line that is not UTF-8 is one warning and the rest of its file is scanned; a file that cannot be
scanned at all (binary, unreadable) is listed as unscanned and keeps the scan from passing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.memory.files import (
    atomic_write,
    locked,
    read_bytes,
    read_problem,
    undecodable_lines,
)
from legion_llm.memory.redact.core import Lines, Redactor
from legion_llm.project import MISSION_CONTROL, PLANNING, MemoryPaths


@dataclass(frozen=True)
class Found:
    path: str  # relative to the project root
    line: int
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "kind": self.kind}


@dataclass
class ScanReport:
    files: list[str] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)  # files rewritten by --fix
    unscanned: list[str] = field(default_factory=list)  # files that could not be read as text
    warnings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Nothing left in the files: every file scanned, and none found or every one fixed."""
        fixed = not self.found or {f.path for f in self.found} <= set(self.fixed)
        return fixed and not self.unscanned

    def to_dict(self) -> dict[str, Any]:
        return {
            "files_scanned": len(self.files),
            "findings": [f.to_dict() for f in self.found],
            "total": len(self.found),
            "fixed_files": self.fixed,
            "unscanned": self.unscanned,
            "clean": self.clean,
        }


def candidates(root: Path) -> list[tuple[Path, bool]]:
    """(path, is a symbolic link) of every file `scan` must read: every file legion-llm writes
    (.planning/memory/*.md, .mission-control/memory/**/*.md and the phases' *-COMPACTED.md
    wherever under .planning/), and each
    symbolic link where one could be (a link to a file or a folder is never followed, so what
    it leads to is not scanned: it is listed as unscanned instead)."""
    paths = MemoryPaths(root)
    found = [
        *_markdown(paths.memory_dir, recursive=False, wanted=_any_markdown),
        *_markdown(root / MISSION_CONTROL / "memory", recursive=True, wanted=_any_markdown),
        *_markdown(root / PLANNING, recursive=True, wanted=_compacted),
    ]
    return sorted(dict.fromkeys(found))


def _any_markdown(name: str) -> bool:
    return name.endswith(".md")


def _compacted(name: str) -> bool:
    return name.endswith("COMPACTED.md")


def _markdown(
    folder: Path, *, recursive: bool, wanted: Callable[[str], bool]
) -> Iterator[tuple[Path, bool]]:
    if folder.is_symlink():
        yield folder, True
        return
    if not folder.is_dir():
        return
    for here, folders, files in os.walk(folder):  # never follows a link
        base = Path(here)
        for name in folders:
            if (base / name).is_symlink():
                yield base / name, True  # what it holds is unknown: not scanned
        for name in files:
            path = base / name
            if path.is_symlink():
                if wanted(name):
                    yield path, True
            elif wanted(name) and path.is_file():
                yield path, False
        if not recursive:
            break


def _text(root: Path, path: Path) -> str:
    """The file as text, byte-order mark and line endings included, a byte that is not UTF-8
    kept as a lone surrogate (written back as that byte); OSError or UnicodeDecodeError (a
    binary file) when it cannot be scanned."""
    data = read_bytes(path, root=root) or b""
    if b"\x00" in data:
        raise UnicodeDecodeError("utf-8", data, data.index(b"\x00"), len(data), "binary")
    return data.decode("utf-8", "surrogateescape")


def _not_scanned(name: str, exc: OSError | UnicodeDecodeError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"warning: {name} was not scanned (not UTF-8 text)"
    return f"warning: {name} {read_problem(exc)}; it was not scanned"


def _read(root: Path, path: Path, report: ScanReport, name: str) -> str | None:
    try:
        text = _text(root, path)
    except (OSError, UnicodeDecodeError) as exc:
        report.warnings.append(_not_scanned(name, exc))
        report.unscanned.append(name)
        return None
    for line, byte in undecodable_lines(text.split("\n")).items():
        report.warnings.append(
            f"warning: {name} line {line + 1} is not UTF-8 text (byte 0x{byte:02x}); "
            "the rest of the file was scanned"
        )
    return text


def scan(root: Path, redactor: Redactor, *, fix: bool = False) -> ScanReport:
    report = ScanReport()
    for path, linked in candidates(root):
        name = path.relative_to(root).as_posix()
        if linked:
            report.warnings.append(f"warning: {name} is a symbolic link; not followed, not scanned")
            report.unscanned.append(name)
            continue
        report.files.append(name)
        text = _read(root, path, report, name)
        if text is None:
            continue
        findings = redactor.find(text)
        lines = Lines(text)
        report.found += [Found(name, lines.of(f), f.kind) for f in findings]
        if fix and findings:
            try:
                _fix(root, path, redactor)
            except (OSError, UnicodeDecodeError) as exc:
                reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc.strerror
                report.warnings.append(f"warning: could not fix {name} ({reason or exc})")
                continue
            report.fixed.append(name)
    return report


def _fix(root: Path, path: Path, redactor: Redactor) -> None:
    """Redact one file in place: read again under the lock (another writer may have added a
    row since the scan), replace atomically."""
    with locked(path.parent, root=root):
        text = _text(root, path)
        done = redactor.redact(text)
        if done.text != text:
            atomic_write(path, done.text, root=root, keep_undecodable=True)
