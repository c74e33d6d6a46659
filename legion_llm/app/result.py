"""What a use case returns (the --json data, a human view, warnings and an exit status) and how
it leaves the program, whatever the front end: the --json envelope (also every MCP tool's
answer), and text with no secret, no key and no control character that could drive a terminal.

The human view is data too, drawn by the CLI (cli/render.py) and ignored by the MCP server: a
string of lines, or a list of blocks, each a string of lines, a `Table`, or a `Styled` line of
rich markup written here whose `{}` fields are filled with data that is never read as markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from legion_llm.llm.scrub import scrub, scrub_data


@dataclass(frozen=True)
class Table:
    """A table: every id, date, score and name kept whole, free text folded (cli/render.py)."""

    title: str | None
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Styled:
    """A line of rich markup (`[bold]...[/bold]`) with `{}` fields for data, which is escaped
    when the line is drawn: `Styled("[bold]Briefing[/bold]: {} records", (str(total),))`."""

    markup: str
    data: Sequence[str] = ()


Block = str | Table | Styled
Human = str | Sequence[Block] | None


@dataclass
class CommandResult:
    """What a command hands to its front end: data for --json, a human view, warnings."""

    command: str
    data: Any
    human: Human = None
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0


# ---------------------------------------------------------------- leaving the program

# C0 controls but tab and newline -> the Control Pictures block; DEL -> U+2421; C1 controls and
# the bidi embeddings, overrides and isolates -> <U+XXXX>. str.translate does it in one pass.
_VISIBLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE[0x7F] = "\u2421"
_VISIBLE.update(
    {
        c: f"<U+{c:04X}>"
        for c in (
            *range(0x80, 0xA0),
            0x2028,
            0x2029,
            *range(0x202A, 0x202F),
            *range(0x2066, 0x206A),
        )
    }
)


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


def visible(text: str) -> str:
    """Text that cannot drive a terminal: every control character shown as a visible symbol
    (CRLF first becomes a newline). For human output only; --json keeps the exact text."""
    return text.replace("\r\n", "\n").translate(_VISIBLE)


def shown(text: str) -> str:
    """Any text on its way to a terminal or a log: no key, no control character."""
    return visible(scrub(text))


def notice_line(text: str) -> str:
    """A warning, notice or error line as printed on stderr: no secret, no key, no control."""
    return shown(secret_free(text))
