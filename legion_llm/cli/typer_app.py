"""The typer app: every command's declaration, built with only the command that runs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Annotated

import typer

from legion_llm.cli import COMMANDS
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt

if TYPE_CHECKING:
    from legion_llm.cli.fast import Plugin

HELP = (
    "A memory AI coding-agent teams can trust: markdown in git, scored recall, verified compaction."
)


def demo(
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="auto, anthropic, claude-code or offline (the default here, also without "
            "--engine unless LEGION_LLM_ENGINE is set); sampling works only inside `legion-llm mcp`.",
        ),
    ] = None,
) -> None:
    """Run the whole flow on a copy of the bundled demo project: in a new temporary folder, or in
    --root DIR (new or empty). --today: the demo's "today" (default 2026-06-15, the day its
    history is dated around). --json: the walkthrough on stderr, one object on stdout. Offline
    unless an engine is asked for, so it never spends a key or a subscription by surprise."""
    from legion_llm.cli.demo import run_demo

    run_demo(root, today, json_, engine)


def build_app(only: str | None = None, plugins: tuple[Plugin, ...] = ()) -> typer.Typer:
    """The typer app with every command (and each plugin's, after the command it names), or
    with just the one named `only`."""
    root = typer.Typer(
        name="legion-llm",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        help=HELP,
    )
    root.callback()(_no_options)  # keeps a one-command app a group: `legion-llm NAME ...`
    wanted = [p for p in plugins if only is None or only == p.name]
    for name, (module, attribute, is_group) in COMMANDS.items():
        if only is None or name == only:
            target = getattr(importlib.import_module(module), attribute)
            if is_group:
                root.add_typer(target, name=name)
            else:
                root.command(name)(target)
        for plugin in [p for p in wanted if p.after == name]:
            root.command(plugin.name)(plugin.declaration())
    for plugin in [p for p in wanted if p.after not in COMMANDS]:
        root.command(plugin.name)(plugin.declaration())
    return root


def _print_version(value: bool) -> None:
    if value:
        from legion_llm.cli.fast import version

        raise typer.Exit(version())


def _no_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """A memory AI coding-agent teams can trust: markdown in git, scored recall, verified compaction."""
