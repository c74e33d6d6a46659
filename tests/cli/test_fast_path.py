"""The fast path (cli/fast.py) answers its commands byte for byte as typer does, and hands
everything it is not sure of to typer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer

from legion_llm.cli import app, fast
from legion_llm.cli.app import run
from legion_llm.cli.typer_app import build_app
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE
from tests.conftest import FIXTURES

TODAY = ["--today", "2026-06-15"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target


def once(
    capsys: pytest.CaptureFixture[str], args: list[str], use_fast: bool
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one run."""
    capsys.readouterr()
    code = run(args, fast=use_fast)
    out = capsys.readouterr()
    return code, out.out, out.err


def both(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The fast path's run, then typer's."""
    return once(capsys, args, True), once(capsys, args, False)


def no_typer(*_: object) -> None:
    raise AssertionError("the fast path handed this command to typer")


ANSWERED = [
    ["--json", *TODAY],
    [*TODAY],  # the human table
    ["--json", "--limit", "3", *TODAY],
    ["--json", "--limit=2", "--tags=api,auth", *TODAY],
    ["--json", "--agent", "engineering-backend-architect", "--task-type", "backend", *TODAY],
    ["--json", "--branch", "main", "--tags", "", *TODAY],
    ["--json", "--branch", "current", *TODAY],
    ["--today", "not-a-date", "--json"],  # the command's own one-line error
    ["--json"],  # today's date
]
HANDED_TO_TYPER = [
    ["--help"],
    ["--json", "--limit", "0"],
    ["--json", "--limit", "-1"],
    ["--json", "--limit", "abc"],
    ["--json", "--limit", " 3"],
    ["--json", "--limit", "3", "--limit", "4"],
    ["--json", "--bogus"],
    ["--json", "extra"],
    ["--json=1"],
    ["--json", "--agent"],
    ["--json", "--agent", "--limit"],
    ["--json", "--root", ""],
    ["--json", "--", "--limit", "3"],
]


@pytest.mark.parametrize("extra", ANSWERED, ids=" ".join)
def test_the_fast_path_prints_what_typer_prints(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    args = ["outcomes", "recall", "--root", str(root), *extra]
    reference = once(capsys, args, False)
    monkeypatch.setattr(app, "_typer_run", no_typer)
    quick = once(capsys, args, True)
    assert quick == reference
    assert quick[1] or quick[2]  # something was printed


@pytest.mark.parametrize(
    "args",
    [["briefing", "--json", *TODAY], ["briefing", *TODAY], ["briefing", "--json", "--today=x"]],
    ids=" ".join,
)
def test_briefing_prints_what_typer_prints(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    args = [*args, "--root", str(root)]
    reference = once(capsys, args, False)
    monkeypatch.setattr(app, "_typer_run", no_typer)
    assert once(capsys, args, True) == reference and reference[1]


@pytest.mark.parametrize("extra", HANDED_TO_TYPER, ids=" ".join)
def test_what_the_fast_path_is_not_sure_of_goes_to_typer(
    root: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    args = ["outcomes", "recall", "--root", str(root), *extra]
    assert fast.run(args) is None
    quick, reference = both(capsys, args)
    assert quick == reference


def test_errors_and_warnings_are_the_same(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = root / ".planning/memory/OUTCOMES.md"
    outcomes.write_text(OUTCOMES_TEMPLATE + "| O-001 | 2026-06-01 | main | 1 |\n")
    (root / "settings.json").write_text('{"memory": {"prune_threshold": "x"}}')
    args = ["outcomes", "recall", "--json", "--root", str(root), *TODAY]
    quick, reference = both(capsys, args)
    assert quick == reference and "not a valid row" in quick[2]
    missing = ["outcomes", "recall", "--json", "--root", str(root / "nowhere")]
    quick, reference = both(capsys, missing)
    assert quick == reference and quick[0] == 1 and "is not a folder" in quick[2]


KINDS: dict[type, fast.Kind] = {str: "str", int: "int", Path: "path", bool: "flag"}


@pytest.mark.parametrize("command", fast.COMMANDS, ids=lambda c: " ".join(c.words))
def test_each_spec_lists_the_typer_commands_options(command: fast.FastCommand) -> None:
    group = typer.main.get_command(build_app(command.words[0]))
    click_command = group
    for word in command.words:
        click_command = click_command.commands[word]  # type: ignore[attr-defined]
    found = {}
    for param in click_command.params:
        assert param.param_type_name == "option", param.name  # no positional arguments
        assert not param.multiple and param.envvar is None and param.callback is None
        assert param.secondary_opts == [] and len(param.opts) == 1
        annotation = param.type_descriptor.annotation  # type: ignore[attr-defined]
        found[param.name] = fast.Option(
            param.opts[0], KINDS[annotation], param.default, getattr(param, "min", None)
        )
    assert found == fast.spec_of(command.words)
