"""Shared by the hostile-API tests: a copy of the demo project, a key in the environment, and
the switch that turns the offline fallback off (Claude or nothing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.llm.conftest import TEST_KEY

MISSION = ".mission-control/missions/archive/mission-2026-06-12-audit-export"


def demo(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


def use_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key in the environment, one HTTP attempt per call (the CLI sleeps for real otherwise)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setenv("LEGION_LLM_MAX_ATTEMPTS", "1")


def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude or nothing: a failed call is the command's error (LEGION_LLM_FALLBACK=0)."""
    monkeypatch.setenv("LEGION_LLM_FALLBACK", "0")
