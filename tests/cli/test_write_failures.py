"""A write that fails (disk full, a file where the folder should be) loses nothing: like the
stores, `learnings add` and `compact` print what they would have written and exit 3, on the
CLI (human and --json) and as an MCP tool error."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.inprocess import call_tool

BODY = "Sign every audit export with the hash chain head so auditors can check it offline."
LEARNING = ["learnings", "add", "--title", "Sign audit exports with the chain head", "--body", BODY,
            "--category", "pattern", "--tags", "audit-log,export", "--confidence", "high"]  # fmt: skip


def disk_full(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


def test_learnings_add_on_a_full_disk_prints_the_learning(
    cli: Any, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sorted((root / ".mission-control/memory").iterdir())
    monkeypatch.setattr(os, "replace", disk_full)
    human = cli(*LEARNING, "--root", root)
    assert human.exit_code == 3
    assert human.stderr.startswith("error: could not write") and human.stderr.count("\n") == 1
    assert "No space left on device" in human.stderr
    assert BODY in human.stdout and "category: pattern" in human.stdout
    as_json = cli(*LEARNING, "--root", root, "--json")
    assert as_json.exit_code == 3 and as_json.json["ok"] is False
    assert BODY in as_json.json["data"]["record_text"]
    assert sorted((root / ".mission-control/memory").iterdir()) == before  # no temp file left


def test_learnings_add_without_a_memory_folder_prints_the_learning(
    cli: Any, tmp_path: Path
) -> None:
    (tmp_path / ".mission-control").mkdir()
    (tmp_path / ".mission-control/memory").write_text("a file where the folder should be")
    human = cli(*LEARNING, "--root", tmp_path)
    assert human.exit_code == 3 and BODY in human.stdout and human.stderr.count("\n") == 1


def test_compact_on_a_full_disk_prints_the_digest(
    cli: Any, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEGION_LLM_ENGINE", "offline")
    monkeypatch.setattr(os, "replace", disk_full)
    human = cli("compact", "3", "--root", root)
    assert human.exit_code == 3
    assert human.stderr.startswith("error: could not write") and human.stderr.count("\n") == 1
    assert "03-COMPACTED.md" in human.stderr
    assert all(rid in human.stdout for rid in ("FX-01", "FX-02", "FX-03"))
    as_json = cli("compact", "3", "--root", root, "--json")
    assert as_json.exit_code == 3 and as_json.json["ok"] is False
    assert "FX-01" in as_json.json["data"]["record_text"]
    assert not (root / ".planning/phases/03-fx-rates/03-COMPACTED.md").exists()


def test_mcp_learnings_add_on_a_full_disk_returns_the_learning_in_the_error(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    arguments = {"title": "Sign audit exports", "body": BODY, "category": "pattern",
                 "tags": ["audit-log", "export"], "confidence": "high"}  # fmt: skip

    monkeypatch.setattr(os, "replace", disk_full)
    result = call_tool(root, "memory_store", {"kind": "learning", **arguments})
    assert result.is_error and "No space left on device" in result.text and BODY in result.text
