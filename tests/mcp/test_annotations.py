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
    tool: str, arguments: dict[str, Any], make: Callable[[Path], Any], *, apply: bool = True
) -> Setup:
    """A submission: the ticket of the tool's engine=host request, the offline engine's answer
    as the proposal, and `apply`."""

    def setup(root: Path) -> list[tuple[str, dict[str, Any]]]:
        request = call_tool(root, tool, {**arguments, "engine": "host"})
        (proposal,) = offline_answers(root, make(root))
        ticket = request.data["data"]["ticket"]
        extra = {"force": True} if tool == "phase_compact" else {}
        return [(tool, {"ticket": ticket, "proposal": proposal, "apply": apply, **extra})]

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
STORE_OUTCOME = {"kind": "outcome", "phase": 4, "plan": "04-09", "agent": "dev",
                 "outcome": "success", "summary": "shipped"}  # fmt: skip
# (tool, what the case shows) -> (what to do first, the call); a merged tool has a case per kind,
# view or route, so every way it writes is run against its hints.
SCENARIOS: dict[tuple[str, str], tuple[Setup | None, dict[str, Any]]] = {
    ("memory_store", "outcome"): (None, STORE_OUTCOME),
    ("memory_store", "pattern"): (None, {"kind": "pattern", "pattern": "p", "context": "c",
                                         "reuse_criteria": "r"}),
    ("memory_store", "error"): (an_unresolved_error, {"kind": "error",
                                "signature": "E: widget exploded", "fix": "replace it",
                                "agent": "dev", **OFFLINE}),
    ("memory_store", "preference"): (None, {"kind": "preference", "decision_point": "manual-edit",
                                     "context": "c", "proposed": "p", "user_choice": "u",
                                     "signal": "positive", "agent": "dev"}),
    ("memory_store", "learning"): (a_stored_learning, {"kind": "learning", **LEARNING,
                                                       "source": "mission-7"}),
    **{("memory_recall", kind): (None, {"kind": kind, **extra}) for kind, extra in {
        "outcomes": {}, "patterns": {}, "errors": {}, "preferences": {},
        "topic": {"query": "audit"}, "learnings": {"query": "audit export"},
        "match": {"query": KNOWN_ERROR, **OFFLINE}}.items()},
    **{("memory_summary", view): (None, {"view": view})
       for view in ("briefing", "signals", "agent_scores", "archetypes")},
    ("memory_prune", "preview"): (None, {}),
    ("memory_prune", "apply"): (None, {"apply": True}),
    ("memory_scan", "preview"): (a_secret_in_outcomes, {}),
    ("memory_scan", "apply"): (a_secret_in_outcomes, {"apply": True}),
    ("phase_read", "context"): (None, {"phase": "3"}),
    ("phase_read", "verify"): (lambda root: cli(root, "compact", "3", "--engine", "offline"),
                               {"view": "verify", "phase": 3}),
    ("phase_read", "pending"): (None, {"view": "pending"}),
    ("phase_compact", "preview"): (old_compacted, {"phase": 3, "force": True, **OFFLINE}),
    ("phase_compact", "apply"): (old_compacted, {"phase": 3, "force": True, "apply": True,
                                                 **OFFLINE}),
    ("phase_compact", "host request"): (None, {"phase": 3, "engine": "host"}),
    ("phase_compact", "host submit"): (_both(old_compacted, submit(
        "phase_compact", {"phase": 3, "force": True}, _compact_make)), {}),
    ("phase_compact", "host submit preview"): (_both(old_compacted, submit(
        "phase_compact", {"phase": 3, "force": True}, _compact_make, apply=False)), {}),
    ("memory_distill_patterns", "preview"): (None, OFFLINE),
    ("memory_distill_patterns", "apply"): (None, {"apply": True, **OFFLINE}),
    ("memory_distill_patterns", "host request"): (None, {"engine": "host"}),
    ("memory_distill_patterns", "host submit"): (submit("memory_distill_patterns", {},
                                                        _distill_make), {}),
    ("memory_extract_learnings", "preview"): (a_second_mission, {
        "mission": "mission-2026-06-14-again", **OFFLINE}),
    ("memory_extract_learnings", "apply"): (a_second_mission, {
        "mission": "mission-2026-06-14-again", "apply": True, **OFFLINE}),
    ("memory_extract_learnings", "host submit preview"): (_both(a_second_mission, submit(
        "memory_extract_learnings", {"mission": "mission-2026-06-14-again"}, _extract_make,
        apply=False)), {}),
    ("memory_extract_learnings", "host request"): (None, {"mission": MISSION, "engine": "host"}),
    ("memory_extract_learnings", "host submit"): (_both(a_second_mission, submit(
        "memory_extract_learnings", {"mission": "mission-2026-06-14-again"}, _extract_make)), {}),
    ("phase_compact_batch", "submit"): (None, {"action": "submit"}),
    ("phase_compact_batch", "status"): (None, {"batch_id": "msgbatch_0123"}),
    ("phase_compact_batch", "collect"): (None, {"action": "collect", "batch_id": "msgbatch_0123",
                                                "apply": True}),
}  # fmt: skip
# Message Batches need the API: without a key these calls fail before anything is written, so
# their hints are not shown here (tests/batch/ runs them against a fake API).
NEEDS_THE_API = {"phase_compact_batch"}
# Why each destructive tool is: the case that changes or removes what was there.
DESTRUCTIVE_WHY = {
    ("memory_store", "error"): "replaces the failed fix of a stored error",
    ("memory_store", "learning"): "reinforces a stored learning in place",
    ("memory_prune", "apply"): "moves rows from OUTCOMES.md to ARCHIVE.md",
    ("memory_scan", "apply"): "redacts lines in place",
    ("phase_compact", "apply"): "force=true replaces a COMPACTED.md",
    ("phase_compact", "host submit"): "force=true replaces a COMPACTED.md",
    ("memory_extract_learnings", "apply"): "reinforces stored learnings in place",
    ("memory_extract_learnings", "host submit"): "reinforces stored learnings in place",
}
# A tool that may move or delete what is there previews unless told apply=true; memory_store
# is the one without `apply`: it stores what it is given (a failed fix replaced, a learning
# reinforced are that record's own update, never a move or a deletion).
STORES = {"memory_store"}


def tools() -> dict[str, Any]:
    async def listed() -> dict[str, Any]:
        async with Client(build_server(FIXTURES)) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(listed)


TOOLS = tools()


def test_every_tool_has_a_scenario() -> None:
    assert {tool for tool, _ in SCENARIOS} == set(TOOLS)


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


def run_case(case: tuple[str, str], tmp_path: Path) -> tuple[Any, str]:
    """The case's call on its own copy of the demo project: the result and what it changed."""
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    setup, arguments = SCENARIOS[case]
    calls = (setup(root) if setup else None) or [(case[0], arguments)]
    before = snapshot(root)
    [result] = call_tools(root, calls, today=DAY)
    return result, change(before, snapshot(root))


@pytest.mark.subprocess
@pytest.mark.parametrize("case", sorted(SCENARIOS), ids=" ".join)
def test_the_hints_say_what_the_tool_writes(case: tuple[str, str], tmp_path: Path) -> None:
    name = case[0]
    result, seen = run_case(case, tmp_path)
    hints = TOOLS[name].annotations
    if name in NEEDS_THE_API:
        assert result.is_error and seen == "none"
        return
    assert not result.is_error, result.text
    if hints.read_only_hint:
        assert seen == "none"
    elif seen == "destructive":
        assert hints.destructive_hint and case in DESTRUCTIVE_WHY, (case, seen)
    else:
        assert seen in ("none", "additive"), (case, seen)
        assert case not in DESTRUCTIVE_WHY, case  # the case that shows it did not


def test_every_destructive_tool_has_a_case_that_shows_it() -> None:
    for name, tool in TOOLS.items():
        shown = {tool_name for tool_name, _ in DESTRUCTIVE_WHY}
        assert bool(tool.annotations.destructive_hint) == (name in shown or name in NEEDS_THE_API)


def test_a_tool_that_moves_or_deletes_previews_unless_told_to_apply() -> None:
    """Each destructive tool but the store takes `apply` (false by default) and says so."""
    for name, tool in TOOLS.items():
        if not tool.annotations.destructive_hint or name in STORES:
            continue
        apply = tool.input_schema["properties"].get("apply")
        assert apply is not None and apply["default"] is False, name
        assert "apply=true" in tool.description, name
    for case in DESTRUCTIVE_WHY:
        if case[0] not in STORES:
            assert SCENARIOS[case][1].get("apply") or case[1] == "host submit", case


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "case", sorted(c for c in SCENARIOS if c[1].endswith("preview")), ids=" ".join
)
def test_a_preview_writes_nothing(case: tuple[str, str], tmp_path: Path) -> None:
    result, seen = run_case(case, tmp_path)
    assert not result.is_error, result.text
    assert seen == "none", case
