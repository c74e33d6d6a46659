"""Each tool's description says what the tool returns, and a real call returns it: the fields a
description documents (`{data: {records: [{id, date, ...}], total}}`, or `kind=match: {data:
...}` for one kind, view or route of a merged tool) are compared with the object one call of
each case returns (the cases of tests/mcp/test_annotations.py). Descriptions reach the client
on one line, stand alone (no section numbers of a spec that is not shipped) and name arguments,
not CLI options."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.inprocess import call_tools
from tests.mcp.test_annotations import NEEDS_THE_API, SCENARIOS, TOOLS, run_case

Tree = dict[str, Any] | list[Any] | None
_NAME = re.compile(r"\s*(\.\.\.|<[^>]+>|[A-Za-z_][\w.]*)\s*")


def documented(description: str, selector: str | None = None) -> Tree:
    """The shape a description documents: the one after `selector: ` (e.g. `kind=match: {data:
    ...}`) when it has one, else the first `{ok, ...}` or `{data: ...}` in it."""
    start = -1
    if selector is not None:
        start = description.find(f"{selector}: {{")
        start = start + len(selector) + 2 if start >= 0 else -1
    if start < 0:
        found = re.search(r"\{(ok|data)\b", description)
        if found is None:
            return None
        start = found.start()
    tree, _ = _parse(description, start)
    return tree


MERGED = {"memory_recall": "kind", "memory_store": "kind", "memory_summary": "view",
          "phase_read": "view"}  # fmt: skip


def selector(case: tuple[str, str]) -> str | None:
    """The part of a tool's description that documents this case's answer."""
    tool, label = case
    if tool in MERGED:
        return f"{MERGED[tool]}={label}"
    return "engine=host" if label == "host request" else None


def _parse(text: str, i: int) -> tuple[Tree, int]:
    if text[i] == "[":
        inner, i = _parse(text, i + 1) if text[i + 1] in "{[" else (None, text.index("]", i))
        return [inner], text.index("]", i) + 1
    assert text[i] == "{", text[i:]
    tree: dict[str, Any] = {}
    i += 1
    while True:
        match = _NAME.match(text, i)
        assert match, text[i:]
        name, i = match[1], match.end()
        value: Tree = None
        if text[i] == ":":
            i += 1
            while text[i] == " ":
                i += 1
            if text[i] in "{[":
                value, i = _parse(text, i)
            else:  # a word or two: a leaf
                i = re.compile(r"[^,}]*").match(text, i).end()  # type: ignore[union-attr]
        if name != "...":
            tree[name] = value
        while text[i] == " ":
            i += 1
        if text[i] == "}":
            return tree, i + 1
        assert text[i] == ",", text[i:]
        i += 1


def missing(tree: Tree, actual: Any, where: str = "") -> list[str]:
    """The documented fields a real result lacks, as paths."""
    if tree is None:
        return []
    if isinstance(tree, list):
        if not isinstance(actual, list):
            return [f"{where} is not a list"]
        return [m for item in actual for m in missing(tree[0], item, f"{where}[]")]
    if not isinstance(actual, dict):
        return [f"{where} is not an object"]
    found = []
    for key, sub in tree.items():
        if key.startswith("<"):
            found += [m for k, v in actual.items() for m in missing(sub, v, f"{where}.{k}")]
        elif key not in actual:
            found.append(f"{where}.{key}")
        else:
            found += missing(sub, actual[key], f"{where}.{key}")
    return found


def test_descriptions_are_one_line_without_runs_of_spaces() -> None:
    for name, tool in TOOLS.items():
        assert "\n" not in tool.description and "  " not in tool.description, name
        assert tool.description == tool.description.strip()


def test_the_shape_parser_reads_what_the_descriptions_write() -> None:
    shape = documented("Does x. Returns {ok, data: {records: [{id, date, ...}], archived: [ids], "
                       "by: {<kind>: {n}}, total}}; more.")  # fmt: skip
    assert shape == {"ok": None, "data": {"records": [{"id": None, "date": None}],
                                          "archived": [None], "by": {"<kind>": {"n": None}},
                                          "total": None}}  # fmt: skip
    assert missing(shape, {"ok": True, "data": {"records": [{"id": 1}], "archived": [],
                                               "by": {"a": {}}, "total": 0}}) == [
        ".data.records[].date", ".data.by.a.n"]  # fmt: skip


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "case", sorted(c for c in SCENARIOS if c[0] not in NEEDS_THE_API), ids=" ".join
)
def test_every_documented_field_is_in_a_real_result(case: tuple[str, str], tmp_path: Path) -> None:
    shape = documented(TOOLS[case[0]].description, selector(case))
    assert shape is not None, f"{case[0]}'s description does not say what it returns"
    result, _ = run_case(case, tmp_path)
    assert not result.is_error, result.text
    assert missing(shape, result.data) == [], case


ARGUMENTS = {argument for tool in TOOLS.values() for argument in tool.input_schema["properties"]}


def test_descriptions_stand_alone_and_speak_in_argument_names() -> None:
    for name, tool in TOOLS.items():
        text = tool.description
        assert not re.search(r"\bsection \d", text, re.IGNORECASE), name  # a spec not shipped
        assert not re.search(r"(?<![\w-])--[a-z]", text), name  # a CLI flag, not an argument
        assert "legion-llm " not in text, name  # a command line, not this tool
        for named in re.findall(r"\b([a-z_]+)=", text):  # apply=true, kind=match, engine=host
            assert named in ARGUMENTS, (name, named)  # this tool's, or the one it points to


def test_errors_name_arguments_not_cli_flags(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    first, again, dated = call_tools(root, [
        ("phase_compact", {"phase": 3, "engine": "offline", "apply": True}),
        ("phase_compact", {"phase": 3.0, "engine": "offline", "apply": True}),  # 3 as a number
        ("memory_summary", {"today": "soon"}),
    ])  # fmt: skip
    assert not first.is_error and again.is_error and dated.is_error
    assert again.text.endswith("03-COMPACTED.md exists; pass force=true to replace it")
    assert dated.text.endswith("today must be a date like 2026-03-01, not 'soon'")


def test_fixed_choices_are_enums_in_the_schemas() -> None:
    def values(tool: str, argument: str) -> list[str]:
        schema = TOOLS[tool].input_schema["properties"][argument]
        parts = schema.get("anyOf", [schema])
        return [v for part in parts for v in part.get("enum", [part.get("const")]) if v]

    assert values("memory_store", "outcome") == ["success", "partial", "failed"]
    assert values("memory_store", "signal") == ["positive", "negative", "corrective"]
    assert values("memory_store", "confidence") == ["low", "medium", "high"]
    assert "all" in values("memory_recall", "decision_point")
    assert "host" in values("phase_compact", "engine")
    for tool in ("phase_compact", "phase_read", "memory_store"):
        schema = TOOLS[tool].input_schema["properties"]["phase"]
        kinds = {p.get("type") for p in schema["anyOf"]}
        assert {"string", "integer", "number"} <= kinds, tool
