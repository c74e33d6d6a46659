"""Markdown table codec: find tables in a markdown file, decode cells, encode rows.

Rules (GFM plus what real memory files do):
- a table is a header row, a separator row, then rows; rows may continue after other markdown
  (a row that comes without a header joins the last table when it has at least as many cells);
- lines inside a fenced code block (``` or ~~~) are text, never rows;
- cells are trimmed; `\\|` is a literal pipe; `\\` before ASCII punctuation is that character;
  `<br>` is a line break inside a cell; CRLF is accepted; any other line break in a value
  (CR, FF, VT, NEL, U+2028, U+2029) is stored as `<br>` too, so no reader sees a new line there;
- a row with more cells than its header had an unescaped `|` in its last column: the extra cells
  are joined back into the last column instead of shifting every column.

Reading never changes the text; writers splice encoded rows into it so untouched bytes stay as
they were.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_PUNCT = r"!-/:-@\[-`{-~"
_CELL_RE = re.compile(r"\|((?:\\.|\\$|[^\\|])*)")
_SEPARATOR_CELL_RE = re.compile(r"^\s*:?-+:?\s*$")
_SEPARATOR_LINE_RE = re.compile(r"^\s*\|(?:\s*:?-+:?\s*\|)*\s*:?-+:?\s*\|?\s*$")
_DECODE_RE = re.compile(rf"\\([{_PUNCT}])|<br\s*/?>", re.IGNORECASE)
_ENCODE_RE = re.compile(rf"\\(?=[{_PUNCT}]|\n|$)|\||\n|<(?=br\s*/?>)", re.IGNORECASE)
_LINE_BREAKS_RE = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ENCODED = {"|": "\\|", "\n": "<br>", "\\": "\\\\", "<": "\\<"}


def normalise_breaks(text: str) -> str:
    """Every line break other readers see (CR, CRLF, VT, FF, NEL, U+2028/U+2029 and the other
    separators `str.splitlines` splits on) as one LF."""
    return _LINE_BREAKS_RE.sub("\n", text)


def normalise_text(text: str) -> str:
    """The form a cell value is stored in: one kind of newline, no surrounding whitespace."""
    return normalise_breaks(text).strip()


def encode_cell(text: str) -> str:
    """Cell text -> markdown cell content that decodes back to `normalise_text(text)`."""
    encoded = _ENCODE_RE.sub(lambda m: _ENCODED[m.group(0)[0]], normalise_text(text))
    if _SEPARATOR_CELL_RE.match(encoded):  # a cell of dashes would make its row a separator
        encoded = "\\" + encoded
    return encoded


def decode_cell(raw: str) -> str:
    raw = raw.strip()
    if "\\" not in raw and "<" not in raw:
        return raw
    return _DECODE_RE.sub(lambda m: m.group(1) if m.group(1) is not None else "\n", raw).strip()


def encode_row(values: list[str]) -> str:
    return "| " + " | ".join(encode_cell(v) for v in values) + " |"


def split_row(line: str) -> list[str] | None:
    """Raw (still encoded, untrimmed) cells of a row line, or None when the line is not a row."""
    s = line.strip()
    if not s.startswith("|"):
        return None
    cells = s[1:].split("|") if "\\" not in s else _split_escaped(s)
    if len(cells) > 1 and cells[-1] == "":
        cells.pop()
    return cells


def _split_escaped(s: str) -> list[str]:
    """Split a row holding backslashes: `\\\\` and `\\|` never end a cell."""
    if "\x00" in s or "\x01" in s:
        return list(_CELL_RE.findall(s))
    masked = s[1:].replace("\\\\", "\x00").replace("\\|", "\x01")
    return [c.replace("\x01", "\\|").replace("\x00", "\\\\") for c in masked.split("|")]


def opens_fence(line: str) -> bool:
    """The line opens a fenced code block (when it is not a table line)."""
    return bool(_FENCE_RE.match(line))


def is_separator_line(line: str) -> bool:
    return bool(_SEPARATOR_LINE_RE.match(line))


def column_key(name: str) -> str:
    """Header text -> snake_case key: 'Task Type' -> 'task_type', 'Error Signature' -> ..."""
    return re.sub(r"[^a-z0-9]+", "_", decode_cell(name).lower()).strip("_")


@dataclass
class TableBlock:
    """One table: its column keys and the line numbers (0-based) of its header and rows."""

    columns: list[str]
    header_line: int
    row_lines: list[int] = field(default_factory=list)

    @property
    def last_line(self) -> int:
        return self.row_lines[-1] if self.row_lines else self.header_line + 1


@dataclass
class MarkdownDoc:
    """A markdown file split into lines (newline kept), plus the tables found in it."""

    text: str
    lines: list[str]
    tables: list[TableBlock]

    @property
    def newline(self) -> str:
        return "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"

    def values(self, table: TableBlock, line_no: int) -> list[str]:
        """Decoded cells of one row in column order; extra cells go to the last column."""
        line = self.lines[line_no]
        raw = split_row(line) or []
        width = len(table.columns)
        if len(raw) > width:
            raw = [*raw[: width - 1], "|".join(raw[width - 1 :])]
        if "\\" not in line and "<" not in line:  # the common case: nothing to unescape
            return [value.strip() for value in raw]
        return [decode_cell(value) for value in raw]

    def cells(self, table: TableBlock, line_no: int) -> dict[str, str]:
        """Decoded cells of one row keyed by column."""
        return dict(zip(table.columns, self.values(table, line_no), strict=False))

    def rows(self, table: TableBlock) -> Iterator[tuple[int, dict[str, str]]]:
        for line_no in table.row_lines:
            yield line_no, self.cells(table, line_no)


def parse_markdown(text: str) -> MarkdownDoc:
    """Find the tables. Rows inside a table are not split here: cells are decoded on demand."""
    lines = split_lines(text)
    tables: list[TableBlock] = []
    current: TableBlock | None = None
    last: TableBlock | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.lstrip().startswith("|"):
            current = None
            fence = _FENCE_RE.match(line)
            if fence:  # a fenced code block: its lines are text, never table rows
                i = _after_fence(lines, i + 1, fence.group(1))
                continue
        elif is_separator_line(line):
            pass  # a stray separator belongs to no table
        elif i + 1 < n and is_separator_line(lines[i + 1]):  # a header, also one repeated mid-table
            current = last = TableBlock([column_key(c) for c in split_row(line) or []], i)
            tables.append(current)
            i += 1
        elif current is not None:
            current.row_lines.append(i)
        elif last is not None and len(split_row(line) or []) >= len(last.columns):
            current = last
            current.row_lines.append(i)
        i += 1  # a row before any table, or narrower than the last one: not part of a table
    return MarkdownDoc(text, lines, tables)


def _after_fence(lines: list[str], i: int, fence: str) -> int:
    """The line after the one closing `fence` (a fence left open runs to the end of the file)."""
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    while i < len(lines):
        if closing.match(lines[i]):
            return i + 1
        i += 1
    return i


def append_rows(
    doc: MarkdownDoc, table: TableBlock | None, rows: list[str], *, template: str
) -> str:
    """The text with `rows` after the last row of `table`; every other byte stays as it was.

    With no table, the file's section of `template` (its `## ` heading, header and separator) is
    added at the end, or the whole template when the file is empty. The file's newline style is
    kept.
    """
    newline = doc.newline
    if table is None:
        text = doc.text
        if text.strip():
            start = template.index("\n## ") + 1
            body = ("" if text.endswith("\n") else "\n") + "\n" + template[start:]
        else:
            text, body = "", template
        return text + (body + "".join(row + "\n" for row in rows)).replace("\n", newline)
    lines = list(doc.lines)
    at = table.last_line
    if not lines[at].endswith("\n"):
        lines[at] += newline
    lines[at + 1 : at + 1] = [row + newline for row in rows]
    return "".join(lines)


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on \\n only (str.splitlines also splits on the unicode
    separators that a cell may hold)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
