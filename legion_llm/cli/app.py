"""The `legion-llm` command: one typer app, sub-apps per file, errors turned into exit codes here.

Typer is imported only when a command needs it: the hottest commands are answered by
cli/fast.py without it (the same functions, the same output), and every other command builds
and imports only its own sub-app.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from legion_llm.cli.render import echo, envelope, secret_free, stderr_line
from legion_llm.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_USAGE,
    LegionError,
    WriteFailedError,
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
    "hook": ("legion_llm.cli.hook_app", "app", True),
    "demo": ("legion_llm.cli.typer_app", "demo", False),
}


def __getattr__(name: str) -> Any:
    """`from legion_llm.cli.app import app`: the full typer app, built on first use."""
    if name == "app":
        from legion_llm.cli.typer_app import build_app

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
    from legion_llm.llm.errors import BudgetExceededError

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
    sys.exit(run(sys.argv[1:] if argv is None else argv))


def run(argv: list[str], *, fast: bool = True) -> int:
    """Run one command line and return its exit code. `fast`: let cli/fast.py answer the
    commands it knows (False: always typer; the tests compare both)."""
    args = [_text_arg(a) for a in argv]
    as_json = "--json" in args
    try:
        code = _fast_run(args) if fast else None
        if code is None:
            code = _typer_run(args, as_json)
    except LegionError as exc:
        code = _fail(exc, args, as_json)
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
    return code if isinstance(code, int) else 0


def _fast_run(args: list[str]) -> int | None:
    from legion_llm.cli.fast import run as fast_run

    return fast_run(args)


def _tidy_help(command: Any) -> None:
    """--help that reads well: no `<bool>` after a plain flag (typer shows every option's type;
    a flag takes no value), and each paragraph of a command's help on one line (a docstring's
    line breaks are not the reader's)."""
    import click

    for param in [*command.params, command.get_help_option(click.Context(command))]:
        if getattr(param, "is_flag", False) and hasattr(param, "display_type_rich"):
            param.display_type_rich = _no_type  # typer's help asks each option for its type
    if command.help:
        command.help = "\n\n".join(" ".join(p.split()) for p in command.help.split("\n\n"))
    for sub in getattr(command, "commands", {}).values():
        _tidy_help(sub)


def _no_type(ctx: Any) -> None:
    return None


def _typer_run(args: list[str], as_json: bool) -> Any:
    """The command through typer: its return value (an exit code, or None for 0)."""
    import typer
    from typer.exceptions import TyperException

    from legion_llm.cli.typer_app import build_app

    try:
        only = args[0] if args and args[0] in COMMANDS else None
        command = typer.main.get_command(build_app(only))
        _tidy_help(command)
        return command.main(args=args, prog_name="legion-llm", standalone_mode=False)
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = " ".join(message.split())
        stderr_line(f"error: {message} (see legion-llm --help)")
        if as_json:
            print(envelope(_command_name(args), {"error": message}, [], ok=False))
        return getattr(exc, "exit_code", EXIT_USAGE)
