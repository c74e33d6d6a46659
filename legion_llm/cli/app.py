"""The `legion-llm` command: one typer app, sub-apps per file, errors turned into exit codes here."""

from __future__ import annotations

import os
import sys

import typer
from typer.exceptions import TyperException

from legion_llm.cli import compact as compact_cli
from legion_llm.cli import distill as distill_cli
from legion_llm.cli import eval as eval_cli
from legion_llm.cli import knowledge, maintenance, outcomes
from legion_llm.cli import learnings as learnings_cli
from legion_llm.cli import llm as llm_cli
from legion_llm.cli.render import envelope, stderr_line
from legion_llm.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_USAGE,
    LegionError,
    WriteFailedError,
)

app = typer.Typer(
    name="legion-llm",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="A memory AI coding-agent teams can trust: markdown in git, scored recall, verified compaction.",
)
app.add_typer(outcomes.app, name="outcomes")
app.add_typer(llm_cli.app, name="llm")
app.add_typer(eval_cli.app, name="eval")
app.command("compact")(compact_cli.compact_cmd)
app.command("verify-compaction")(compact_cli.verify_compaction_cmd)
app.command("phase-context")(compact_cli.phase_context_cmd)
app.add_typer(knowledge.patterns_app, name="patterns")
app.add_typer(knowledge.errors_app, name="errors")
app.add_typer(knowledge.preferences_app, name="preferences")
app.command("recall")(knowledge.recall_topic_cmd)
app.command("signals")(knowledge.signals_cmd)
app.command("distill")(distill_cli.distill)
app.add_typer(learnings_cli.app, name="learnings")
app.command("briefing")(maintenance.briefing)
app.command("prune")(maintenance.prune_cmd)


@app.command("demo")
def demo() -> None:
    """Run the whole flow on a copy of the bundled demo project (in a new temporary folder)."""
    from legion_llm.cli.demo import run_demo

    run_demo()


def _command_name(args: list[str]) -> str:
    words: list[str] = []
    for arg in args:
        if arg.startswith("-") or len(words) == 2:
            break
        words.append(arg)
    return " ".join(words)


def _fail(exc: LegionError, args: list[str], as_json: bool) -> int:
    """One line on stderr; a write failure also prints the record so nothing is lost."""
    stderr_line(f"error: {exc.message}")
    data = dict(exc.data)
    if isinstance(exc, WriteFailedError):
        data["record_text"] = exc.record_text
        if not as_json:
            print(exc.record_text)
    if as_json:
        data["error"] = exc.message
        print(envelope(_command_name(args), data, [], ok=False))
    return exc.exit_code


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    try:
        command = typer.main.get_command(app)
        code = command.main(args=args, prog_name="legion-llm", standalone_mode=False)
    except LegionError as exc:
        code = _fail(exc, args, as_json)
    except TyperException as exc:
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        stderr_line(f"error: {' '.join(message.split())} (see legion-llm --help)")
        code = getattr(exc, "exit_code", EXIT_USAGE)
    except KeyboardInterrupt:
        stderr_line("error: interrupted")
        code = 130
    except OSError as exc:
        stderr_line(f"error: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))
        code = EXIT_BAD_INPUT
    except Exception as exc:  # a bug: one line for the user; LEGION_LLM_DEBUG=1 shows the traceback
        if os.environ.get("LEGION_LLM_DEBUG"):
            raise
        stderr_line(
            f"error: internal error ({type(exc).__name__}: {exc}); rerun with LEGION_LLM_DEBUG=1"
        )
        code = EXIT_INTERNAL
    sys.exit(code if isinstance(code, int) else 0)
