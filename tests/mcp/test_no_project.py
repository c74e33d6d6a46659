"""A server started where there is no project (no --root, no .planning/ in the client's folder
or above it) stores nothing there: a store asks for a project, as the command line does; one
started with --root makes the memory folder of the project it was given."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.inprocess import call_tools

OUTCOME = {"kind": "outcome", "phase": "1", "plan": "01-01", "agent": "dev", "outcome": "success",
           "summary": "Stored from a session"}  # fmt: skip


def test_a_store_where_no_project_was_started_asks_for_one(tmp_path: Path) -> None:
    (stored,) = call_tools(tmp_path, [("memory_store", OUTCOME)], root_given=False)
    assert stored.is_error and "no .planning/" in stored.text and "init" in stored.text
    assert list(tmp_path.iterdir()) == []  # nothing written, no folder made


def test_a_server_given_its_root_makes_the_memory_folder_there(tmp_path: Path) -> None:
    (stored,) = call_tools(tmp_path, [("memory_store", OUTCOME)], root_given=True)
    assert not stored.is_error, stored.text
    assert (tmp_path / ".planning/memory/OUTCOMES.md").is_file()
