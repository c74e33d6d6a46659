"""Misuse is refused or harmless: an unknown argument is refused in one line naming it; a boolean
is not a number (`phase: true` is not phase 1) and a number is not a boolean (`apply: 1`); every
integer argument carries its bounds in the schema; a kind's foreign argument is refused; the tool
that needs an API key says so and, without one, answers with the route that needs none. Nothing
is written by a refused call."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.inprocess import call_tools
from tests.mcp.test_annotations import DAY, SCENARIOS, TOOLS, snapshot

STORE = {"kind": "outcome", "phase": 4, "plan": "04-09", "agent": "dev", "outcome": "success",
         "summary": "shipped"}  # fmt: skip


def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    return root


def integers(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for name, part in schema["properties"].items():
        for piece in part.get("anyOf", [part]):
            if piece.get("type") in ("integer", "number"):
                found.append((name, {**part, **piece}))
    return found


def test_every_number_argument_carries_its_bounds() -> None:
    seen = set()
    for tool, listed in TOOLS.items():
        for name, part in integers(listed.input_schema):
            if name == "phase":  # a phase number names a folder: any number may
                continue
            assert "minimum" in part and "maximum" in part, (tool, name)
            seen.add(name)
    assert {"importance", "review_cycles", "blockers", "limit", "max_tokens", "max_cost"} <= seen
    importance = TOOLS["memory_store"].input_schema["properties"]["importance"]
    assert (importance["minimum"], importance["maximum"]) == (1, 5)


def test_no_tool_lists_arguments_beyond_its_own() -> None:
    for tool, listed in TOOLS.items():
        assert listed.input_schema["additionalProperties"] is False, tool


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_an_unknown_argument_is_refused_in_one_line_naming_it(tool: str, tmp_path: Path) -> None:
    root = demo(tmp_path)
    case = next(c for c in sorted(SCENARIOS) if c[0] == tool)
    before = snapshot(root)
    [result] = call_tools(root, [(tool, {**SCENARIOS[case][1], "bogus_arg": 1})], today=DAY)
    assert result.is_error and "\n" not in result.text
    assert "unknown argument 'bogus_arg'" in result.text, result.text
    assert snapshot(root) == before


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    ("memory_store", {**STORE, "phase": True}, "argument 'phase' must be"),
    ("memory_store", {**STORE, "importance": True}, "argument 'importance' must be"),
    ("memory_store", {**STORE, "escalated": 1}, "argument 'escalated' must be true or false, not 1"),
    ("memory_store", {**STORE, "importance": 6}, "at most 5"),
    ("memory_store", {**STORE, "blockers": -1}, "at least 0"),
    ("memory_store", {**STORE, "review_cycles": 101}, "at most 100"),
    ("memory_store", {**STORE, "title": "t"}, "kind=outcome does not take title"),
    ("memory_store", {"kind": "pattern", "pattern": "p"}, "kind=pattern needs context"),
    ("memory_recall", {"kind": "outcomes", "query": "q"}, "kind=outcomes does not take query"),
    ("memory_recall", {"kind": "outcomes", "limit": 1001}, "at most 1000"),
    ("memory_summary", {"view": "briefing", "task_types": ["api"]},
     "view=briefing does not take task_types"),
    ("memory_prune", {"apply": "yes"}, "argument 'apply' must be true or false, not 'yes'"),
    ("phase_compact", {"phase": True, "engine": "offline"}, "argument 'phase' must be"),
    ("phase_compact", {"ticket": "t"}, "pass ticket and proposal together"),
    ("phase_read", {"view": "verify"}, "view=verify needs phase"),
    ("memory_extract_learnings", {"engine": "offline"}, "argument 'mission' is required"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "arguments", "message"), REFUSED)
def test_misuse_is_refused_in_one_line_and_writes_nothing(
    tool: str, arguments: dict[str, Any], message: str, tmp_path: Path
) -> None:
    root = demo(tmp_path)
    before = snapshot(root)
    [result] = call_tools(root, [(tool, arguments)], today=DAY)
    assert result.is_error and message in result.text, result.text
    assert "\n" not in result.text and "pydantic" not in result.text
    assert snapshot(root) == before


def test_prune_with_no_arguments_previews(tmp_path: Path) -> None:
    root = demo(tmp_path)
    before = snapshot(root)
    [result] = call_tools(root, [("memory_prune", {})], today=DAY)
    data = result.data["data"]
    assert data["archived"] and data["applied"] is False and snapshot(root) == before


def test_the_tool_that_needs_a_key_says_so_and_names_the_route_without_one(
    tmp_path: Path,
) -> None:
    description = TOOLS["phase_compact_batch"].description
    assert "needs ANTHROPIC_API_KEY" in description and "engine=host" in description
    root = demo(tmp_path)
    results = call_tools(root, [("phase_compact_batch", {"action": action})
                                for action in ("submit", "status", "collect")])  # fmt: skip
    for result in results:
        assert result.is_error and "\n" not in result.text
        assert "needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN" in result.text
        assert "phase_compact (engine=host" in result.text and "--" not in result.text
