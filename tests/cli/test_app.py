from __future__ import annotations

from typing import Any

import pytest

from legion_llm.entry import command_names

COMMANDS = command_names()


def test_top_level_help_lists_every_command(cli: Any) -> None:
    result = cli("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_builds_alone(cli: Any, name: str) -> None:
    result = cli(name, "--help")
    assert result.exit_code == 0, result.stderr
    assert "Usage: legion-llm" in result.stdout


def test_unknown_command_is_a_usage_error(cli: Any) -> None:
    result = cli("remember-everything")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: No such command") and result.stderr.count("\n") == 1
