"""The tool surface is sized for a model's context: at most 12 tools and 4,000 cl100k tokens of
`tools/list` (what a client that loads definitions pays every turn), namespaced names, a concise
answer by default where a tool returns lists, and every tool of the old 33-tool surface still
reachable as a kind, view, route or argument of the new one (nothing a user could do is lost)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.tokens import count_tokens
from legion_llm.mcp.server import listed_tools
from tests.conftest import FIXTURES, REPO
from tests.mcp.inprocess import call_tools
from tests.mcp.test_annotations import DAY, KNOWN_ERROR, MISSION

MAX_TOOLS = 12
MAX_TOKENS = 4_000
LISTED = listed_tools(FIXTURES / "demo-project")
TEXT = json.dumps({"tools": LISTED}, separators=(",", ":"), ensure_ascii=False)
PHASE3 = {"phase": 3}
# Each tool of the old surface (its `command` in the answer) -> the call that does it now.
OLD_TOOLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "outcomes_add": ("outcomes add", "memory_store", {"kind": "outcome", "phase": 4,
                     "plan": "04-09", "agent": "dev", "outcome": "success", "summary": "s"}),
    "outcomes_recall": ("outcomes recall", "memory_recall", {"kind": "outcomes"}),
    "outcomes_agent_scores": ("outcomes agent-scores", "memory_summary",
                              {"view": "agent_scores"}),
    "outcomes_archetypes": ("outcomes archetypes", "memory_summary", {"view": "archetypes"}),
    "briefing": ("briefing", "memory_summary", {}),
    "signals": ("signals", "memory_summary", {"view": "signals"}),
    "recall_topic": ("recall", "memory_recall", {"kind": "topic", "query": "audit"}),
    "prune": ("prune", "memory_prune", {"apply": True}),
    "scan": ("scan", "memory_scan", {"apply": True}),
    "patterns_add": ("patterns add", "memory_store", {"kind": "pattern", "pattern": "p",
                     "context": "c", "reuse_criteria": "r"}),
    "patterns_recall": ("patterns recall", "memory_recall", {"kind": "patterns"}),
    "errors_add": ("errors add", "memory_store", {"kind": "error", "signature": "E: x",
                   "fix": "f", "agent": "dev", "engine": "offline"}),
    "errors_recall": ("errors recall", "memory_recall", {"kind": "errors", "query": "timeout"}),
    "errors_match": ("errors match", "memory_recall", {"kind": "match", "query": KNOWN_ERROR,
                     "engine": "offline"}),
    "preferences_add": ("preferences add", "memory_store", {"kind": "preference",
                        "decision_point": "manual-edit", "context": "c", "proposed": "p",
                        "user_choice": "u", "signal": "positive", "agent": "dev"}),
    "preferences_recall": ("preferences recall", "memory_recall", {"kind": "preferences",
                           "signal": "negative"}),
    "compact": ("compact", "phase_compact", {**PHASE3, "engine": "offline", "apply": True}),
    "compact_suggest": ("compact", "phase_read", {"view": "pending"}),
    "phase_context": ("phase-context", "phase_read", PHASE3),
    "verify_compaction": ("verify-compaction", "phase_read", {"view": "verify", **PHASE3}),
    "compact_prepare": ("compact --prepare", "phase_compact", {**PHASE3, "engine": "host"}),
    "distill": ("distill", "memory_distill_patterns", {"engine": "offline", "apply": True}),
    "distill_prepare": ("distill --prepare", "memory_distill_patterns", {"engine": "host"}),
    "learnings_add": ("learnings add", "memory_store", {"kind": "learning", "title": "t",
                      "body": "b", "category": "gotcha", "tags": ["a", "b"],
                      "confidence": "low"}),
    "learnings_load": ("learnings load", "memory_recall", {"kind": "learnings", "query": "audit"}),
    "learnings_extract": ("learnings extract", "memory_extract_learnings",
                          {"mission": MISSION, "engine": "offline", "apply": True}),
    "learnings_extract_prepare": ("learnings extract --prepare", "memory_extract_learnings",
                                  {"mission": MISSION, "engine": "host"}),
}  # fmt: skip
# The submits (phase_compact, memory_distill_patterns, memory_extract_learnings with ticket and
# proposal) are run by tests/mcp/test_host_tools.py; compact_all, batch_status and batch_collect
# (phase_compact_batch's submit, status and collect) by tests/batch/test_mcp_batch.py.
ELSEWHERE = {"compact_submit", "distill_submit", "learnings_extract_submit", "compact_all",
             "batch_status", "batch_collect"}  # fmt: skip


def test_at_most_12_tools_and_4000_tokens_of_tools_list() -> None:
    assert len(LISTED) <= MAX_TOOLS
    assert count_tokens(TEXT) <= MAX_TOKENS


def test_names_are_namespaced_by_what_they_work_on() -> None:
    for tool in LISTED:
        assert re.fullmatch(r"(memory|phase)_[a-z]+(_[a-z]+)*", tool["name"]), tool["name"]


def test_the_benchmark_prints_the_figure_the_docs_quote() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_mcp_tools
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    found = bench_mcp_tools.measure(FIXTURES / "demo-project")
    assert (found["tools"], found["tokens"]) == (len(LISTED), count_tokens(TEXT))
    docs = (REPO / "docs/mcp.md").read_text(encoding="utf-8")
    assert "benchmarks/bench_mcp_tools.py" in docs
    assert f"{found['tools']} tools, {found['bytes']:,} bytes, {found['tokens']:,} tokens" in docs


def test_list_answers_are_concise_unless_asked_for_detail(tmp_path: Path) -> None:
    for tool in LISTED:
        detail = tool["inputSchema"]["properties"].get("detail")
        if tool["name"] in ("memory_recall", "memory_summary"):
            assert detail is not None and detail["default"] == "concise", tool["name"]
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    concise, detailed = call_tools(root, [
        ("memory_recall", {"kind": "outcomes"}),
        ("memory_recall", {"kind": "outcomes", "detail": "detailed"}),
    ], today=DAY)  # fmt: skip
    short, full = concise.data["data"]["records"], detailed.data["data"]["records"]
    assert [r["id"] for r in short] == [r["id"] for r in full] and short
    assert all(set(s) < set(f) for s, f in zip(short, full, strict=True))
    assert "decay_score" in full[0] and "decay_score" not in short[0]
    assert all({"id", "summary", "outcome"} <= set(r) for r in short)
    assert len(concise.text) < len(detailed.text)


# The 33 tools before the surface was merged (issue 32).
OLD_TOOL_NAMES = {
    "outcomes_add", "outcomes_recall", "outcomes_agent_scores", "outcomes_archetypes", "briefing",
    "signals", "recall_topic", "prune", "patterns_add", "patterns_recall", "errors_add",
    "errors_recall", "errors_match", "preferences_add", "preferences_recall", "compact",
    "compact_suggest", "verify_compaction", "phase_context", "distill", "learnings_add",
    "learnings_load", "learnings_extract", "compact_prepare", "compact_submit", "distill_prepare",
    "distill_submit", "learnings_extract_prepare", "learnings_extract_submit", "scan",
    "compact_all", "batch_status", "batch_collect",
}  # fmt: skip


def test_every_old_tool_is_covered() -> None:
    assert len(OLD_TOOL_NAMES) == 33
    assert set(OLD_TOOLS) | ELSEWHERE == OLD_TOOL_NAMES


@pytest.mark.subprocess
@pytest.mark.parametrize("old", sorted(OLD_TOOLS))
def test_what_an_old_tool_did_a_new_call_does(old: str, tmp_path: Path) -> None:
    command, tool, arguments = OLD_TOOLS[old]
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    first = [("phase_compact", {**PHASE3, "apply": True})] if old == "verify_compaction" else []
    *_, result = call_tools(root, [*first, (tool, arguments)], today=DAY)
    assert not result.is_error, result.text
    assert result.data["command"] == command


def test_a_concise_record_keeps_what_it_says(tmp_path: Path) -> None:
    """Concise leaves out what ranks or files a record; a pattern's context (where it worked)
    and a preference's proposal (what the user chose against) are what the record says."""
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    pattern = {
        "kind": "pattern",
        "pattern": "Write the audit row in the same transaction",
        "context": "Phase 4 audit log",
        "reuse_criteria": "Any traceable change",
    }
    preference = {
        "kind": "preference",
        "decision_point": "review-verdict",
        "context": "Phase 4 review",
        "proposed": "needs work",
        "user_choice": "approve",
        "signal": "corrective",
        "agent": "engineering-security-engineer",
    }
    *_, patterns, preferences = call_tools(root, [
        ("memory_store", pattern), ("memory_store", preference),
        ("memory_recall", {"kind": "patterns"}),
        ("memory_recall", {"kind": "preferences"}),
    ], today=DAY)  # fmt: skip
    assert all("context" in r for r in patterns.data["data"]["records"])
    assert all({"context", "proposed", "user_choice"} <= set(r)
               for r in preferences.data["data"]["records"])  # fmt: skip
    assert patterns.data["data"]["records"] and preferences.data["data"]["records"]
