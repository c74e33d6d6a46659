"""Rendering: a result as --json or as its human view, tables (rich, imported only for human
output), stderr lines and progress bars; and the CLI's side of `Common` and how every command
ends, without typer (the fast path uses them): `common` (engine notices on stderr as they
happen, progress bars unless --json) and `deliver` (print the result, return its exit code).

Every line the CLI prints leaves through this module: the envelope (--json, app/result.py),
`stderr_line` (errors, warnings, notices), `table`, `rich_print` and `echo` (human output). Each
scrubs the configured key and any bearer token or x-api-key value (llm/scrub.py) on the way out,
and the human ones show control characters visibly (app/result.py `visible`): text from a
memory file cannot set the terminal's title, clear it or colour it. --json keeps the exact text.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app import context
from legion_llm.app.context import Common, no_progress, with_trust_warnings
from legion_llm.app.result import CommandResult, Human, Styled, Table, envelope, notice_line, shown

if TYPE_CHECKING:
    from rich.console import Console

    from legion_llm.app.context import Bar


class StdoutClosed(BrokenPipeError):
    """Standard output's reader has gone (`legion-llm ... | head`): the command ends quietly."""


def stdout_closed(exc: BaseException) -> bool:
    """Was this closed pipe standard output (not a pipe to another program)?"""
    if isinstance(exc, StdoutClosed):
        return True
    import select

    try:  # a pipe whose reader has gone polls as an error (POLLERR) on its writing end
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll, no file descriptor (a test)
        return False


def stderr_line(text: str) -> None:
    print(notice_line(text), file=sys.stderr, flush=True)


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
    else:
        draw(result.human)
    return result.exit_code


def draw(human: Human) -> None:
    """A use case's human view (app/result.py): lines, tables and styled lines, in order."""
    if not human:
        return
    for block in [human] if isinstance(human, str) else human:
        if isinstance(block, Table):
            table(block.title, block.columns, block.rows)
        elif isinstance(block, Styled):
            rich_print(block.markup.format(*(plain(item) for item in block.data)))
        else:
            echo(block)


def table(title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a readable table with rich that keeps every id, date, score and name whole.

    A column whose cells hold no space (ids, dates, scores, agent names, task types) never wraps;
    a column of free text (summaries, titles, tags) folds between its words, and breaks a word
    only when it is longer than FOLD_WORD. When the unbreakable columns cannot fit the terminal
    even without borders and padding, each row is printed as `column: value` lines instead."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    cells = [["" if v is None else shown(str(v)) for v in row] for row in rows]
    heads = [heading(shown(c)) for c in columns]
    measured = [_measure(head, [row[i] for row in cells]) for i, head in enumerate(heads)]
    console = _console()
    fitted = _layout(measured, console.width)
    if fitted is None:
        _records(console, title, heads, cells)
        return
    (style, edge, padding, _), widths = fitted
    view = Table(
        title=None if title is None else escape(shown(title)),
        expand=False,
        box=getattr(box, style),
        show_edge=edge,
        pad_edge=edge,
        padding=padding,
    )
    for head, width in zip(heads, widths, strict=True):  # a single-word column is never narrower
        view.add_column(escape(head), overflow="fold", width=width)  # than its widest cell
    for row in cells:
        view.add_row(*(escape(v) for v in row))
    console.print(view)


def heading(name: str) -> str:
    """A column's name as a reader's words: `memory_score` -> `memory score`, `successRate` ->
    `success rate` (the --json keys keep their names)."""
    import re

    spaced = re.sub(r"(?<=[a-z])([A-Z])(?=[a-z])", lambda m: " " + m[1].lower(), name)
    return spaced.replace("_", " ")


# (box, borders at the edges, padding, how many columns the borders and padding take for n columns)
Layout = tuple[str, bool, tuple[int, int], Callable[[int], int]]
LAYOUTS: tuple[Layout, ...] = (
    ("HEAVY_HEAD", True, (0, 1), lambda n: 3 * n + 1),
    ("SIMPLE_HEAD", False, (0, 1), lambda n: 3 * n - 3),
    ("SIMPLE_HEAD", False, (0, 0), lambda n: n - 1),
)


def _layout(
    measured: Sequence[tuple[int, int, bool]], width: int
) -> tuple[Layout, list[int]] | None:
    """The first layout, from boxed to bare, in which every column fits at its narrowest."""
    for layout in LAYOUTS:
        widths = _widths(measured, width - layout[3](len(measured)))
        if widths is not None:
            return layout, widths
    return None


FOLD_WORD = 16  # a word of free text longer than this (a path, a URL) may be folded


def _measure(head: str, values: Sequence[str]) -> tuple[int, int, bool]:
    """(narrowest width, natural width, must not wrap) of a column: a column of single words
    is as wide as its widest cell; free text as its longest word (at most FOLD_WORD)."""
    lines = [line for v in (head, *values) for line in v.split("\n")]
    natural = max(len(line) for line in lines)
    whole = all(" " not in v and "\n" not in v for v in values)
    head_word = max((len(w) for w in head.split()), default=1)
    if whole:
        return max(head_word, *(len(v) for v in values), 1), natural, True
    words = [len(w) for v in values for w in v.split()]
    return max(head_word, min(max(words, default=1), FOLD_WORD)), natural, False


def _widths(measured: Sequence[tuple[int, int, bool]], room: int) -> list[int] | None:
    """Each column's width within `room`: single-word columns whole, free text sharing the rest
    in proportion to what it would take unwrapped; None when the narrowest widths do not fit."""
    if sum(narrow for narrow, _, _ in measured) > room:
        return None
    naturals = [natural if not whole else narrow for narrow, natural, whole in measured]
    if sum(naturals) <= room:
        return naturals
    widths = [narrow for narrow, _, _ in measured]
    spare = room - sum(widths)
    wants = [natural - narrow for (narrow, _, _), natural in zip(measured, naturals, strict=True)]
    total = sum(wants)
    for i, want in enumerate(wants):
        widths[i] += spare * want // total if total else 0
    return widths


def _records(console: Console, title: str | None, heads: list[str], cells: list[list[str]]) -> None:
    """A table too wide for the terminal: each row as `column: value` lines, a blank between."""
    from rich.text import Text

    if title is not None:
        console.print(Text(shown(title), style="bold"))
    for number, row in enumerate(cells):
        if number:
            console.print()
        for head, value in zip(heads, row, strict=True):
            console.print(Text(f"{head}: {value}"))


def rich_print(text: str) -> None:
    """Print rich markup written by us; data inside it must go through `plain()`."""
    _console().print(shown(text))


def plain(text: str) -> str:
    """Data (from memory files, the user) made safe to embed in rich markup."""
    from rich.markup import escape

    return escape(text)


def _console() -> Console:
    """A terminal gets its own width; a pipe or file gets 140 columns instead of rich's 80. A
    pipe whose reader has gone raises StdoutClosed (cli/app.py ends quietly), where rich's own
    console would end the program with exit 1."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise StdoutClosed

    console = PipeConsole(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = PipeConsole(highlight=False, width=140)
    return console


@contextmanager
def progress_bar(label: str, total: int | None = None, *, clock: bool = False) -> Iterator[Bar]:
    """A rich progress bar on stderr for the length of a `with` (app/context.py `Progress`):
    the label, the bar, done of total, and with `clock` the time elapsed."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns: list[Any] = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    if clock:
        columns.append(TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)

        def update(**values: Any) -> None:
            bar.update(task, **values)

        yield update


# ---------------------------------------------------------------- how every command ends


def common(root: Path | None, today: str | None, as_json: bool) -> Common:
    """The options every command takes, for a run in a terminal: notices on stderr, and a
    progress bar for a long step unless the output is --json."""
    bars = no_progress if as_json else progress_bar
    return context.common(root, today, as_json, notify=stderr_line, progress=bars)


def deliver(result: CommandResult, options: Common) -> int:
    """Print a command's result and return its exit code: how every command
    ends, through typer (cli/common.py's `finish`) or through the fast path (cli/fast.py)."""
    return emit(with_trust_warnings(result, options.root), options.as_json)
