"""Each tool's read-only and destructive hints, checked against what the tool writes: every tool
is run on its own copy of the demo project and the tree is compared before and after. A read-only
tool writes nothing; an additive one (destructive false) only adds lines and files; a destructive
one is shown changing or removing something that was there."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.client import Client

from legion_llm.entry import run as cli_run
from legion_llm.mcp.server import build_server
from tests.cli.test_host_cli import MISSION, TODAY, offline_answers
from tests.conftest import FIXTURES
from tests.mcp.inprocess import call_tool, call_tools

DAY = date.fromisoformat(TODAY)
MISSION_ID = Path(MISSION).name
KNOWN_ERROR = "psycopg.errors.QueryCanceled: canceling statement due to statement timeout"
SECRET = "-".join(["sk", "ant", "api03", "A1b2C3d4E5f6G7h8" * 5, "AAAAAAAA"])  # made here: no
# key-shaped literal in the repository (tests/redact/test_false_positives.py scans it)
COMPACTED = ".planning/phases/03-fx-rates/03-COMPACTED.md"

Setup = Callable[[Path], list[tuple[str, dict[str, Any]]] | None]


def cli(root: Path, *args: str) -> None:
    assert cli_run([*args, "--root", str(root), "--today", TODAY]) == 0


def old_compacted(root: Path) -> None:
    (root / COMPACTED).write_text("an older COMPACTED.md\n", encoding="utf-8")


def an_unresolved_error(root: Path) -> None:
    cli(root, "errors", "add", "--signature", "E: widget exploded", "--fix", "restart it",
        "--agent", "dev", "--unresolved")  # fmt: skip


def a_secret_in_outcomes(root: Path) -> None:
    cli(root, "outcomes", "add", "--phase", "4", "--plan", "04-09", "--agent", "dev",
        "--outcome", "success", "--summary", "rotated the key")  # fmt: skip
    path = root / ".planning/memory/OUTCOMES.md"
    path.write_text(path.read_text(encoding="utf-8").replace("rotated the key", SECRET), "utf-8")


LEARNING = {"title": "Page by keyset", "body": "Never page by OFFSET.", "category": "pattern",
            "tags": ["db", "paging"], "confidence": "medium"}  # fmt: skip


def a_stored_learning(root: Path) -> None:
    cli(root, "learnings", "add", "--title", LEARNING["title"], "--body", LEARNING["body"],
        "--category", "pattern", "--tags", "db,paging", "--confidence", "medium")  # fmt: skip


def a_second_mission(root: Path) -> None:
    """The mission's learnings stored, and a copy of it under another id (which reinforces them)."""
    cli(root, "learnings", "extract", MISSION, "--engine", "offline")
    copy = root / MISSION.replace(MISSION_ID, "mission-2026-06-14-again")
    shutil.copytree(root / MISSION, copy)
    meta = json.loads((copy / "mission.json").read_text(encoding="utf-8"))
    (copy / "mission.json").write_text(json.dumps({**meta, "id": copy.name}), encoding="utf-8")


def submit(
    tool: str, prepare: str, arguments: dict[str, Any], make: Callable[[Path], Any]
) -> Setup:
    """A *_submit call: its ticket from the prepare tool, its proposal the offline engine's."""

    def setup(root: Path) -> list[tuple[str, dict[str, Any]]]:
        request = call_tool(root, prepare, arguments)
        (proposal,) = offline_answers(root, make(root))
        ticket = request.data["data"]["ticket"]
        return [
            (
                tool,
                {"ticket": ticket, "proposal": proposal, "force": True}
                if tool == "compact_submit"
                else {"ticket": ticket, "proposal": proposal},
            )
        ]

    return setup


def _compact_make(root: Path) -> Any:
    from legion_llm.app.commands.phases import compact_maker
    from legion_llm.memory.phases.find import find_phase

    return compact_maker(find_phase(root, "3"), True)


def _distill_make(root: Path) -> Any:
    from legion_llm.app.commands.distill import distill_maker

    return distill_maker(None)


def _extract_make(root: Path) -> Any:
    from legion_llm.app.commands.learnings import extract_maker

    return extract_maker(root / MISSION.replace(MISSION_ID, "mission-2026-06-14-again"),
                         f"{TODAY}T00:00:00Z")  # fmt: skip


def _both(*steps: Callable[[Path], Any]) -> Callable[[Path], Any]:
    def setup(root: Path) -> Any:
        result = None
        for step in steps:
            result = step(root) or result
        return result

    return setup


OFFLINE = {"engine": "offline"}
# tool -> (what to do first, the call); the call's own arguments are enough for most.
SCENARIOS: dict[str, tuple[Setup | None, dict[str, Any]]] = {
    "outcomes_add": (None, {"phase": 4, "plan": "04-09", "agent": "dev", "outcome": "success",
                            "summary": "shipped"}),
    "outcomes_recall": (None, {}),
    "outcomes_agent_scores": (None, {}),
    "outcomes_archetypes": (None, {}),
    "briefing": (None, {}),
    "signals": (None, {}),
    "recall_topic": (None, {"topic": "audit"}),
    "prune": (None, {}),
    "scan": (a_secret_in_outcomes, {"fix": True}),
    "patterns_add": (None, {"pattern": "p", "context": "c", "reuse_criteria": "r"}),
    "patterns_recall": (None, {}),
    "errors_add": (an_unresolved_error, {"signature": "E: widget exploded", "fix": "replace it",
                                         "agent": "dev", **OFFLINE}),
    "errors_recall": (None, {}),
    "errors_match": (None, {"error_text": KNOWN_ERROR, **OFFLINE}),
    "preferences_add": (None, {"decision_point": "manual-edit", "context": "c", "proposed": "p",
                               "user_choice": "u", "signal": "positive", "agent": "dev"}),
    "preferences_recall": (None, {}),
    "compact": (old_compacted, {"phase": 3, "force": True, **OFFLINE}),
    "compact_suggest": (None, {}),
    "verify_compaction": (lambda root: cli(root, "compact", "3", "--engine", "offline"),
                          {"phase": 3}),
    "phase_context": (None, {"phase": "3"}),
    "distill": (None, {"dry_run": False, **OFFLINE}),
    "learnings_add": (a_stored_learning, {**LEARNING, "source": "mission-7"}),
    "learnings_load": (None, {"goal": "audit export"}),
    "learnings_extract": (a_second_mission, {"mission": "mission-2026-06-14-again", **OFFLINE}),
    "compact_prepare": (None, {"phase": 3}),
    "compact_submit": (_both(old_compacted,
                             submit("compact_submit", "compact_prepare", {"phase": 3, "force": True},
                                    _compact_make)), {}),
    "distill_prepare": (None, {}),
    "distill_submit": (submit("distill_submit", "distill_prepare", {}, _distill_make), {}),
    "learnings_extract_prepare": (None, {"mission": MISSION}),
    "learnings_extract_submit": (_both(a_second_mission, submit(
        "learnings_extract_submit", "learnings_extract_prepare",
        {"mission": "mission-2026-06-14-again"}, _extract_make)), {}),
    "compact_all": (None, {}),
    "batch_status": (None, {"batch_id": "msgbatch_0123"}),
    "batch_collect": (None, {"batch_id": "msgbatch_0123"}),
}  # fmt: skip
# Message Batches need the API: without a key these calls fail before anything is written, so
# their hints are not shown here (tests/batch/ runs them against a fake API).
NEEDS_THE_API = {"compact_all", "batch_status", "batch_collect"}
DESTRUCTIVE_WHY = {
    "prune": "moves rows from OUTCOMES.md to ARCHIVE.md",
    "scan": "fix=true redacts lines in place",
    "errors_add": "replaces the fix of a stored error",
    "compact": "force=true replaces a COMPACTED.md",
    "compact_submit": "force=true replaces a COMPACTED.md",
    "learnings_add": "reinforces a stored learning in place",
    "learnings_extract": "reinforces stored learnings in place",
    "learnings_extract_submit": "reinforces stored learnings in place",
}


def tools() -> dict[str, Any]:
    async def listed() -> dict[str, Any]:
        async with Client(build_server(FIXTURES)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(listed)


TOOLS = tools()


def test_every_tool_has_a_scenario() -> None:
    assert set(SCENARIOS) == set(TOOLS)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def change(before: dict[str, bytes], after: dict[str, bytes]) -> str:
    """none, additive (only new files and new lines) or destructive (a line or file gone)."""
    if before == after:
        return "none"
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            return "destructive"
        lines = iter(new.splitlines())
        if not all(any(line == kept for kept in lines) for line in old.splitlines()):
            return "destructive"
    return "additive"


@pytest.mark.subprocess
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_hints_say_what_the_tool_writes(name: str, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    setup, arguments = SCENARIOS[name]
    calls = (setup(root) if setup else None) or [(name, arguments)]
    before = snapshot(root)
    [result] = call_tools(root, calls, today=DAY)
    seen = change(before, snapshot(root))
    hints = TOOLS[name].annotations
    if name in NEEDS_THE_API:
        assert result.is_error and seen == "none"
        return
    assert not result.is_error, result.text
    if hints.read_only_hint:
        assert seen == "none"
    elif hints.destructive_hint:
        assert seen == "destructive" and name in DESTRUCTIVE_WHY, (name, seen)
    else:
        assert seen == "additive", (name, seen)
