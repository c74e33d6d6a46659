"""One error base for the whole package; the CLI turns it into exit codes in one place."""

from __future__ import annotations

from typing import Any

# Every exit code of the program, in one table (docs/commands.md and README.md list the same;
# tests/cli/test_exit_codes.py holds them together).
EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_WRITE_FAILED = 3
EXIT_LLM = 4  # an engine you asked for failed (llm/errors.py)
EXIT_INTERNAL = 70  # a bug in legion-llm (EX_SOFTWARE)
EXIT_PENDING = 75  # a batch is not finished yet: collect again later (EX_TEMPFAIL)
EXIT_HANGUP = 129  # SIGHUP (128 + the signal, as a shell reports it)
EXIT_INTERRUPTED = 130  # Ctrl-C
EXIT_TERMINATED = 143  # SIGTERM

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "ok (also when memory is missing or degraded)",
    EXIT_BAD_INPUT: "bad input (a value, file or folder that cannot be used; nothing written)",
    EXIT_USAGE: "usage (the command line is wrong: an unknown option or `--engine` value, a bare "
    "command group)",
    EXIT_WRITE_FAILED: "write failed (the record is printed, so nothing is lost)",
    EXIT_LLM: "an engine you asked for failed",
    EXIT_INTERNAL: "a bug in legion-llm (rerun with `LEGION_LLM_DEBUG=1` for the traceback)",
    EXIT_PENDING: "`batch collect`: the batch is not finished yet, collect again later",
    EXIT_HANGUP: "ended by SIGHUP (the terminal closed); what it started was stopped",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_TERMINATED: "ended by SIGTERM; what it started was stopped",
}


class LegionError(Exception):
    """Base of every error legion-llm raises on purpose. Its message is one line for the user."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())
        self.data = data or {}


class InputError(LegionError):
    """Bad input: a value, file or folder the user gave cannot be used."""


class UsageError(LegionError):
    """The command line itself is wrong."""

    exit_code = EXIT_USAGE


class WriteFailedError(LegionError):
    """A write did not happen. `record_text` holds what would have been written, so nothing is lost."""

    exit_code = EXIT_WRITE_FAILED

    def __init__(
        self, message: str, *, record_text: str, data: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, data=data)
        self.record_text = record_text
