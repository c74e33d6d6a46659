"""Rendering: the --json envelope, human tables (rich, imported only for human output), stderr lines.

Every line the CLI prints leaves through this module: `envelope` (--json, also the MCP results),
`stderr_line` (errors, warnings, notices), `table`, `rich_print` and `echo` (human output). Each
scrubs the configured key and any bearer token or x-api-key value (llm/scrub.py) on the way out,
and the human ones show control characters visibly (`visible`): text from a memory file cannot
set the terminal's title, clear it or colour it. --json keeps the exact text.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from legion_llm.cli.result import CommandResult
from legion_llm.llm.scrub import scrub, scrub_data

if TYPE_CHECKING:
    from rich.console import Console


# C0 controls but tab and newline -> the Control Pictures block; DEL -> U+2421; C1 controls and
# the bidi embeddings, overrides and isolates -> <U+XXXX>. str.translate does it in one pass.
_VISIBLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE[0x7F] = "\u2421"
_VISIBLE.update(
    {
        c: f"<U+{c:04X}>"
        for c in (*range(0x80, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    }
)


def visible(text: str) -> str:
    """Text that cannot drive a terminal: every control character shown as a visible symbol
    (CRLF first becomes a newline). For human output only; --json keeps the exact text."""
    return text.replace("\r\n", "\n").translate(_VISIBLE)


def envelope(command: str, data: Any, warnings: Sequence[str], *, ok: bool = True) -> str:
    body = {
        "ok": ok,
        "command": command,
        "data": data,
        "warnings": [secret_free(w) for w in warnings],
    }
    return json.dumps(scrub_data(body), ensure_ascii=False)


def secret_free(text: str) -> str:
    """A warning, notice or error line with every secret the built-in rules know redacted: such
    a line can quote what an engine, a CLI or a file said (the memory files' own text, written
    already redacted, is data and is not touched here)."""
    from legion_llm.memory.redact import redacted

    return redacted(text)


def shown(text: str) -> str:
    """Any text on its way to a terminal: no key, no control character."""
    return visible(scrub(text))


def stderr_line(text: str) -> None:
    print(shown(secret_free(text)), file=sys.stderr, flush=True)


def echo(text: str) -> None:
    """One or more lines of human output on stdout."""
    print(shown(text))


def emit(result: CommandResult, as_json: bool) -> int:
    """Warnings go to stderr (and into the envelope); data goes to stdout as JSON or as text."""
    warnings = list(dict.fromkeys(result.warnings))
    for warning in warnings:
        stderr_line(warning)
    if as_json:
        print(envelope(result.command, result.data, warnings, ok=result.exit_code == 0))
    elif callable(result.human):
        result.human()
    elif result.human:
        echo(result.human)
    return result.exit_code


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a readable table with rich."""
    from rich.markup import escape
    from rich.table import Table

    view = Table(
        title=None if title is None else escape(shown(title)), show_lines=False, expand=False
    )
    for column in columns:
        view.add_column(column, overflow="fold")
    for row in rows:
        view.add_row(*("" if v is None else escape(shown(str(v))) for v in row))
    _console().print(view)


def rich_print(text: str) -> None:
    """Print rich markup written by us; data inside it must go through `plain()`."""
    _console().print(shown(text))


def plain(text: str) -> str:
    """Data (from memory files, the user) made safe to embed in rich markup."""
    from rich.markup import escape

    return escape(text)


def _console() -> Console:
    """A terminal gets its own width; a pipe or file gets 140 columns instead of rich's 80."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, width=140)
    return console


def usage_line(usage: dict[str, Any]) -> str:
    """The one line every LLM command prints: engine, calls, tokens, estimated and avoided cost."""
    cached = usage.get("cache_read_input_tokens", 0)
    avoided = usage.get("avoided_cost_usd", 0.0)
    return (
        f"Engine {usage['engine']}: {usage['calls']} Claude call(s), {usage['offline_calls']} "
        f"offline, {usage['input_tokens']} in / {usage['output_tokens']} out tokens"
        + (f" ({cached} more read from the cache)" if cached else "")
        + f", about ${usage['estimated_cost_usd']:.4f}"
        + (f" (${avoided:.4f} avoided)" if avoided > 0 else "")
    )
