"""Every command takes --root, --today and --json (the README's promise), and each one parses
--today: a date that is not one is the same usage error everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import typer

from legion_llm.entry import build_app
from tests.mcp.inprocess import call_tools

COMMON = ("--root", "--today", "--json")


def every_command() -> Iterator[tuple[str, Any]]:
    """(name, click command) for every leaf command of the app, sub-commands included."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            yield " ".join(path), command
            return
        for name, sub in subcommands.items():
            yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(build_app()), [])


def test_the_walk_sees_every_command() -> None:
    names = {name for name, _ in every_command()}
    assert len(names) >= 30
    assert {"learnings load", "eval errors", "llm check", "mcp", "demo"} <= names


@pytest.mark.parametrize("name", sorted(name for name, _ in every_command()))
def test_every_command_accepts_root_today_and_json(name: str) -> None:
    command = dict(every_command())[name]
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert set(COMMON) <= options, f"{name} lacks {sorted(set(COMMON) - options)}"


NEEDS = {  # arguments a command needs before it looks at --today
    "learnings load": ["--goal", "audit"],
    "verify-compaction": ["3"],
    "phase-context": ["3"],
    "llm check": [],
    "llm selftest": [],
    "eval distill": [],
    "eval learnings": [],
    "eval errors": [],
    "mcp": [],
    "demo": [],
}


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_a_bad_today_is_a_usage_error_in_the_commands_that_lacked_it(
    name: str, cli: Any, demo_project: Path
) -> None:
    args = [*name.split(), *NEEDS[name], "--today", "someday"]
    result = cli(*args, "--root", demo_project, "--json")
    assert result.exit_code == 2, result.stderr
    assert result.stderr == "error: --today must be a date like 2026-03-01, not 'someday'\n"
    assert result.json["ok"] is False


def test_learnings_load_takes_today(cli: Any, demo_project: Path) -> None:
    result = cli("learnings", "load", "--goal", "postgres export", "--today", "2026-06-15",
                 "--root", demo_project, "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["learnings"]


@pytest.mark.subprocess
def test_demo_takes_root_today_and_json(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEGION_LLM_ENGINE", "offline")
    target = tmp_path / "walkthrough"
    result = cli("demo", "--root", target, "--today", "2026-06-20", "--json")
    assert result.exit_code == 0, result.stderr
    envelope = json.loads(result.stdout)  # stdout is the one object; the walkthrough is on stderr
    data = envelope["data"]
    assert envelope["ok"] is True and data["root"] == str(target) and data["today"] == "2026-06-20"
    assert (target / ".planning/phases/03-fx-rates/03-COMPACTED.md").is_file()
    assert str(target / ".planning/memory/OUTCOMES.md") in data["files"]
    assert data["usage"]["offline_calls"] >= 3 and "Session briefing" in result.stderr
    stored = (target / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    assert "| O-014 | 2026-06-20 |" in stored  # --today is the day the demo stores its outcomes
    again = cli("demo", "--root", target)
    assert again.exit_code == 1 and "not empty" in again.stderr  # never over a folder in use


def test_mcp_today_dates_every_call_that_passes_none(demo_project: Path) -> None:
    briefing = {"view": "briefing", "detail": "detailed"}
    calls = [("memory_summary", briefing), ("memory_summary", {**briefing, "today": "2026-06-15"})]
    default, given = call_tools(demo_project, calls, today=date(2027, 6, 1))
    scores = [r.data["data"]["recent_outcomes"][0]["decay_score"] for r in (default, given)]
    assert scores[0] < scores[1]  # a year of decay on the server's day
