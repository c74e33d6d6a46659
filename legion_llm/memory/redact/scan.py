"""`legion-llm scan [--fix]`: secrets already written into the memory files and compacted
summaries, listed by file, line and kind (never the value); `fix` redacts them in place, each
file re-read and replaced atomically under its folder's lock. Only the secrets change: line
endings, a byte-order mark and every other character stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.memory.files import atomic_write, locked
from legion_llm.memory.redact.core import Redactor
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
    warnings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Nothing left in the files: none found, or every one fixed."""
        return not self.found or {f.path for f in self.found} <= set(self.fixed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "files_scanned": len(self.files),
            "findings": [f.to_dict() for f in self.found],
            "total": len(self.found),
            "fixed_files": self.fixed,
            "clean": self.clean,
        }


def memory_files(root: Path) -> list[Path]:
    """Every file legion-llm writes: .planning/memory/*.md, .mission-control/memory/**/*.md and
    the phases' *-COMPACTED.md (wherever under .planning/), inside the root only."""
    paths = MemoryPaths(root)
    found = [
        *_markdown(paths.memory_dir, recursive=False),
        *_markdown(root / MISSION_CONTROL / "memory", recursive=True),
        *(p for p in _markdown(root / PLANNING, recursive=True) if p.name.endswith("COMPACTED.md")),
    ]
    inside = root.resolve()
    unique = dict.fromkeys(p for p in found if p.is_file() and p.resolve().is_relative_to(inside))
    return sorted(unique)


def _markdown(folder: Path, *, recursive: bool) -> Iterator[Path]:
    if folder.is_dir():
        yield from folder.rglob("*.md") if recursive else folder.glob("*.md")


def _text(path: Path, report: ScanReport, name: str) -> str | None:
    """The file as text, byte-order mark and line endings included; None (and a warning) when
    it cannot be read as UTF-8."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report.warnings.append(f"warning: {name} was not scanned ({_reason(exc)})")
        return None


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    return "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc.strerror or exc)


def scan(root: Path, redactor: Redactor, *, fix: bool = False) -> ScanReport:
    report = ScanReport()
    for path in memory_files(root):
        name = path.relative_to(root).as_posix()
        report.files.append(name)
        text = _text(path, report, name)
        if text is None:
            continue
        findings = redactor.find(text)
        report.found += [Found(name, f.line(text), f.kind) for f in findings]
        if fix and findings:
            try:
                _fix(root, path, redactor)
            except (OSError, UnicodeDecodeError) as exc:
                report.warnings.append(f"warning: could not fix {name} ({_reason(exc)})")
                continue
            report.fixed.append(name)
    return report


def _fix(root: Path, path: Path, redactor: Redactor) -> None:
    """Redact one file in place: read again under the lock (another writer may have added a
    row since the scan), replace atomically."""
    with locked(path.parent, root=root):
        text = path.read_bytes().decode("utf-8")
        done = redactor.redact(text)
        if done.text != text:
            atomic_write(path, done.text, root=root)
