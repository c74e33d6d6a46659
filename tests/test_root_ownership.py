"""Another user's folder is not your project (issue 34, point 3): the upward search for a project
root stops at a `.planning/` the current user does not own, with one line saying why and how to
allow it (--root DIR, or LEGION_LLM_SAFE_ROOTS), as git does with `safe.directory`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from legion_llm import project as project_module
from legion_llm.errors import InputError
from legion_llm.project import ForeignRootError, find_root, planning_root

OTHER_UID = 54321
ADD = ("outcomes", "add", "--phase", "4", "--plan", "04-01", "--agent", "dev", "--outcome",
       "success", "--summary", "mine, not theirs")  # fmt: skip


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A shared folder whose .planning/ another user made, and your working folder under it
    (without a .planning/ of its own); the current folder is yours."""
    top = tmp_path / "shared"
    (top / ".planning" / "memory").mkdir(parents=True)
    work = top / "me" / "work"
    work.mkdir(parents=True)
    theirs = top / ".planning"
    real_owner = project_module._owner
    monkeypatch.setattr(
        project_module,
        "_owner",
        lambda path: OTHER_UID if Path(path) == theirs else real_owner(path),
    )
    monkeypatch.delenv("SUDO_UID", raising=False)
    monkeypatch.delenv("LEGION_LLM_SAFE_ROOTS", raising=False)
    monkeypatch.chdir(work)
    return top, work


def test_the_search_stops_at_a_planning_folder_another_user_owns(
    shared: tuple[Path, Path],
) -> None:
    top, work = shared
    with pytest.raises(ForeignRootError) as refused:
        find_root(work)
    message = str(refused.value)
    assert str(top / ".planning") in message and f"uid {OTHER_UID}" in message
    assert f"--root {top}" in message and "LEGION_LLM_SAFE_ROOTS" in message
    assert "\n" not in message and isinstance(refused.value, InputError)
    assert planning_root(work) is None  # the hooks say nothing of it


def test_no_command_reads_or_writes_another_users_project(
    cli: Any, shared: tuple[Path, Path]
) -> None:
    top, _ = shared
    added = cli(*ADD)
    assert added.exit_code == InputError.exit_code
    assert added.stderr.strip().count("\n") == 0 and "owned by another user" in added.stderr
    assert "Traceback" not in added.stderr
    assert list((top / ".planning" / "memory").iterdir()) == []  # nothing of yours went there


def test_naming_the_project_allows_it(
    cli: Any, shared: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    top, work = shared
    assert cli(*ADD, "--root", top).exit_code == 0  # --root names it: used whoever owns it
    monkeypatch.setenv("LEGION_LLM_SAFE_ROOTS", os.pathsep.join(["/elsewhere", str(top)]))
    assert find_root(work) == top.resolve()
    monkeypatch.setenv("LEGION_LLM_SAFE_ROOTS", "*")
    assert planning_root(work) == top.resolve()


def test_your_own_project_under_a_shared_folder_is_found_first(
    shared: tuple[Path, Path],
) -> None:
    _, work = shared
    (work / ".planning").mkdir()
    assert find_root(work) == work.resolve()


def test_under_sudo_the_invoking_users_project_is_theirs(
    shared: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    top, work = shared
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setenv("SUDO_UID", str(OTHER_UID))
    assert find_root(work) == top.resolve()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_a_folder_really_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUDO_UID", raising=False)
    monkeypatch.delenv("LEGION_LLM_SAFE_ROOTS", raising=False)
    (tmp_path / ".planning").mkdir()
    os.chown(tmp_path / ".planning", OTHER_UID, -1)
    (tmp_path / "work").mkdir()
    with pytest.raises(ForeignRootError):
        find_root(tmp_path / "work")
