"""The command line: one typer app, sub-apps per file, errors turned into exit codes here
(`legion_llm/entry.py` is the program: this, with the MCP server's command plugged in).

Typer is imported only when a command needs it: the hottest commands are answered by
cli/fast.py without it (the same functions, the same output), and every other command builds
and imports only its own sub-app.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from legion_llm.app.result import envelope, secret_free
from legion_llm.cli import COMMANDS
from legion_llm.cli.render import StdoutClosed, echo, stderr_line, stdout_closed
from legion_llm.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    LegionError,
    WriteFailedError,
)

if TYPE_CHECKING:
    from legion_llm.cli.fast import Plugin


def _command_name(args: list[str], plugins: tuple[Plugin, ...] = ()) -> str:
    """The command's name as its result names it (`compact`, `outcomes recall`), never one of its
    arguments: a failure's envelope names the command as its success's does. A word that names
    no command (a typo, an unknown subcommand) is left out."""
    if not args or args[0] not in COMMANDS:
        return args[0] if args and args[0] in {plugin.name for plugin in plugins} else ""
    name = args[0]
    module, attribute, is_group = COMMANDS[name]
    if is_group and len(args) > 1 and args[1] in _subcommands(module, attribute):
        return f"{name} {args[1]}"
    return name


def _subcommands(module: str, attribute: str) -> set[str]:
    """The names of a command group's subcommands (read from its typer declaration)."""
    import importlib

    group = getattr(importlib.import_module(module), attribute)
    return {
        info.name or info.callback.__name__.replace("_", "-")
        for info in group.registered_commands
        if info.name or info.callback is not None
    }


def _fail(exc: LegionError, args: list[str], as_json: bool, plugins: tuple[Plugin, ...]) -> int:
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
        print(envelope(_command_name(args, plugins), data, [], ok=False))
    return exc.exit_code


def _text_arg(arg: str) -> str:
    """Bytes that are not UTF-8 (shell output pasted as an argument) become U+FFFD."""
    return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command is, as Ctrl-C raises KeyboardInterrupt."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received: list[int] = []  # the signals this run was ended by


def _raise_signalled(signum: int, frame: object) -> None:
    _received.append(signum)
    raise Signalled(signum)


def _catch_signals() -> dict[int, Any]:
    """SIGTERM and SIGHUP end a command as Ctrl-C does: an exception that unwinds it, so every
    child process it started is stopped on the way out (the interpreter's default is to die at
    once, leaving them running). A signal set to be ignored (nohup) stays ignored. Returns the
    handlers to put back."""
    before: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return before
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None or signal.getsignal(signum) != signal.SIG_DFL:
            continue
        before[signum] = signal.signal(signum, _raise_signalled)
    return before


def stop_children() -> None:
    """Stop every child process still running (the `claude` CLI a command asked, whatever
    thread asked it); nothing to do when no module that starts one was loaded."""
    claude_cli = sys.modules.get("legion_llm.llm.claude_code.cli")
    if claude_cli is not None:
        claude_cli.stop_children()


def run(argv: list[str], *, fast: bool = True, plugins: tuple[Plugin, ...] = ()) -> int:
    """Run one command line and return its exit code. `fast`: let cli/fast.py answer the
    commands it knows (False: always typer; the tests compare both); `plugins`: the commands
    another front end adds (legion_llm/entry.py)."""
    handlers = _catch_signals()
    try:
        code = _run(argv, fast, plugins)
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        stop_children()  # none is left running, however the command ended
    if _received:  # typer turns the exception into its own exit 130: the signal's code instead
        code = 128 + _received.pop()
        _received.clear()
    return code


def _run(argv: list[str], fast: bool, plugins: tuple[Plugin, ...]) -> int:
    args = [_text_arg(a) for a in argv]
    as_json = "--json" in args
    try:
        code = _fast_run(args, plugins) if fast else None
        if code is None:
            code = _typer_run(args, as_json, plugins)
        sys.stdout.flush()  # a closed pipe is found here, not when the interpreter exits
    except BrokenPipeError as exc:  # stdout's reader stopped (`| head`): end quietly, exit 0,
        code = EXIT_OK  # as other tools do; a pipe to another program that closed is an error
        if stdout_closed(exc):
            _stdout_to_devnull()
        else:
            stderr_line(f"error: {exc.strerror or exc}")
            code = EXIT_BAD_INPUT
    except LegionError as exc:
        code = _fail(exc, args, as_json, plugins)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP (run sets the signal's exit code)
        stderr_line("error: interrupted")
        code = EXIT_INTERRUPTED
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


def _stdout_to_devnull() -> None:
    """After a closed pipe: what is left in stdout's buffer goes nowhere, so the interpreter's
    last flush raises no second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (a test)
        pass


def _fast_run(args: list[str], plugins: tuple[Plugin, ...]) -> int | None:
    from legion_llm.cli.fast import run as fast_run

    return fast_run(args, plugins)


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


def _typer_run(args: list[str], as_json: bool, plugins: tuple[Plugin, ...]) -> Any:
    """The command through typer: its return value (an exit code, or None for 0)."""
    import typer
    from typer._click.exceptions import NoArgsIsHelpError
    from typer.exceptions import TyperException

    from legion_llm.cli.typer_app import build_app

    try:
        names = [*COMMANDS, *(plugin.name for plugin in plugins)]
        only = args[0] if args and args[0] in names else None
        command = typer.main.get_command(build_app(only, plugins))
        _tidy_help(command)
        return command.main(args=args, prog_name="legion-llm", standalone_mode=False)
    except SystemExit as exc:  # typer draws help with rich, whose console ends the program
        if exc.code == 1:  # with exit 1 when the reader is gone (nothing else here exits)
            raise StdoutClosed from exc
        raise
    except NoArgsIsHelpError as exc:  # a bare group: its help is the answer, no error line
        shown = exc.format_message()  # empty when typer has printed its rich help already
        if shown.strip():
            echo(shown.rstrip("\n"))
        return EXIT_USAGE  # still a usage error: a script that lost its subcommand must fail
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        message = " ".join(message.split()) or type(exc).__name__
        stderr_line(f"error: {message} (see legion-llm --help)")
        if as_json:
            print(envelope(_command_name(args, plugins), {"error": message}, [], ok=False))
        return getattr(exc, "exit_code", EXIT_USAGE)
