"""An error that names an option (`--something`) names one the command line has: the options
are read from the typer app itself (legion_llm.entry.build_app), the messages from the source
(every literal given to an error) and from the add commands refusing each field, blank and too
long, where the name is made from a stored column."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
import typer

import legion_llm
from legion_llm.app.context import MAX_STORED_CHARS
from legion_llm.entry import build_app

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# another program's own options, named as its: `claude` (llm/claude_code/)
FOREIGN = {"--max-budget-usd"}


def _options(command: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], set[str]]:
    """Each command's options (`--resolved/--unresolved` both), by its words."""
    found: dict[tuple[str, ...], set[str]] = {}
    params = getattr(command, "params", [])
    found[path] = {"--help"} | {
        flag for p in params for flag in [*p.opts, *getattr(p, "secondary_opts", [])]
    }
    for name, sub in getattr(command, "commands", {}).items():
        found.update(_options(sub, (*path, name)))
    return found


OPTIONS = _options(typer.main.get_command(build_app()))
EVERY_OPTION = set().union(*OPTIONS.values())


def _error_literals() -> list[tuple[str, int, str]]:
    """(file, line, text) of every string literal given to a call of an ...Error class."""
    package = Path(legion_llm.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            if not name.endswith("Error"):
                continue
            for part in ast.walk(node):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.append((str(path.relative_to(package)), node.lineno, part.value))
    return found


def test_the_walk_reads_the_options() -> None:
    assert {"--signature", "--fix", "--resolved", "--unresolved"} <= OPTIONS[("errors", "add")]


def test_every_option_an_error_names_exists() -> None:
    literals = _error_literals()
    assert len(literals) > 100  # the walk found the messages
    unknown = [
        f"{file}:{line}: {flag}"
        for file, line, text in literals
        for flag in FLAG.findall(text)
        if flag not in EVERY_OPTION | FOREIGN
    ]
    assert unknown == []


# each add command with a valid value for each of its stored options
ADDS: dict[tuple[str, ...], dict[str, str]] = {
    ("outcomes", "add"): {"--phase": "4", "--plan": "04-01", "--agent": "dev",
                          "--outcome": "success", "--summary": "s", "--task-type": "api",
                          "--tags": "t"},
    ("patterns", "add"): {"--pattern": "p", "--context": "c", "--reuse-criteria": "r",
                          "--source": "a review", "--tags": "t"},
    ("errors", "add"): {"--signature": "E: boom", "--fix": "f", "--agent": "dev", "--tags": "t"},
    ("preferences", "add"): {"--decision-point": "review-verdict", "--context": "c",
                             "--proposed": "p", "--user-choice": "u", "--signal": "positive",
                             "--agent": "dev", "--tags": "t"},
    ("learnings", "add"): {"--title": "t", "--body": "b", "--category": "gotcha",
                           "--tags": "csv,export", "--confidence": "high", "--source": "manual"},
}  # fmt: skip
CASES = [
    (words, option, value)
    for words, values in ADDS.items()
    for option in values
    for value in ("  ", "x" * (MAX_STORED_CHARS + 1))
]


@pytest.mark.parametrize(
    ("words", "option", "value"), CASES, ids=lambda v: " ".join(v) if isinstance(v, tuple) else (
        v if v.startswith("--") else ("blank" if not v.strip() else "long"))
)  # fmt: skip
def test_a_refused_field_is_named_by_its_option(
    cli: Any, project: Path, words: tuple[str, ...], option: str, value: str
) -> None:
    values = {**ADDS[words], option: value}
    args = [item for pair in values.items() for item in pair]
    result = cli(*words, *args, "--root", project, "--today", "2026-06-15")
    if result.exit_code == 0:  # a blank optional field is allowed
        assert not value.strip()
        return
    named = FLAG.findall(result.stderr)  # a message may name the field without a flag
    assert set(named) <= OPTIONS[words], result.stderr
    assert not named or option in named, result.stderr
