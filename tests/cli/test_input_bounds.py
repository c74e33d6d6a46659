"""A huge argument is never stored: each text field an add command writes into memory holds at
most MAX_STORED_CHARS characters (a 20 MB summary made every later briefing take seconds); past
that, one clear line (exit 1) and nothing written. Through the CLI and the in-process MCP server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.app.context import MAX_STORED_CHARS
from tests.mcp.inprocess import call_tools

HUGE = "x" * (MAX_STORED_CHARS + 1)
AT_LIMIT = "y" * MAX_STORED_CHARS
OUTCOME = ["outcomes", "add", "--phase", "4", "--plan", "04-05", "--agent", "dev",
           "--outcome", "success"]  # fmt: skip
ADDS = {
    "outcomes add --summary": [*OUTCOME, "--summary", HUGE],
    "outcomes add --tags": [*OUTCOME, "--summary", "ok", "--tags", ",".join(["t" * 99] * 300)],
    "patterns add --context": ["patterns", "add", "--pattern", "p", "--context", HUGE,
                               "--reuse-criteria", "r"],
    "errors add --fix": ["errors", "add", "--signature", "E: boom", "--fix", HUGE, "--agent", "dev"],
    "preferences add --proposed": ["preferences", "add", "--decision-point", "manual-edit",
                                   "--context", "c", "--proposed", HUGE, "--user-choice", "u",
                                   "--signal", "positive", "--agent", "dev"],
    "learnings add --body": ["learnings", "add", "--title", "A title", "--body", HUGE,
                             "--category", "pattern", "--tags", "a,b", "--confidence", "low"],
}  # fmt: skip


def memory_bytes(root: Path) -> dict[str, bytes]:
    folders = [root / ".planning/memory", root / ".mission-control/memory"]
    return {str(p): p.read_bytes() for f in folders if f.is_dir() for p in sorted(f.iterdir())}


@pytest.mark.parametrize("name", ADDS)
def test_a_field_past_the_bound_is_refused_and_nothing_is_written(
    name: str, cli: Any, demo_project: Path
) -> None:
    before = memory_bytes(demo_project)
    result = cli(*ADDS[name], "--root", demo_project)
    option = name.split()[-1]
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"error: {option} is ")
    assert f"at most {MAX_STORED_CHARS:,} characters" in result.stderr
    assert memory_bytes(demo_project) == before


@pytest.mark.subprocess
def test_a_field_at_the_bound_is_stored(cli: Any, demo_project: Path) -> None:
    result = cli(*OUTCOME, "--summary", AT_LIMIT, "--root", demo_project, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["record"]["summary"] == AT_LIMIT


def test_mcp_store_tools_refuse_a_huge_field_the_same_way(demo_project: Path) -> None:
    calls = [
        ("memory_store", {"kind": "outcome", "phase": "4", "plan": "04-05", "agent": "dev", "outcome": "success",
                          "summary": HUGE}),
        ("memory_store", {"kind": "learning", "title": "t", "body": HUGE, "category": "gotcha", "tags": ["a", "b"],
                           "confidence": "low"}),
    ]  # fmt: skip
    before = memory_bytes(demo_project)

    for result in call_tools(demo_project, calls):
        assert result.is_error and f"at most {MAX_STORED_CHARS:,} characters" in result.text
    assert memory_bytes(demo_project) == before
