"""The hottest commands answered without building the typer app.

Typer, and the pydantic it brings for coercing values, cost about 0.1 s of every process on a
2-core machine (importing it, building the app, a pydantic adapter per option): more than a
recall of 200 records takes. The commands that agents, hooks and users run over and over are
parsed here instead, by a parser that accepts only what it is sure of: the options listed for
the command, each at most once, as `--name VALUE`, `--name=VALUE` or a bare flag, and its
positional arguments, with values typer would take unchanged. Anything else (--help, an option
not listed or repeated, a value typer would refuse or coerce, one argument too many) returns
None and the caller hands the whole command line to typer, which answers it exactly as before.
A command parsed here runs the same function its typer command runs, so both paths print the
same bytes (tests/cli/test_fast_path.py runs cases through both, and checks each listed option
against its typer command's type, default and bound).

The targets of `outcomes recall`, `briefing`, a plugin's command (the MCP server's `mcp`,
plugged in by legion_llm/entry.py) and the Claude Code plugin's `hook session-start` and `hook
stop` (cli/hook.py: they read their input on stdin) import no typer; the typer commands call
them. `compact` calls its typer command function directly (typer is imported for its
declarations, but no app is built and no value goes through typer).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Kind = Literal["str", "int", "path", "flag"]


@dataclass(frozen=True)
class Option:
    flag: str  # "--task-type"
    kind: Kind = "str"
    default: Any = None
    minimum: int | None = None

    @property
    def dest(self) -> str:
        """The parameter's name in the command function ("--json" is `json_`)."""
        name = self.flag.removeprefix("--").replace("-", "_")
        return "json_" if name == "json" else name


@dataclass(frozen=True)
class FastCommand:
    words: tuple[str, ...]
    options: tuple[Option, ...]
    target: str  # "module:function": called with the values as keywords, returns the exit code
    arguments: tuple[str, ...] = ()  # positional arguments, in order (each optional: None)

    def function(self) -> Callable[..., int]:
        module, name = self.target.split(":")
        found: Callable[..., int] = getattr(importlib.import_module(module), name)
        return found


COMMON = (Option("--root", "path"), Option("--today"), Option("--json", "flag", False))
COMMANDS = (
    FastCommand(
        ("outcomes", "recall"),
        (
            Option("--tags"),
            Option("--agent"),
            Option("--task-type"),
            Option("--limit", "int", 20, minimum=1),
            Option("--branch", "str", "all"),
            *COMMON,
        ),
        "legion_llm.cli.fast:outcomes_recall",
    ),
    FastCommand(("briefing",), COMMON, "legion_llm.cli.fast:briefing"),
    FastCommand(
        ("compact",),
        (
            Option("--force", "flag", False),
            Option("--dry-run", "flag", False),
            Option("--engine"),
            Option("--model"),
            Option("--verbose", "flag", False),
            *COMMON,
        ),
        "legion_llm.cli.fast:compact",
        arguments=("phase",),
    ),
    FastCommand(("hook", "session-start"), COMMON, "legion_llm.cli.hook:session_start_cmd"),
    FastCommand(("hook", "stop"), COMMON, "legion_llm.cli.hook:stop_cmd"),
)


@dataclass(frozen=True)
class Plugin:
    """A command another front end adds to the command line (legion_llm/entry.py adds the MCP
    server's `mcp`): its name, its options, the function that answers it (fast path and typer
    alike, loaded on use), the typer declaration of it (loaded when typer builds the app), and
    the command after which --help lists it."""

    name: str
    options: tuple[Option, ...]
    answer: Callable[[], Callable[..., int]]
    declaration: Callable[[], Callable[..., None]]
    after: str


def run(args: list[str], plugins: tuple[Plugin, ...] = ()) -> int | None:
    """The exit code of a command answered here, or None: let typer answer it."""
    if args == ["--version"]:
        return version()
    for command in COMMANDS:
        size = len(command.words)
        if tuple(args[:size]) == command.words:
            values = parse(command.options, args[size:], command.arguments)
            return None if values is None else command.function()(**values)
    for plugin in plugins:
        if args[:1] == [plugin.name]:
            values = parse(plugin.options, args[1:])
            return None if values is None else plugin.answer()(**values)
    return None


def parse(
    options: tuple[Option, ...], args: list[str], arguments: tuple[str, ...] = ()
) -> dict[str, Any] | None:
    """The values of `args` for these options and positional arguments (defaults filled in),
    or None when unsure."""
    by_flag = {option.flag: option for option in options}
    values: dict[str, Any] = {}
    given: list[str] = []
    i = 0
    while i < len(args):
        if not args[i].startswith("-"):
            if len(given) == len(arguments) or _convert(Option("--argument"), args[i]) is None:
                return None
            given.append(args[i])
            i += 1
            continue
        flag, equals, value = args[i].partition("=")
        option = by_flag.get(flag)
        if option is None or option.dest in values:
            return None
        if option.kind == "flag":
            if equals:
                return None
            values[option.dest] = True
            i += 1
            continue
        if not equals:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        converted = _convert(option, value)
        if converted is None:
            return None
        values[option.dest] = converted
    named = {option.dest: values.get(option.dest, option.default) for option in options}
    return {**dict(zip(arguments, given + [None] * len(arguments), strict=False)), **named}


def _convert(option: Option, value: str) -> Any:
    """The value typer would pass, or None where typer might refuse it or read it otherwise."""
    if value.startswith("-") or value != value.strip():
        return None
    if option.kind == "int":
        if not (value.isascii() and value.isdigit()):
            return None
        number = int(value)
        return None if option.minimum is not None and number < option.minimum else number
    if option.kind == "path":
        return Path(value) if value else None
    return value


def version() -> int:
    """`legion-llm --version` (the typer app's --version prints the same line)."""
    from legion_llm import __version__

    print(f"legion-llm {__version__}")
    return 0


def outcomes_recall(
    tags: str | None,
    agent: str | None,
    task_type: str | None,
    limit: int,
    branch: str,
    root: Path | None,
    today: str | None,
    json_: bool,
) -> int:
    """`outcomes recall` (cli/outcomes.py's recall_cmd runs this too)."""
    from legion_llm.app.commands.outcomes import recall_result
    from legion_llm.app.context import split_option
    from legion_llm.cli.render import common, deliver

    c = common(root, today, json_)
    return deliver(recall_result(c, split_option(tags), agent, task_type, limit, branch), c)


def briefing(root: Path | None, today: str | None, json_: bool) -> int:
    """`briefing` (cli/maintenance.py's briefing command runs this too)."""
    from legion_llm.app.commands.outcomes import briefing_result
    from legion_llm.cli.render import common, deliver

    c = common(root, today, json_)
    return deliver(briefing_result(c), c)


def compact(
    phase: str | None,
    force: bool,
    dry_run: bool,
    engine: str | None,
    model: str | None,
    verbose: bool,
    root: Path | None,
    today: str | None,
    json_: bool,
) -> int:
    """`compact [PHASE]` with these options: cli/compact.py's own command function, called
    with the values typer would pass it (its other options at their defaults). Its module
    declares its options with typer, so typer is imported, but no app is built and nothing is
    parsed or coerced by it."""
    from typer import Exit

    from legion_llm.cli.compact import compact_cmd

    try:
        compact_cmd(phase, force=force, dry_run=dry_run, engine=engine, model=model,
                    verbose=verbose, root=root, today=today, json_=json_)  # fmt: skip
    except Exit as exit_:
        return int(exit_.exit_code)
    return 0


def spec_of(words: tuple[str, ...]) -> Mapping[str, Option] | None:
    """The options of the fast command `words`, by parameter name (for the tests)."""
    for command in COMMANDS:
        if command.words == words:
            return {option.dest: option for option in command.options}
    return None
