"""The fast path (cli/fast.py) answers its commands byte for byte as typer does, and hands
everything it is not sure of to typer."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path

import pytest
import typer

from legion_llm.cli import app, fast
from legion_llm.cli.typer_app import build_app
from legion_llm.entry import PLUGINS, run
from legion_llm.entry import build_app as entry_app
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
HANDED_TO_TYPER_COMPACT = [
    ["compact", "3", "4"],
    ["compact", "3", "--price", "1/2"],
    ["compact", "--suggest"],
    ["compact", "3", "--max-cost", "1"],
    ["compact", "-3"],
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


@pytest.mark.subprocess
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


def test_compact_options_not_listed_go_to_typer(root: Path) -> None:
    for args in HANDED_TO_TYPER_COMPACT:
        assert fast.run([*args, "--root", str(root)]) is None, args


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
def test_each_spec_agrees_with_its_typer_command(command: fast.FastCommand) -> None:
    """Each listed option is the typer command's own (the same type, default and bound), the
    positional arguments are its arguments in order, and the target takes exactly these."""
    click_command = typer.main.get_command(build_app(command.words[0]))
    for word in command.words:
        click_command = click_command.commands[word]  # type: ignore[attr-defined]
    options, arguments = {}, []
    for param in click_command.params:
        assert not param.multiple and param.envvar is None and param.callback is None
        annotation = param.type_descriptor.annotation  # type: ignore[attr-defined]
        if param.param_type_name == "argument":
            assert param.default is None and annotation is str
            arguments.append(param.name)
            continue
        assert param.secondary_opts == [] and len(param.opts) == 1
        kind = KINDS.get(annotation, "str")  # the kinds not listed here are not listed in specs
        options[param.name] = (
            fast.Option(param.opts[0], kind, param.default, getattr(param, "min", None)),
            annotation,
        )
    listed = fast.spec_of(command.words)
    assert listed is not None and tuple(arguments) == command.arguments
    assert {name: options[name][0] for name in listed} == listed
    assert all(options[name][1] in KINDS for name in listed)
    target = inspect.signature(command.function()).parameters
    assert list(target) == [*command.arguments, *listed]


OFFLINE = ["--engine", "offline"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--dry-run", "--json"],
        ["--json"],
        ["--dry-run"],
        ["--json", "--force"],
        ["9", "--json"],
        ["--json", "--dry-run", "--engine", "claude-code"],
    ],
    ids=" ".join,
)
def test_compact_prints_what_typer_prints(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    """The same output and the same files written, for a phase that exists and one that does
    not, with an engine that is not there (its one-line error), written or not."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("PATH", "")  # no claude CLI
    args = ["compact", *extra, "--root", str(root), *TODAY]
    reference_root = root.parent / "reference"
    shutil.copytree(root, reference_root)
    reference = once(capsys, [str(reference_root) if a == str(root) else a for a in args], False)
    monkeypatch.setattr(app, "_typer_run", no_typer)
    quick = once(capsys, args, True)
    assert quick == (
        reference[0],
        *(t.replace(str(reference_root), str(root)) for t in reference[1:]),
    )
    assert files(root) == files(reference_root)


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_each_plugin_spec_agrees_with_its_typer_command(plugin: fast.Plugin) -> None:
    """A plugin's command (the MCP server's `mcp`): its options are its typer command's own, and
    the function that answers it takes exactly these."""
    click_command = typer.main.get_command(entry_app(plugin.name)).commands[plugin.name]  # type: ignore[attr-defined]
    declared = {p.name: fast.Option(p.opts[0], KINDS[p.type_descriptor.annotation],  # type: ignore[attr-defined]
                                    p.default) for p in click_command.params}  # fmt: skip
    assert declared == {option.dest: option for option in plugin.options}
    assert list(inspect.signature(plugin.answer()).parameters) == list(declared)
