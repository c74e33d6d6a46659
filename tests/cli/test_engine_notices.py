"""The no-key notice (`notice: no ANTHROPIC_API_KEY ... using the offline engine`) is said only
when an engine is asked: a command that ends before (a refusal, a match answered from the stored
knowledge, nothing to distil) says nothing of engines; one that asks says it once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.factory import NO_KEY_NOTICE

NOTICE = NO_KEY_NOTICE.split("(", 1)[0]  # the notice without its reason
TODAY = ["--today", "2026-06-15"]
KNOWN = "psycopg.errors.QueryCanceled: canceling statement due to statement timeout"


def test_a_match_answered_from_stored_knowledge_says_nothing_of_engines(
    cli: Any, demo_project: Path
) -> None:
    result = cli("errors", "match", KNOWN, "--json", "--root", demo_project, *TODAY)
    assert result.exit_code == 0 and result.json["data"]["answer"] == "fix"
    assert result.stderr == ""
    assert result.json["warnings"] == []


@pytest.mark.subprocess  # compaction may start the claude-code probe
def test_a_refused_compaction_says_only_why(cli: Any, demo_project: Path) -> None:
    first = cli("compact", "3", "--root", demo_project, *TODAY)  # the engine is asked
    assert first.exit_code == 0, first.stderr
    assert first.stderr.count(NOTICE) == 1
    again = cli("compact", "3", "--root", demo_project, *TODAY)  # refused: no --force
    assert again.exit_code != 0
    assert again.stderr.startswith("error: ") and again.stderr.count("\n") == 1
    assert NOTICE not in again.stderr


def test_a_command_that_asks_the_engine_says_it_once(cli: Any, project: Path) -> None:
    result = cli("llm", "selftest", "--json", "--root", project, *TODAY)
    assert result.exit_code == 0
    assert result.stderr.count(NOTICE) == 1
    assert [n for n in result.json["data"]["notices"] if n.startswith(NOTICE)]


def test_nothing_to_distil_says_nothing_of_engines(cli: Any, project: Path) -> None:
    result = cli("distill", "--dry-run", "--json", "--root", project, *TODAY)
    assert result.exit_code == 0
    assert NOTICE not in result.stderr and result.json["data"]["notices"] == []
