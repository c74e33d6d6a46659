"""memory_distill_patterns with `phases`: a phase's summaries alone over MCP, a preview unless
apply=true, and the host route asking for an engine."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.stdio import Calls, with_server

TODAY = "2026-12-01"


@pytest.mark.subprocess
def test_a_phase_is_distilled_over_mcp(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    (root / ".planning/memory/OUTCOMES.md").unlink()
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()

    async def scenario(calls: Calls) -> dict[str, Any]:
        preview = await calls.ok("memory_distill_patterns", phases=["3"], engine="offline",
                                 today=TODAY)  # fmt: skip
        written = (root / ".planning/memory/PATTERNS.md").exists()
        host = await calls.ok("memory_distill_patterns", phases=["3"], engine="host")
        answered = await calls.ok("memory_distill_patterns", ticket=host["data"]["ticket"],
                                  proposal={"patterns": []}, apply=True)  # fmt: skip
        applied = await calls.ok("memory_distill_patterns", phases=["3"], engine="offline",
                                 apply=True, today=TODAY)  # fmt: skip
        return {
            "preview": preview,
            "written": written,
            "applied": applied,
            "host": host,
            "answered": answered,
        }

    seen = with_server(root, cwd, scenario)
    preview = seen["preview"]["data"]
    assert preview["dry_run"] and preview["written"] and not seen["written"]
    assert preview["plans"] == ["03-01", "03-02"] and preview["candidates"] == []
    applied = seen["applied"]["data"]
    assert [w["id"] for w in applied["written"]] == [
        f"P-{n:03d}" for n in range(1, 1 + len(applied["written"]))
    ]
    assert "03-01" in seen["host"]["data"]["inputs"]  # the host route distils the phase too
    assert seen["answered"]["ok"] is True  # its ticket carries the phase to the submit
