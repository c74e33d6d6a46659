"""The exit codes the docs list are the code's one table (legion_llm/errors.py EXIT_CODES), and
every exit code the package defines is in that table; what the docs say of a wrong --engine, a
bare group and trust holds."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

import legion_llm
from legion_llm.errors import EXIT_BAD_INPUT, EXIT_CODES, EXIT_USAGE

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (\d+) \| (.+) \|$")


def _documented(path: Path) -> dict[int, str]:
    """The rows of the `| Exit code | Meaning |` table of a markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("| Exit code | Meaning |")
    rows: dict[int, str] = {}
    for line in lines[start + 2 :]:
        match = ROW.match(line)
        if match is None:
            break
        rows[int(match[1])] = match[2]
    return rows


@pytest.mark.parametrize("doc", ["docs/commands.md", "README.md"])
def test_the_documented_exit_codes_are_the_codes_table(doc: str) -> None:
    assert _documented(REPO / doc) == EXIT_CODES


def test_every_exit_code_is_defined_in_the_one_table() -> None:
    """No module defines an EXIT_ constant or sets an exit_code to a number of its own."""
    package = Path(legion_llm.__file__).parent
    elsewhere = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    name = getattr(target, "id", None) or getattr(target, "attr", "")
                    if name.startswith("EXIT_") and isinstance(node.value.value, int):
                        elsewhere.append(f"{path.relative_to(package)}:{node.lineno} {name}")
                    if name == "exit_code" and node.value.value not in EXIT_CODES:
                        elsewhere.append(f"{path.relative_to(package)}:{node.lineno} exit_code")
    assert elsewhere == []


def test_a_wrong_engine_is_a_usage_error_as_documented(cli: Any, project: Path) -> None:
    result = cli("compact", "3", "--engine", "gpt", "--root", project)
    assert result.exit_code == EXIT_USAGE != EXIT_BAD_INPUT
    commands = (REPO / "docs/commands.md").read_text(encoding="utf-8")
    bad_input = commands[commands.index("Bad input is refused") :].split("\n\n")[0]
    usage = bad_input.split("usage error, exit 2")
    assert "--engine" not in usage[0] and "--engine" in usage[1]


def test_the_plugin_docs_name_no_placeholder_owner() -> None:
    text = (REPO / "docs/claude-code.md").read_text(encoding="utf-8")
    assert "OWNER" not in text
