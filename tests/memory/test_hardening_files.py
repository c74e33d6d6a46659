"""Issue 17 (attack pass), the file layer: temp files, non-regular files, symlinks out of the
root, a symlink swapped in between the check and the write, unreadable files.

Every reader and writer goes through memory/files.py, so most cases are checked there and once
through a command a user would run."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from legion_llm.errors import LegionError
from legion_llm.memory import files
from legion_llm.memory.files import atomic_write, locked, read_text
from legion_llm.memory.learnings.read import read_learnings
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE, read_outcomes
from legion_llm.project import MemoryPaths
from tests.hostile import unblocking

LEARNING = (
    "---\ntags:\n  - postgres\n  - docker-compose\nsource: mission/m-1\n"
    "extractedAt: 2026-03-01T10:00:00Z\nconfidence: medium\ncategory: gotcha\n---\n\n"
    "# Start the postgres container before the tests\n\nRun `docker compose up -d db` first.\n"
)
ROW = (
    "| O-001 | 2026-01-05 | main | 1 | 01-01 | dev | backend | success | 2 | api | "
    "The first record |\n"
)


@pytest.fixture
def project(tmp_path: Path) -> MemoryPaths:
    paths = MemoryPaths(tmp_path / "project")
    paths.memory_dir.mkdir(parents=True)
    paths.learnings_dir.mkdir(parents=True)
    return paths


def add(cli: Any, root: Path, summary: str = "stored") -> Any:
    return cli(
        "outcomes", "add", "--root", root, "--phase", "1", "--plan", "01-01", "--agent", "dev",
        "--outcome", "success", "--summary", summary, "--task-type", "backend", "--json",
    )  # fmt: skip


# ---------------------------------------------------------------- 2. temp files


def _killed_writer(target: str, root: str) -> None:
    """Dies (like SIGKILL) after its temp file is written, before the rename."""

    def die(fd: int) -> None:
        os._exit(9)

    os.fsync = die  # type: ignore[assignment]
    atomic_write(Path(target), "half of a new file\n", root=Path(root))


@pytest.mark.subprocess
def test_a_locked_write_removes_only_its_own_stale_temp_files(
    project: MemoryPaths, cli: Any
) -> None:
    """A user's `.notes.md.backup.tmp` survives; the temp file of a killed writer is removed."""
    mine = project.memory_dir / ".notes.md.backup.tmp"
    mine.write_text("the user's own file\n")
    also_mine = project.memory_dir / ".OUTCOMES.md.k2l4m0.tmp"
    also_mine.write_text("looks like an old temp name\n")
    context = multiprocessing.get_context("fork")
    writer = context.Process(target=_killed_writer, args=(str(project.outcomes), str(project.root)))
    writer.start()
    writer.join(timeout=60)
    assert writer.exitcode == 9
    stale = [p for p in project.memory_dir.iterdir() if p not in (mine, also_mine)]
    assert len(stale) == 1 and stale[0].read_text() == "half of a new file\n"
    assert add(cli, project.root).exit_code == 0
    assert mine.read_text() == "the user's own file\n"
    assert also_mine.read_text() == "looks like an old temp name\n"
    assert not stale[0].exists()
    assert sorted(p.name for p in project.memory_dir.iterdir()) == sorted(
        [mine.name, also_mine.name, "OUTCOMES.md"]
    )


# ---------------------------------------------------------------- 7. FIFOs and other non-files


@pytest.fixture
def fifo_outcomes(project: MemoryPaths) -> Iterator[Path]:
    os.mkfifo(project.outcomes)
    yield project.outcomes


def test_the_reader_helper_refuses_a_fifo_without_blocking(fifo_outcomes: Path) -> None:
    with pytest.raises(OSError, match="not a regular file"):
        unblocking(lambda: read_text(fifo_outcomes), [fifo_outcomes])


@pytest.mark.subprocess
def test_recall_and_add_with_a_fifo_named_outcomes_md_warn_and_do_not_hang(
    project: MemoryPaths, fifo_outcomes: Path, cli: Any
) -> None:
    recall = unblocking(
        lambda: cli("outcomes", "recall", "--root", project.root, "--json"), [fifo_outcomes]
    )
    assert recall.exit_code == 0
    assert recall.json["data"]["records"] == []
    assert any("not a regular file" in w for w in recall.json["warnings"])
    added = unblocking(lambda: add(cli, project.root), [fifo_outcomes])
    assert added.exit_code == 1
    assert "not a regular file" in added.json["data"]["error"]
    assert fifo_outcomes.is_fifo()


def test_a_fifo_among_the_learnings_is_one_warning(project: MemoryPaths) -> None:
    fifo = project.learnings_dir / "aaa.md"
    os.mkfifo(fifo)
    (project.learnings_dir / "good.md").write_text(LEARNING)
    found = unblocking(lambda: read_learnings(project.learnings_dir), [fifo])
    assert [item.file for item in found.learnings] == ["good.md"]
    assert len(found.warnings) == 1 and "aaa.md" in found.warnings[0]
    assert "not a regular file" in found.warnings[0]


def test_a_write_never_replaces_a_fifo(fifo_outcomes: Path, project: MemoryPaths) -> None:
    with pytest.raises(OSError, match="not a regular file"):
        atomic_write(fifo_outcomes, "text\n", root=project.root)
    assert fifo_outcomes.is_fifo()


# ---------------------------------------------------------------- 17. reads out of the root


def test_reads_do_not_follow_a_symlink_out_of_the_root(
    project: MemoryPaths, tmp_path: Path, cli: Any
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(LEARNING)
    (outside / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + ROW)
    (project.learnings_dir / "evil.md").symlink_to(outside / "secret.md")
    project.outcomes.symlink_to(outside / "OUTCOMES.md")

    learnings = cli("learnings", "load", "--root", project.root, "--goal", "postgres", "--json")
    assert learnings.exit_code == 0 and learnings.json["data"]["learnings"] == []
    assert any(
        "evil.md" in w and "outside the project root" in w for w in learnings.json["warnings"]
    )
    recall = cli("outcomes", "recall", "--root", project.root, "--json")
    assert recall.exit_code == 0 and recall.json["data"]["records"] == []
    assert any("outside the project root" in w for w in recall.json["warnings"])


def test_any_project_file_linked_out_of_the_root_is_refused(
    project: MemoryPaths, tmp_path: Path
) -> None:
    """Not only memory files: the catalog and settings.json under the root are contained too."""
    (tmp_path / "elsewhere.md").write_text("| ID | Task Types |\n|---|---|\n")
    catalog = project.root / "skills" / "agent-registry" / "CATALOG.md"
    catalog.parent.mkdir(parents=True)
    catalog.symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(OSError, match="outside the project root"):
        read_text(catalog)
    assert read_text(tmp_path / "elsewhere.md") is not None  # no project: nothing to leave


def test_a_symlink_inside_the_root_is_still_read(project: MemoryPaths) -> None:
    shared = project.root / "shared"
    shared.mkdir()
    (shared / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + ROW)
    project.outcomes.symlink_to(shared / "OUTCOMES.md")
    assert [r.id for r in read_outcomes(project.outcomes).records] == ["O-001"]


def test_a_phase_summary_linked_out_of_the_root_is_refused(
    project: MemoryPaths, tmp_path: Path, cli: Any
) -> None:
    phase = project.planning / "phases" / "01-setup"
    phase.mkdir(parents=True)
    (phase / "01-01-SUMMARY.md").write_text("# Plan 01 summary\n\nBuilt `src/app.ts`.\n")
    (tmp_path / "elsewhere.md").write_text("# Someone else's notes\n\nSECRET-TEXT\n")
    (phase / "01-02-SUMMARY.md").symlink_to(tmp_path / "elsewhere.md")
    result = cli("phase-context", "1", "--root", project.root, "--json")
    assert "SECRET-TEXT" not in result.stdout + result.stderr
    assert "outside the project root" in result.stdout + result.stderr


# ---------------------------------------------------------------- 13. check and write in one step


def test_a_folder_swapped_for_a_symlink_after_the_check_is_not_written_through(
    project: MemoryPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker wins the race: right after the root check, `.planning/memory` becomes a
    symlink to a folder outside the root. The write must not land there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    check = files.ensure_inside

    def check_then_swap(path: Path, root: Path) -> Path:
        resolved = check(path, root)
        if path.name == "OUTCOMES.md":
            project.memory_dir.rename(project.planning / "memory-moved")
            project.memory_dir.symlink_to(outside, target_is_directory=True)
        return resolved

    monkeypatch.setattr(files, "ensure_inside", check_then_swap)
    with pytest.raises((OSError, LegionError)):
        atomic_write(project.outcomes, OUTCOMES_TEMPLATE, root=project.root)
    assert list(outside.iterdir()) == []


def test_locking_a_folder_that_is_a_symlink_out_of_the_root_is_refused(
    project: MemoryPaths, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (project.root / ".planning" / "linked").symlink_to(outside, target_is_directory=True)
    with pytest.raises(LegionError, match="outside the project root"):  # noqa: SIM117
        with locked(project.root / ".planning" / "linked", root=project.root):
            pass


def test_the_fallback_without_dir_fd_still_writes_and_refuses(
    project: MemoryPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows has no dir_fd: the path-based fallback (resolve, check, write) stays in use there."""
    monkeypatch.setattr(files, "DIR_FD", False)
    with locked(project.memory_dir, root=project.root):
        atomic_write(project.outcomes, OUTCOMES_TEMPLATE + ROW, root=project.root)
    assert [r.id for r in read_outcomes(project.outcomes).records] == ["O-001"]
    with pytest.raises(LegionError, match="outside the project root"):
        atomic_write(tmp_path / "x.md", "x", root=project.root)


# ---------------------------------------------------------------- 19. unreadable files


def _deny(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make the one reader's open fail with EACCES for `name` (tests may run as root, where a
    chmod 000 file is still readable)."""
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path).endswith(name) and not flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", fake_open)


def test_an_unreadable_learning_says_permission_denied(
    project: MemoryPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.learnings_dir / "locked.md").write_text(LEARNING)
    _deny(monkeypatch, "locked.md")
    found = read_learnings(project.learnings_dir)
    assert found.learnings == []
    assert len(found.warnings) == 1
    assert "permission denied" in found.warnings[0].lower()
    assert "UTF-8" not in found.warnings[0]


def test_an_unreadable_outcomes_file_says_permission_denied(
    project: MemoryPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.outcomes.write_text(OUTCOMES_TEMPLATE + ROW)
    _deny(monkeypatch, "OUTCOMES.md")
    parsed = read_outcomes(project.outcomes)
    assert parsed.records == []
    assert any("permission denied" in w.lower() for w in parsed.warnings)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads a chmod 000 file anyway (the simulated tests above cover this user)",
)
def test_a_chmod_000_learning_says_permission_denied(project: MemoryPaths) -> None:
    path = project.learnings_dir / "locked.md"
    path.write_text(LEARNING)
    path.chmod(0)
    try:
        found = read_learnings(project.learnings_dir)
    finally:
        path.chmod(0o644)
    assert len(found.warnings) == 1 and "permission denied" in found.warnings[0].lower()


STORE_ARGS = {
    "patterns": ["--pattern", "p", "--context", "c", "--reuse-criteria", "r"],
    "errors": ["--signature", "Error: x", "--fix", "f", "--agent", "dev"],
    "preferences": ["--decision-point", "review-verdict", "--context", "c", "--proposed",
                    "p", "--user-choice", "u", "--signal", "positive", "--agent", "dev"],
}  # fmt: skip


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["patterns", "errors", "preferences"])
def test_a_store_into_a_knowledge_file_that_cannot_be_read_says_why(
    command: str, project: MemoryPaths, tmp_path: Path, cli: Any
) -> None:
    """Not "could not be parsed" (that sends the user to fix a file that is fine): the reason."""
    outside = tmp_path / "outside.md"
    outside.write_text("# mine\n")
    args = STORE_ARGS[command]
    target = project.memory_dir / f"{command.upper()}.md"
    target.symlink_to(outside)
    linked = cli(command, "add", *args, "--root", project.root)
    assert linked.exit_code != 0 and "could not be parsed" not in linked.stderr
    assert f"{target.name} leads outside the project root" in linked.stderr
    assert outside.read_text() == "# mine\n"
    target.unlink()
    os.mkfifo(target)
    fifo = unblocking(lambda: cli(command, "add", *args, "--root", project.root), [target])
    assert fifo.exit_code != 0 and f"{target.name} is not a regular file (a FIFO)" in fifo.stderr


def test_distill_into_a_patterns_file_that_cannot_be_read_says_why(
    project: MemoryPaths, tmp_path: Path, cli: Any
) -> None:
    (tmp_path / "outside.md").write_text("# mine\n")
    project.patterns.symlink_to(tmp_path / "outside.md")
    result = cli("distill", "--engine", "offline", "--root", project.root)
    assert result.exit_code != 0 and "could not be parsed" not in result.stderr
    assert "PATTERNS.md leads outside the project root" in result.stderr


UNPARSEABLE = {
    "prose with a pipe": (b"# Notes\n\nkeep a | b apart\n", "could not be parsed; fix it by hand"),
    "binary": (bytes(range(256)) * 8, "is not UTF-8"),
}


@pytest.mark.subprocess
@pytest.mark.parametrize("content", UNPARSEABLE.values(), ids=UNPARSEABLE.keys())
@pytest.mark.parametrize("command", ["patterns", "errors", "preferences", "distill"])
def test_a_store_into_a_knowledge_file_without_its_table_is_one_error_line(
    command: str, content: tuple[bytes, str], project: MemoryPaths, cli: Any
) -> None:
    """Such a file is read as "could not be parsed"; a store into it was an internal error."""
    data, reason = content
    (project.memory_dir / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + ROW.replace("2 |", "5 |"))
    target = project.memory_dir / (
        "PATTERNS.md" if command == "distill" else f"{command.upper()}.md"
    )
    target.write_bytes(data)
    args = ["--engine", "offline"] if command == "distill" else ["add", *STORE_ARGS[command]]
    result = cli(command, *args, "--root", project.root)
    assert result.exit_code == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and target.name in errors[0] and reason in errors[0], result.stderr
    assert "internal error" not in result.stderr
    assert target.read_bytes() == data
