from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from legion_llm.memory.table import (
    column_key,
    decode_cell,
    encode_cell,
    encode_row,
    normalise_text,
    parse_markdown,
    split_row,
)


def test_escaped_pipe_is_a_literal_pipe_inside_a_cell() -> None:
    doc = parse_markdown("| A | B |\n|---|---|\n| `x \\| y` | two |\n")
    [(_, cells)] = list(doc.rows(doc.tables[0]))
    assert cells == {"a": "`x | y`", "b": "two"}


def test_cells_are_trimmed_and_crlf_is_accepted() -> None:
    doc = parse_markdown("| A | B |\r\n|---|---|\r\n|   one   |two|\r\n")
    [(_, cells)] = list(doc.rows(doc.tables[0]))
    assert cells == {"a": "one", "b": "two"}


def test_text_around_the_table_and_blank_lines_are_ignored() -> None:
    text = "# Title\n\nsome prose | with a pipe\n\n| A |\n|---|\n| 1 |\n\nmore prose\n"
    doc = parse_markdown(text)
    assert len(doc.tables) == 1
    assert [c for _, c in doc.rows(doc.tables[0])] == [{"a": "1"}]


def test_rows_continue_after_other_markdown_without_a_header() -> None:
    text = "| A | B |\n|---|---|\n| 1 | 2 |\n\n## Interlude\nkey: value\n| 3 | 4 |\n"
    doc = parse_markdown(text)
    assert len(doc.tables) == 1
    assert [c["a"] for _, c in doc.rows(doc.tables[0])] == ["1", "3"]


def test_extra_cells_from_a_stray_pipe_join_the_last_column() -> None:
    doc = parse_markdown("| ID | Summary |\n|---|---|\n| O-1 | a | b |\n")
    [(_, cells)] = list(doc.rows(doc.tables[0]))
    assert cells == {"id": "O-1", "summary": "a | b"}


def test_separator_needs_dashes() -> None:
    assert parse_markdown("| A |\n| B |\n").tables == []


def test_column_keys() -> None:
    assert column_key(" Task Type ") == "task_type"
    assert column_key("Error Signature") == "error_signature"
    assert column_key("Reuse-Criteria") == "reuse_criteria"


def test_encode_row_escapes_pipes_and_folds_newlines() -> None:
    row = encode_row(["a|b", "line1\nline2", "C:\\path"])
    assert row == "| a\\|b | line1<br>line2 | C:\\path |"
    assert split_row(row) is not None
    assert len(split_row(row) or []) == 3


def test_backslash_before_punctuation_and_at_end_survives() -> None:
    for text in ["a\\|b", "ends with \\", "\\\\", "x\\<br>y", "<br/> literal", "a\\\nb"]:
        assert decode_cell(encode_cell(text)) == normalise_text(text)


def test_unicode_line_separators_do_not_split_rows() -> None:
    text = "| A | B |\n|---|---|\n| x\u2028y | z\x85w |\n"
    doc = parse_markdown(text)
    [(_, cells)] = list(doc.rows(doc.tables[0]))
    assert cells == {"a": "x\u2028y", "b": "z\x85w"}


@given(st.lists(st.text(), min_size=1, max_size=4))
def test_any_cell_text_survives_write_then_read(values: list[str]) -> None:
    header = "| " + " | ".join(f"C{i}" for i in range(len(values))) + " |\n"
    separator = "|" + "---|" * len(values) + "\n"
    doc = parse_markdown("intro\n\n" + header + separator + encode_row(values) + "\n\ntrailer\n")
    [table] = doc.tables
    [(_, cells)] = list(doc.rows(table))
    assert list(cells.values()) == [normalise_text(v) for v in values]


def test_a_header_repeated_mid_table_is_not_a_row() -> None:
    text = "| A | B |\n|---|---|\n| 1 | 2 |\n| A | B |\n|---|---|\n| 3 | 4 |\n"
    doc = parse_markdown(text)
    assert [c for t in doc.tables for _, c in doc.rows(t)] == [
        {"a": "1", "b": "2"},
        {"a": "3", "b": "4"},
    ]
