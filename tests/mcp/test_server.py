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
    "outcomes_add", "outcomes_recall", "outcomes_agent_scores", "outcomes_archetypes", "briefing",
    "signals", "recall_topic", "prune", "patterns_add", "patterns_recall", "errors_add",
    "errors_recall", "errors_match", "preferences_add", "preferences_recall", "compact",
    "compact_suggest", "verify_compaction", "phase_context", "distill", "learnings_add",
    "learnings_load", "learnings_extract", "compact_prepare", "compact_submit", "distill_prepare",
    "distill_submit", "learnings_extract_prepare", "learnings_extract_submit", "scan",
    "compact_all", "batch_status", "batch_collect",
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
    add = tools["outcomes_add"].input_schema  # flat, like every tool; fields of the CLI's dataclass
    assert set(add["required"]) == {"phase", "plan", "agent", "outcome", "summary"}
    assert set(add["properties"]) == {f.name for f in fields(OutcomeInput)} | {"today"}
    assert add["properties"]["review_cycles"]["default"] == 1
    assert add["properties"]["tags"]["type"] == "array" and "$defs" not in add
    assert tools["distill"].input_schema["properties"]["dry_run"]["default"] is True
    assert tools["compact"].input_schema["properties"]["dry_run"]["default"] is False
    assert tools["outcomes_recall"].input_schema["properties"]["limit"]["minimum"] == 1
    signal = tools["preferences_add"].input_schema["properties"]["signal"]
    assert signal["enum"] == ["positive", "negative", "corrective"]
    assert tools["outcomes_recall"].annotations.read_only_hint is True
    assert tools["outcomes_add"].annotations.read_only_hint is False
    assert tools["outcomes_add"].annotations.destructive_hint is False  # appends only
    assert tools["prune"].annotations.destructive_hint is True  # moves rows to ARCHIVE.md
    assert all(tool.description for tool in tools.values())


def test_store_then_recall_give_the_same_json_as_the_cli(tmp_path: Path, cli: Any) -> None:
    root, twin = copy_demo(tmp_path, "mcp"), copy_demo(tmp_path, "cli")

    async def scenario(calls: Calls) -> dict[str, Any]:
        return {
            "add": await calls.ok("outcomes_add", **RECORD, today=TODAY),
            "recall": await calls.ok("outcomes_recall", tags=["audit-log"], today=TODAY),
            "briefing": await calls.ok("briefing", today=TODAY),
            "signals": await calls.ok("signals", task_types=["backend"], today=TODAY),
            "pattern": await calls.ok(
                "patterns_add",
                pattern="Hash-chain every audit row",
                context="Phase 4",
                reuse_criteria="Any tamper-evident log",
                source="O-012",
                tags=["audit-log"],
                today=TODAY,
            ),
            "patterns": await calls.ok("patterns_recall", tags=["audit-log"], today=TODAY),
            "distill": await calls.ok("distill", today=TODAY),  # a dry run by default
            "extract": await calls.ok("learnings_extract", mission=MISSION, today=TODAY),
            "load": await calls.ok("learnings_load", goal="Export the audit log"),
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
        dry = await calls.ok("compact", phase="3", dry_run=True, today=TODAY)
        assert not compacted.exists()
        return {
            "dry": dry,
            "real": await calls.ok("compact", phase="03-billing-exports", today=TODAY),
            "verify": await calls.ok("verify_compaction", phase="3"),
            "context": await calls.ok("phase_context", phase="3"),
            "add": await calls.ok(
                "errors_add",
                signature=ERROR,
                fix="pip install requests",
                agent="engineering-backend-architect",
                today=TODAY,
            ),
            "match": await calls.ok("errors_match", error_text=SAME_ERROR, today=TODAY),
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
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        ("outcomes_add", {**RECORD, "outcome": "won"},
         "argument 'outcome' must be one of success, partial or failed, not 'won'"),
        ("outcomes_add", {"phase": "4"}, "argument 'plan' is required (a string)"),
        ("outcomes_add", {"record": RECORD}, "argument 'phase' is required"),  # the old nested form
        ("outcomes_recall", {"limit": 0},
         "argument 'limit' must be a whole number (at least 1), not 0"),
        ("briefing", {"today": "yesterday"}, "today must be a date like 2026-03-01"),
        ("compact", {"phase": "9"}, "no folder for phase 9"),
        ("verify_compaction", {"phase": "4"}, "no folder for phase 4"),
        ("learnings_load", {"goal": ""}, "argument 'goal' must be a string of at least 1"),
        ("no_such_tool", {}, "no_such_tool"),
    ]  # fmt: skip

    async def scenario(calls: Calls) -> list[str]:
        messages = []
        for name, arguments, _ in bad_calls:
            messages.append(await calls.error(name, **arguments))
            assert (await calls.ok("briefing", today=TODAY))["ok"] is True  # still serving
        return messages

    messages = with_server(root, elsewhere(tmp_path), scenario)
    for (name, _, expected), message in zip(bad_calls, messages, strict=True):
        assert expected in message, (name, message)
    for message in messages:  # one line each, worded for a tool call, no pydantic report
        assert "\n" not in message and "--" not in message and "pydantic" not in message
    assert "O-014" not in (root / ".planning/memory/OUTCOMES.md").read_text()
