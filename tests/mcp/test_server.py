"""`legion-llm mcp` over stdio with the SDK's own client: tools, results equal to `--json`, errors."""

from __future__ import annotations

import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.outcomes.store import OutcomeInput
from tests.conftest import FIXTURES
from tests.mcp.stdio import Calls, with_server
from tests.pipeline.compaction_cases import copy_case, fingerprint

pytestmark = pytest.mark.subprocess

TODAY = "2026-06-15"
MISSION = ".mission-control/missions/archive/mission-2026-06-12-audit-export"
LEARNINGS = ".mission-control/memory"
TOOLS = {
    "memory_recall", "memory_store", "memory_summary", "memory_prune", "memory_scan",
    "phase_read", "phase_compact", "memory_distill_patterns", "memory_extract_learnings",
    "phase_compact_batch",
}  # fmt: skip
RECORD = {"phase": "4", "plan": "04-03", "agent": "engineering-security-engineer",
          "outcome": "success", "summary": "Audit export signed with the hash chain head",
          "tags": ["audit-log", "security"]}  # fmt: skip
ERROR = (
    'Traceback (most recent call last):\n  File "/srv/ledger/fx/import.py", line 12, in <module>\n'
    "    import requests\nModuleNotFoundError: No module named 'requests'"
)
SAME_ERROR = (
    'Traceback (most recent call last):\n  File "C:\\\\work\\\\ledger\\\\sync.py", line 3, in '
    "<module>\n    import requests\nModuleNotFoundError: No module named 'requests'"
)


def copy_demo(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir(exist_ok=True)
    return folder


def test_lists_every_tool_with_typed_schemas(tmp_path: Path) -> None:
    async def scenario(calls: Calls) -> dict[str, Any]:
        return {tool.name: tool for tool in (await calls.session.list_tools()).tools}

    tools = with_server(copy_demo(tmp_path, "demo"), elsewhere(tmp_path), scenario)
    assert set(tools) == TOOLS
    store = tools["memory_store"].input_schema  # flat: every kind's fields, the kind's own checked
    assert store["required"] == ["kind"] and store["additionalProperties"] is False
    assert {f.name for f in fields(OutcomeInput)} <= set(store["properties"])
    assert store["properties"]["tags"]["type"] == "array" and "$defs" not in store
    assert "title" not in store["properties"]["plan"]  # no generated titles
    for tool in ("memory_distill_patterns", "phase_compact", "memory_prune", "memory_scan"):
        assert tools[tool].input_schema["properties"]["apply"]["default"] is False, tool
    limit = tools["memory_recall"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (0, 1000)
    signal = tools["memory_store"].input_schema["properties"]["signal"]
    assert signal["enum"] == ["positive", "negative", "corrective"]
    assert tools["memory_recall"].annotations.read_only_hint is True
    assert tools["memory_store"].annotations.read_only_hint is False
    assert tools["memory_distill_patterns"].annotations.destructive_hint is False  # appends only
    assert tools["memory_prune"].annotations.destructive_hint is True  # moves rows to ARCHIVE.md
    assert all(tool.description for tool in tools.values())


def test_store_then_recall_give_the_same_json_as_the_cli(tmp_path: Path, cli: Any) -> None:
    root, twin = copy_demo(tmp_path, "mcp"), copy_demo(tmp_path, "cli")

    async def scenario(calls: Calls) -> dict[str, Any]:
        return {
            "add": await calls.ok("memory_store", kind="outcome", **RECORD, today=TODAY),
            "recall": await calls.ok(
                "memory_recall", kind="outcomes", tags=["audit-log"], detail="detailed", today=TODAY
            ),
            "briefing": await calls.ok("memory_summary", detail="detailed", today=TODAY),
            "signals": await calls.ok(
                "memory_summary",
                view="signals",
                task_types=["backend"],
                detail="detailed",
                today=TODAY,
            ),
            "pattern": await calls.ok(
                "memory_store",
                kind="pattern",
                pattern="Hash-chain every audit row",
                context="Phase 4",
                reuse_criteria="Any tamper-evident log",
                source="O-012",
                tags=["audit-log"],
                today=TODAY,
            ),
            "patterns": await calls.ok(
                "memory_recall", kind="patterns", tags=["audit-log"], detail="detailed", today=TODAY
            ),
            "distill": await calls.ok("memory_distill_patterns", today=TODAY),  # a preview
            "extract": await calls.ok(
                "memory_extract_learnings", mission=MISSION, apply=True, today=TODAY
            ),
            "load": await calls.ok(
                "memory_recall", kind="learnings", query="Export the audit log", detail="detailed"
            ),
        }

    got = with_server(root, elsewhere(tmp_path), scenario)
    assert got["add"]["data"]["record"]["id"] == "O-014"
    assert "O-014" in [r["id"] for r in got["recall"]["data"]["records"]]
    assert got["pattern"]["data"]["record"]["id"] == "P-001"  # the dry run wrote nothing
    assert got["distill"]["data"]["dry_run"] is True and got["distill"]["data"]["written"]
    written = got["extract"]["data"]["written"]
    assert written and all((root / LEARNINGS / item["file"]).is_file() for item in written)
    added = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent",
                "engineering-security-engineer", "--outcome", "success", "--summary",
                RECORD["summary"], "--tags", "audit-log,security", "--today", TODAY,
                "--root", twin, "--json")  # fmt: skip
    assert got["add"] == added.json
    same_root = {
        "recall": ["outcomes", "recall", "--tags", "audit-log"],
        "briefing": ["briefing"],
        "signals": ["signals", "--task-types", "backend"],
        "patterns": ["patterns", "recall", "--tags", "audit-log"],
        "load": ["learnings", "load", "--goal", "Export the audit log"],
    }
    for name, args in same_root.items():
        today = [] if name == "load" else ["--today", TODAY]
        assert got[name] == cli(*args, *today, "--root", root, "--json").json, name


def test_errors_match_and_compact_dry_run_on_a_phase_fixture(tmp_path: Path, cli: Any) -> None:
    root = copy_case("legion-spec-billing-exports", tmp_path)
    before = fingerprint(root)
    compacted = root / ".planning/phases/03-billing-exports/03-COMPACTED.md"

    async def scenario(calls: Calls) -> dict[str, Any]:
        dry = await calls.ok("phase_compact", phase="3", today=TODAY)  # a preview
        assert not compacted.exists()
        return {
            "dry": dry,
            "real": await calls.ok(
                "phase_compact", phase="03-billing-exports", apply=True, today=TODAY
            ),
            "verify": await calls.ok("phase_read", view="verify", phase="3"),
            "context": await calls.ok("phase_read", phase="3"),
            "add": await calls.ok(
                "memory_store",
                kind="error",
                signature=ERROR,
                fix="pip install requests",
                agent="engineering-backend-architect",
                today=TODAY,
            ),
            "match": await calls.ok(
                "memory_recall", kind="match", query=SAME_ERROR, detail="detailed", today=TODAY
            ),
        }

    got = with_server(root, elsewhere(tmp_path), scenario)
    dry = got["dry"]["data"]
    assert dry["dry_run"] is True and dry["written"] is False
    assert all(rid in dry["text"] for rid in ("BILL-01", "BILL-02", "BILL-03", "BILL-04"))
    assert got["real"]["data"]["written"] is True and compacted.is_file()
    assert got["real"]["data"]["engine"] == "offline"  # no key reaches the server
    assert got["verify"]["ok"] is True and got["verify"]["data"]["missing_paths"] == []
    assert got["context"]["data"]["source"] == "compacted"
    after = fingerprint(root)
    assert after.pop(".planning/memory/ERRORS.md") and after == before  # originals untouched
    [match] = got["match"]["data"]["matches"]
    assert match["id"] == got["add"]["data"]["record"]["id"] == "E-001"
    cli_match = cli("errors", "match", SAME_ERROR, "--today", TODAY, "--root", root, "--json")
    assert got["match"] == cli_match.json
    assert got["verify"] == cli("verify-compaction", "3", "--root", root, "--json").json


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    root = copy_demo(tmp_path, "demo")
    outcome = {"kind": "outcome", **RECORD}
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        ("memory_store", {**outcome, "outcome": "won"},
         "argument 'outcome' must be one of success, partial or failed, not 'won'"),
        ("memory_store", {"kind": "outcome", "phase": "4"}, "kind=outcome needs plan"),
        ("memory_store", {"record": RECORD}, "unknown argument 'record'"),  # the old nested form
        ("memory_recall", {"kind": "outcomes", "limit": 0}, "limit must be 1 or more"),
        ("memory_summary", {"today": "yesterday"}, "today must be a date like 2026-03-01"),
        ("phase_compact", {"phase": "9"}, "no folder for phase 9"),
        ("phase_read", {"view": "verify", "phase": "4"}, "no folder for phase 4"),
        ("memory_recall", {"kind": "learnings", "query": ""},
         "argument 'query' must be a string of at least 1"),
        ("no_such_tool", {}, "no_such_tool"),
    ]  # fmt: skip

    async def scenario(calls: Calls) -> list[str]:
        messages = []
        for name, arguments, _ in bad_calls:
            messages.append(await calls.error(name, **arguments))
            assert (await calls.ok("memory_summary", today=TODAY))["ok"] is True  # still serving
        return messages

    messages = with_server(root, elsewhere(tmp_path), scenario)
    for (name, _, expected), message in zip(bad_calls, messages, strict=True):
        assert expected in message, (name, message)
    for message in messages:  # one line each, worded for a tool call, no pydantic report
        assert "\n" not in message and "--" not in message and "pydantic" not in message
    assert "O-014" not in (root / ".planning/memory/OUTCOMES.md").read_text()
