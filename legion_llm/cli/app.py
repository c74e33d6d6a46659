"""The `legion-llm` command: one typer app, sub-apps per file, errors turned into exit codes here."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Any

import typer
from typer.exceptions import TyperException

from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt
from legion_llm.cli.render import echo, envelope, secret_free, stderr_line
from legion_llm.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_USAGE,
    LegionError,
    WriteFailedError,
)
from legion_llm.llm.errors import BudgetExceededError

HELP = (
    "A memory AI coding-agent teams can trust: markdown in git, scored recall, verified compaction."
)

# name -> (module, attribute, is a sub-app). Modules are imported only for the command that runs:
# a plain recall builds and imports one sub-app, not every command (cold start matters).
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "outcomes": ("legion_llm.cli.outcomes", "app", True),
    "briefing": ("legion_llm.cli.maintenance", "briefing", False),
    "prune": ("legion_llm.cli.maintenance", "prune_cmd", False),
    "patterns": ("legion_llm.cli.knowledge", "patterns_app", True),
    "errors": ("legion_llm.cli.errors", "errors_app", True),
    "preferences": ("legion_llm.cli.knowledge", "preferences_app", True),
    "recall": ("legion_llm.cli.knowledge", "recall_topic_cmd", False),
    "signals": ("legion_llm.cli.knowledge", "signals_cmd", False),
    "compact": ("legion_llm.cli.compact", "compact_cmd", False),
    "verify-compaction": ("legion_llm.cli.compact", "verify_compaction_cmd", False),
    "phase-context": ("legion_llm.cli.compact", "phase_context_cmd", False),
    "distill": ("legion_llm.cli.distill", "distill", False),
    "scan": ("legion_llm.cli.scan", "scan_cmd", False),
    "trust": ("legion_llm.cli.trust", "trust_cmd", False),
    "learnings": ("legion_llm.cli.learnings", "app", True),
    "eval": ("legion_llm.cli.evals.app", "app", True),
    "batch": ("legion_llm.cli.batch", "app", True),
    "llm": ("legion_llm.cli.llm", "app", True),
    "mcp": ("legion_llm.mcp.command", "mcp_cmd", False),
    "demo": ("legion_llm.cli.app", "demo", False),
}


def demo(
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="offline (the default, also without --engine unless LEGION_LLM_ENGINE is set), "
            "auto, anthropic, claude-code.",
        ),
    ] = None,
) -> None:
    """Run the whole flow on a copy of the bundled demo project: in a new temporary folder, or in
    --root DIR (new or empty). --today: the demo's "today" (default 2026-06-15, the day its
    history is dated around). --json: the walkthrough on stderr, one object on stdout. Offline
    unless an engine is asked for, so it never spends a key or a subscription by surprise."""
    from legion_llm.cli.demo import run_demo

    run_demo(root, today, json_, engine)


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app with every command, or with just the one named `only`."""
    root = typer.Typer(
        name="legion-llm",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        help=HELP,
    )
    root.callback()(_no_options)  # keeps a one-command app a group: `legion-llm NAME ...`
    for name, (module, attribute, is_group) in COMMANDS.items():
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(module), attribute)
        if is_group:
            root.add_typer(target, name=name)
        else:
            root.command(name)(target)
    return root


def _no_options() -> None:
    """A memory AI coding-agent teams can trust: markdown in git, scored recall, verified compaction."""


def __getattr__(name: str) -> Any:
    """`from legion_llm.cli.app import app`: the full app, built on first use."""
    if name == "app":
        return build_app()
    raise AttributeError(name)


def _command_name(args: list[str]) -> str:
    words: list[str] = []
    for arg in args:
        if arg.startswith("-") or len(words) == 2:
            break
        words.append(arg)
    return " ".join(words)


def _fail(exc: LegionError, args: list[str], as_json: bool) -> int:
    """One line on stderr; a write failure also prints the record so nothing is lost."""
    data = dict(exc.data)
    spent = (data.get("usage") or {}).get("estimated_cost_usd") or 0
    shown = exc.message  # a cap's refusal already says what was spent
    if spent and not isinstance(exc, BudgetExceededError):
        shown = f"{exc.message} (this run spent about ${spent:.4f})"
    stderr_line(f"error: {shown}")
    if isinstance(exc, WriteFailedError):
        data["record_text"] = exc.record_text
        if not as_json:
            echo(exc.record_text)
    if as_json:
        data["error"] = secret_free(shown)
        print(envelope(_command_name(args), data, [], ok=False))
    return exc.exit_code


def _text_arg(arg: str) -> str:
    """Bytes that are not UTF-8 (shell output pasted as an argument) become U+FFFD."""
    return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def main(argv: list[str] | None = None) -> None:
    args = [_text_arg(a) for a in (sys.argv[1:] if argv is None else argv)]
    as_json = "--json" in args
    try:
        only = args[0] if args and args[0] in COMMANDS else None
        command = typer.main.get_command(build_app(only))
        code = command.main(args=args, prog_name="legion-llm", standalone_mode=False)
    except LegionError as exc:
        code = _fail(exc, args, as_json)
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = " ".join(message.split())
        stderr_line(f"error: {message} (see legion-llm --help)")
        code = getattr(exc, "exit_code", EXIT_USAGE)
        if as_json:
            print(envelope(_command_name(args), {"error": message}, [], ok=False))
    except KeyboardInterrupt:
        stderr_line("error: interrupted")
        code = 130
    except OSError as exc:
        stderr_line(f"error: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        code = EXIT_BAD_INPUT
    except UnicodeDecodeError as exc:  # a file that is not text; NotUtf8Error names it
        stderr_line(f"error: {exc}")
        code = EXIT_BAD_INPUT
    except Exception as exc:  # a bug: one line for the user; LEGION_LLM_DEBUG=1 shows the traceback
        if os.environ.get("LEGION_LLM_DEBUG"):
            raise
        stderr_line(
            f"error: internal error ({type(exc).__name__}: {exc}); rerun with LEGION_LLM_DEBUG=1"
        )
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)
