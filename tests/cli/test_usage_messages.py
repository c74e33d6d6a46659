"""What the command line says when it is used wrongly: a bare command group prints its help and
no empty `error:` line; the --json envelope names the command, never its arguments."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer

from legion_llm.entry import build_app, command_names
from legion_llm.errors import EXIT_USAGE

TODAY = ["--today", "2026-06-15"]


def _groups() -> list[str]:
    """Every top-level command (the plugins' included) that is a group of subcommands."""
    app = typer.main.get_command(build_app())
    commands = app.commands  # type: ignore[attr-defined]  # the root is a group
    return [name for name in command_names() if hasattr(commands[name], "commands")]


GROUPS = _groups()


def test_the_walk_finds_the_groups() -> None:
    assert {"outcomes", "llm", "eval", "batch", "hook"} <= set(GROUPS)


@pytest.mark.parametrize("words", [[], *([g] for g in GROUPS)], ids=lambda w: " ".join(w) or "-")
def test_a_bare_group_prints_its_help_and_no_error_line(cli: Any, words: list[str]) -> None:
    """Its help is the answer; exit 2 (usage) so a script whose subcommand went missing fails."""
    result = cli(*words)
    assert result.exit_code == EXIT_USAGE
    assert f"Usage: legion-llm {' '.join(words)}".rstrip() in " ".join(result.stdout.split())
    assert result.stderr == ""


def test_no_error_line_is_ever_empty(cli: Any) -> None:
    for words in [["outcomes", "nosuch"], ["--nosuch"], ["compact", "--nosuch"], ["nosuch"]]:
        result = cli(*words)
        assert result.exit_code == EXIT_USAGE
        for line in result.stderr.splitlines():
            assert not re.match(r"error:\s*(\(|$)", line), line


# (a failing command line, a succeeding one): the same command
SAME_COMMAND = [
    (["compact", "9"], ["compact", "--suggest"]),
    (["outcomes", "recall", "--limit", "0"], ["outcomes", "recall"]),
    (["errors", "match"], ["errors", "match", "httpx.ReadTimeout: The read operation timed out"]),
    (["recall", " "], ["recall", "rates"]),
    (["phase-context", "9"], ["phase-context", "3"]),
    (
        ["learnings", "load", "--goal", "x", "--max-tokens", "nan"],
        ["learnings", "load", "--goal", "x"],
    ),
    (["briefing", "extra"], ["briefing"]),
    (["patterns", "recall", "--limit", "x"], ["patterns", "recall"]),
]


@pytest.mark.parametrize(("bad", "good"), SAME_COMMAND, ids=lambda w: " ".join(w))
def test_the_envelope_names_the_command_not_its_arguments(
    cli: Any, demo_project: Path, bad: list[str], good: list[str]
) -> None:
    ok = cli(*good, "--json", "--root", demo_project, *TODAY)
    failed = cli(*bad, "--json", "--root", demo_project, *TODAY)
    assert ok.json["ok"] is True, ok.stderr
    assert failed.exit_code != 0 and failed.json["ok"] is False
    assert failed.json["command"] == ok.json["command"]


def test_an_unknown_command_or_subcommand_is_not_named(cli: Any, project: Path) -> None:
    assert cli("nosuch", "--json").json["command"] == ""
    assert cli("outcomes", "nosuch", "--json").json["command"] == "outcomes"
