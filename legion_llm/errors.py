"""One error base for the whole package; the CLI turns it into exit codes in one place."""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_USAGE = 2
EXIT_WRITE_FAILED = 3
EXIT_INTERNAL = 70  # a bug in legion-llm (EX_SOFTWARE)


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
