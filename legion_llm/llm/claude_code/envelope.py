"""The JSON envelope `claude -p --output-format json` prints, read and turned into typed errors.

Measured on Claude Code 2.1.197 (tests/llm/test_claude_code_real.py runs the real CLI):

    {"type": "result", "subtype": "success", "is_error": false, "api_error_status": null,
     "result": "<the answer as text>", "structured_output": {...},      # with --json-schema
     "total_cost_usd": 0.0021, "usage": {...},                          # the main loop only
     "modelUsage": {"<model>": {"inputTokens", "outputTokens", "cacheReadInputTokens",
                                "cacheCreationInputTokens", "costUSD", ...}},   # every call
     "num_turns": 2, "session_id": "...", ...}

Failures, each one line here: not logged in (`is_error`, result "Not logged in · Please run
/login"); an API error after the CLI's own retries (`api_error_status` 401, 429, 529, ...); a
refusal (`is_error` with `stop_reason` "refusal" and, like some other errors, subtype "success");
`subtype` "error_max_budget_usd" (the CLI stops after the call that passed --max-budget-usd);
"error_max_structured_output_retries" (the model did not fill the schema in
MAX_STRUCTURED_OUTPUT_RETRIES tries, 5 by default, 2 as the engine runs it);
a CLI that does not know an option (no envelope, "error: unknown option '--json-schema'" on
stderr); anything that is not an envelope at all. Messages never echo the environment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from legion_llm.errors import EXIT_USAGE
from legion_llm.llm.budget import Usage
from legion_llm.llm.claude_code.cli import CliRun
from legion_llm.llm.errors import (
    BudgetExceededError,
    InvalidOutputError,
    LLMUnavailableError,
    RefusalError,
)
from legion_llm.memory.redact import excerpt
from legion_llm.memory.untrusted import UntrustedInputError, load_json

_UNKNOWN_OPTION = re.compile(r"unknown option '(--[a-z-]+)'")
_EXCERPT = 160


class ClaudeCodeError(LLMUnavailableError):
    """Claude Code could not answer (the CLI failed, timed out or printed no envelope)."""


class ClaudeCodeSetupError(ClaudeCodeError):
    """The CLI is missing, too old or not logged in: the user must fix the set-up (exit 2)."""

    exit_code = EXIT_USAGE


class ClaudeCodeNotLoggedInError(ClaudeCodeSetupError):
    """The CLI has no login (or its login was refused); the user must run `claude auth login`."""


class ClaudeCodeTooOldError(ClaudeCodeSetupError):
    """The CLI does not know an option we need (`--json-schema` first of all)."""


def read_envelope(run: CliRun, version: str | None) -> dict[str, Any]:
    """The result object on stdout, or the typed error for a CLI that printed none."""
    refused = ""
    for line in reversed(run.stdout.strip().splitlines()):
        try:
            data = load_json(line)
        except UntrustedInputError as exc:
            refused = refused or str(exc)
            continue
        except ValueError:  # not JSON
            continue
        if isinstance(data, dict) and data.get("type") == "result":
            return data
    if refused:
        raise ClaudeCodeError(f"claude printed JSON that {refused}; refused, nothing read")
    unknown = _UNKNOWN_OPTION.search(run.stderr)
    if unknown:
        raise ClaudeCodeTooOldError(
            f"claude {version or '(unknown version)'} is too old for {unknown.group(1)}; "
            "update it (`claude update`)"
        )
    said = _excerpt(run.stderr) or _excerpt(run.stdout) or "nothing"
    raise ClaudeCodeError(
        f"claude exited with {run.returncode} and printed no JSON result ({said})",
        data={"returncode": run.returncode},
    )


def raise_for_error(envelope: dict[str, Any], max_budget_usd: float | None, prompt: str) -> None:
    """The typed error for an envelope that reports a failure; nothing for a success."""
    subtype = str(envelope.get("subtype") or "")
    if not envelope.get("is_error") and subtype == "success":
        return
    text = _excerpt(str(envelope.get("result") or "")) or "; ".join(_errors(envelope))
    status = envelope.get("api_error_status")
    status = status if isinstance(status, int) else None
    if envelope.get("stop_reason") == "refusal":
        raise RefusalError(
            f"Claude Code's model refused prompt {prompt!r} (stop_reason refusal): {text}"
        )
    if subtype.startswith("error_max_structured_output"):
        raise InvalidOutputError(
            f"Claude Code gave up on output matching the schema ({subtype}): {text}"
        )
    if subtype == "error_max_budget_usd":
        spent = cost_of(envelope) or 0.0
        cap = "" if max_budget_usd is None else f" of ${max_budget_usd:.4f}"
        raise BudgetExceededError(
            f"Claude Code stopped at its --max-budget-usd{cap} after spending ${spent:.4f}",
            data={"spent_usd": round(spent, 6), "max_budget_usd": max_budget_usd},
        )
    if text.lower().startswith("not logged in") or status in (401, 403):
        raise ClaudeCodeNotLoggedInError(
            f"Claude Code is not logged in or its login was refused ({text}); "
            "run `claude auth login`",
            status=status,
        )
    if status is not None:
        kind = {429: "rate-limited", 529: "overloaded"}.get(status, "an API error")
        raise ClaudeCodeError(f"Claude Code got {kind} (HTTP {status}): {text}", status=status)
    kind = "" if subtype in ("", "success") else f" ({subtype})"  # an error can say "success"
    raise ClaudeCodeError(f"Claude Code failed{kind}: {text or 'no detail'}")


def _errors(envelope: dict[str, Any]) -> list[str]:
    errors = envelope.get("errors")
    return [_excerpt(str(e)) for e in errors] if isinstance(errors, list) else []


def _excerpt(text: str) -> str:
    """What the CLI said, as one redacted line (its stderr can hold any token it was given)."""
    return excerpt(text, _EXCERPT)


def cost_of(envelope: dict[str, Any]) -> float | None:
    """`total_cost_usd` when it is a usable figure (a finite number >= 0), else None."""
    return _number(envelope.get("total_cost_usd"))


Price = Callable[[str, Mapping[str, int]], "float | None"]
_ROW = {"input_tokens": "inputTokens", "output_tokens": "outputTokens",
        "cache_read_input_tokens": "cacheReadInputTokens",
        "cache_creation_input_tokens": "cacheCreationInputTokens"}  # fmt: skip


def usage_of(
    envelope: dict[str, Any], price: Price | None = None, fallback: Price | None = None
) -> tuple[Usage, bool]:
    """Tokens summed over `modelUsage` (every call the CLI made); the cost of each model's row by
    `price` when it knows the model, else the CLI's `costUSD` (and `total_cost_usd` overall).
    A figure the CLI gives that is missing, negative, NaN or infinite is priced by `fallback`
    instead; the flag says whether that happened."""
    models = envelope.get("modelUsage")
    rows = (
        {str(k): v for k, v in models.items() if isinstance(v, dict)}
        if isinstance(models, dict)
        else {}
    )
    totals = dict.fromkeys(_ROW, 0)
    cost, unpriced = 0.0, False
    for name, row in rows.items():
        counts = {ours: _count(row.get(theirs)) for ours, theirs in _ROW.items()}
        for key, value in counts.items():
            totals[key] += value
        figure = price(name, counts) if price else None
        figure = figure if figure is not None else _number(row.get("costUSD"))
        if figure is None:
            figure, unpriced = _fallback(fallback, name, counts), True
        cost += figure
    if not rows or price is None:
        if not rows:
            main = envelope.get("usage")
            main = main if isinstance(main, dict) else {}
            totals = {key: _count(main.get(key)) for key in _ROW}
        total = cost_of(envelope)
        if total is None:
            model = next(iter(rows), "")
            total, unpriced = (
                (cost, unpriced) if rows else (_fallback(fallback, model, totals), True)
            )
        cost = total
    calls = 1 if any(totals.values()) or cost else 0
    return Usage(calls=calls, **totals, estimated_cost_usd=cost), unpriced


def _fallback(fallback: Price | None, model: str, counts: Mapping[str, int]) -> float:
    figure = fallback(model, counts) if fallback else None
    return figure if figure is not None and figure >= 0 else 0.0


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


NO_OUTPUT = object()


def structured_output(envelope: dict[str, Any]) -> object:
    """`structured_output`, else `result` when it is JSON text, else NO_OUTPUT."""
    if "structured_output" in envelope and envelope["structured_output"] is not None:
        return envelope["structured_output"]
    result = envelope.get("result")
    if isinstance(result, str):
        try:
            return load_json(result)
        except ValueError:  # no JSON, or refused: nested too deeply
            pass
    return NO_OUTPUT
