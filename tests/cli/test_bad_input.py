"""Bad input is refused in one line, exit 1, with nothing written, through the CLI (both paths) and
the MCP server: importance outside 1-5, an empty recall topic, an unknown filter value, a mission
id that names no mission or several. A mission id that names one mission is its folder; a learning
added twice reinforces the stored one instead of writing a copy."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_input_bounds import memory_bytes
from tests.mcp.inprocess import call_tool, call_tools

MISSION = "mission-2026-06-12-audit-export"
OUTCOME = ["outcomes", "add", "--phase", "4", "--plan", "04-05", "--agent", "dev",
           "--outcome", "success", "--summary", "done"]  # fmt: skip

REFUSED = {
    "importance 9": ([*OUTCOME, "--importance", "9"], "error: --importance must be 1 to 5, not 9"),
    "importance 0": ([*OUTCOME, "--importance", "0"], "error: --importance must be 1 to 5, not 0"),
    "empty topic": (["recall", ""], "error: the TOPIC to recall must not be empty"),
    "blank topic": (["recall", "   "], "error: the TOPIC to recall must not be empty"),
    "unknown signal": (["preferences", "recall", "--signal", "bogus"],
                       "error: --signal must be one of positive, negative, corrective, all, not 'bogus'"),
    "unknown decision point": (["preferences", "recall", "--decision-point", "lunch"],
                               "error: --decision-point must be one of review-verdict,"),
    "unknown mission id": (["learnings", "extract", "mission-1999", "--engine", "offline"],
                           "error: mission-1999 is neither a folder nor a mission id under "
                           ".mission-control/missions/"),
}  # fmt: skip


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("case", REFUSED)
@pytest.mark.parametrize("as_json", [False, True])
def test_bad_input_is_one_line_exit_1_and_nothing_written(
    case: str, as_json: bool, cli: Any, demo_project: Path
) -> None:
    args, message = REFUSED[case]
    before = tree(demo_project)
    result = cli(*args, *(["--json"] if as_json else []), "--root", demo_project)
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(message), result.stderr
    if as_json:
        assert (
            result.json["ok"] is False
            and message.removeprefix("error: ") in (result.json["data"]["error"])
        )
    else:
        assert result.stdout == ""
    assert tree(demo_project) == before


def test_the_fast_path_refuses_what_typer_refuses(cli: Any, demo_project: Path) -> None:
    from legion_llm.entry import run

    # `recall TOPIC` goes through typer; `outcomes recall` and `compact` through the fast path:
    # an unknown phase is the same one line on both.
    fast = cli("compact", "99", "--root", demo_project)
    assert run(["compact", "99", "--root", str(demo_project)], fast=False) == fast.exit_code == 1


def test_a_mission_id_is_its_folder_and_an_ambiguous_one_is_refused(
    cli: Any, demo_project: Path
) -> None:
    by_id = cli("learnings", "extract", MISSION, "--dry-run", "--engine", "offline", "--json",
                "--root", demo_project)  # fmt: skip
    assert by_id.exit_code == 0, by_id.stderr
    assert by_id.json["data"]["mission"].endswith(MISSION)
    by_start = cli("learnings", "extract", "mission-2026-06", "--dry-run", "--engine", "offline",
                   "--json", "--root", demo_project)  # fmt: skip
    assert (
        by_start.exit_code == 0
        and by_start.json["data"]["mission"] == by_id.json["data"]["mission"]
    )

    archive = demo_project / ".mission-control/missions/archive"
    shutil.copytree(archive / MISSION, archive / "mission-2026-06-30-other")
    before = tree(demo_project)
    both = cli("learnings", "extract", "mission-2026-06", "--engine", "offline",
               "--root", demo_project)  # fmt: skip
    assert both.exit_code == 1 and both.stderr.count("\n") == 1
    assert "mission 'mission-2026-06' is ambiguous" in both.stderr and MISSION in both.stderr
    assert tree(demo_project) == before


LEARNING = ["learnings", "add", "--title", "Page by keyset", "--body", "Never page by OFFSET.",
            "--category", "pattern", "--tags", "db,paging", "--confidence", "medium"]  # fmt: skip


def test_a_learning_added_again_reinforces_the_stored_one(cli: Any, project: Path) -> None:
    first = cli(*LEARNING, "--json", "--root", project, "--today", "2026-03-01")
    assert first.exit_code == 0 and first.json["data"]["action"] == "added"
    folder = project / ".mission-control/memory"
    path = folder / "page-by-keyset.md"
    written = path.read_bytes()

    again = cli(*LEARNING, "--root", project, "--today", "2026-03-02")
    assert again.exit_code == 0
    assert again.stdout.startswith("Already stored in .mission-control/memory/page-by-keyset.md")
    assert "nothing written" in again.stdout and path.read_bytes() == written

    spaced = [*LEARNING[:2], "--title", "page  by KEYSET", "--body", "Never page\nby OFFSET."]
    other = cli(*spaced, *LEARNING[6:], "--source", "mission-7", "--json", "--root", project,
                "--today", "2026-03-03")  # fmt: skip
    assert other.exit_code == 0, other.stderr
    data = other.json["data"]
    assert data["action"] == "reinforced" and "confidence medium -> high" in data["changes"]
    assert [p.name for p in folder.glob("*.md")] == ["page-by-keyset.md"]
    text = path.read_text(encoding="utf-8")
    assert "confidence: high" in text and "source: mission-7" in text
    assert "2026-03-03" in text and text.count("# Page by keyset") == 1


MCP_REFUSED = [
    ("memory_store", {"kind": "outcome", "phase": "4", "plan": "04-05", "agent": "dev",
                      "outcome": "success", "summary": "done", "importance": 9},
     "argument 'importance' must be a whole number (at least 1, at most 5)"),
    ("memory_recall", {"kind": "topic", "query": "   "}, "the TOPIC to recall must not be empty"),
    ("memory_recall", {"kind": "preferences", "signal": "bogus"}, "signal"),
    ("memory_extract_learnings", {"mission": "mission-1999"}, "mission-1999 is neither a folder"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "message"), MCP_REFUSED)
def test_the_mcp_tools_refuse_the_same_input(
    tool: str, arguments: dict[str, Any], message: str, demo_project: Path
) -> None:
    before = memory_bytes(demo_project)
    result = call_tool(demo_project, tool, arguments)
    assert result.is_error and message in result.text and "\n" not in result.text.strip()
    assert memory_bytes(demo_project) == before


def test_the_mcp_learning_added_twice_is_reinforced_not_copied(project: Path) -> None:
    add = {"title": "Page by keyset", "body": "Never page by OFFSET.", "category": "pattern",
           "tags": ["db", "paging"], "confidence": "medium"}  # fmt: skip
    add = {"kind": "learning", **add}
    first, second = call_tools(project, [("memory_store", add),
                                         ("memory_store", {**add, "source": "mission-7"})])  # fmt: skip
    assert first.data["data"]["action"] == "added"
    assert second.data["data"]["action"] == "reinforced"
    assert len(list((project / ".mission-control/memory").glob("*.md"))) == 1


def test_a_mission_id_works_through_mcp(demo_project: Path) -> None:
    result = call_tool(demo_project, "memory_extract_learnings", {"mission": MISSION,
                                                                  "engine": "offline"})  # fmt: skip
    assert not result.is_error, result.text
    assert result.data["data"]["mission"].endswith(MISSION)
