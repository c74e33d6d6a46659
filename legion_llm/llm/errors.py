"""Typed errors of the LLM layer. Every one is a LegionError, so the CLI prints one line and exits.

Exit codes: 2 for a configuration the user must fix (no key with `--engine anthropic`), 4 for
everything else that went wrong in the LLM layer (so scripts can tell it from bad input, 1).
No message or `data` field ever holds an API key.
"""

from __future__ import annotations

from typing import Any

from legion_llm.errors import EXIT_LLM, EXIT_USAGE, LegionError


class LLMError(LegionError):
    """Base of the LLM layer's errors. Its message is redacted when it is made: an engine's error
    can quote what a CLI, a proxy or a model printed, and that text goes on into notices,
    fallback reasons, --json and MCP tool errors."""

    exit_code = EXIT_LLM

    def __init__(self, message: str, *, data: dict[str, Any] | None = None) -> None:
        from legion_llm.memory.redact import redacted

        super().__init__(redacted(message), data=data)


class NoApiKeyError(LLMError):
    """`--engine anthropic` was forced but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set."""

    exit_code = EXIT_USAGE


class UnknownModelError(LLMError):
    """The model is not in the price table and no prices were given (--price IN/OUT)."""

    exit_code = EXIT_USAGE


class LLMUnavailableError(LLMError):
    """Claude could not be reached or refused the request (after the retries the policy allows)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        data: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, data={"status": status, "attempts": attempts, **(data or {})})
        self.status = status
        self.attempts = attempts


class RequestRejectedError(LLMUnavailableError):
    """The API refused the request itself (HTTP 400, 401, 402, 403 or 404): a key, a model name
    or a setting the user must fix. `auto` still falls back; an explicit engine stops (exit 2)."""

    exit_code = EXIT_USAGE


class StructuredOutputError(LLMError):
    """Claude answered, but not with a usable structured result."""


class InvalidOutputError(StructuredOutputError):
    """The answer did not validate against the schema, twice (the first error was sent back once)."""


class OutputTruncatedError(StructuredOutputError):
    """The answer stopped at max_tokens (or the context window) before the tool input was complete."""


class RefusalError(StructuredOutputError):
    """Claude refused to answer (stop_reason "refusal")."""


class NoToolCallError(StructuredOutputError):
    """The answer had no tool_use block for the forced tool (or no text for a JSON-schema answer)."""


class BudgetExceededError(LLMError):
    """The next call could push the run's estimated cost past --max-cost; it was not made."""


class TokenBudgetError(LLMError):
    """An input is larger than the model's input budget. Split it (map, then reduce); never truncate."""


class PromptError(LLMError):
    """A prompt file is missing or malformed, or its variables do not match its placeholders."""


class OfflineStepMissingError(LLMError):
    """The offline engine has no deterministic step registered for this prompt."""
