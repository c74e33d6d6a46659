"""Text from memory files never drives the terminal: control characters (escape sequences for the
title, clear screen and colours, other C0 and C1 controls) and bidi overrides are shown as
visible symbols in human output; --json keeps the exact text."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from legion_llm.app.result import visible
from tests.conftest import FIXTURES

# OSC title (ESC ] ... BEL), clear screen, colours, a C1 CSI (U+009B), backspaces, a bidi override
HOSTILE = "Audit \x1b]0;pwned\x07 \x1b[2J\x1b[31mred\x1b[0m \x9b6n \x08\x08 \u202egnp.exe"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def hostile_project(tmp_path: Path) -> Path:
    """The demo project with HOSTILE in an outcome, an error fix, a learning and a plan summary."""
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    memory = root / ".planning/memory"
    row = f"| O-014 | 2026-06-14 | main | 4 | 04-04 | dev | backend | success | 4 | audit-log | {HOSTILE} |\n"
    with open(memory / "OUTCOMES.md", "a", encoding="utf-8") as f:
        f.write(row)
    error = (
        f"| E-009 | 2026-06-14 | main | audit export fails | {HOSTILE} | dev | true | audit-log |\n"
    )
    with open(memory / "ERRORS.md", "a", encoding="utf-8") as f:
        f.write(error)
    learning = (
        "---\ntags:\n  - audit-log\n  - export\nsource: manual\nextractedAt: 2026-06-14T00:00:00Z\n"
        f"confidence: high\ncategory: gotcha\n---\n\n# {HOSTILE}\n\n{HOSTILE} in the export.\n"
    )
    (root / ".mission-control/memory/hostile-audit.md").write_text(learning, encoding="utf-8")
    summary = root / ".planning/phases/03-fx-rates/03-01-SUMMARY.md"
    summary.write_text(summary.read_text(encoding="utf-8") + f"\n{HOSTILE}\n", encoding="utf-8")
    return root


COMMANDS = {
    "outcomes recall": ["outcomes", "recall", "--tags", "audit-log"],
    "briefing": ["briefing"],
    "recall TOPIC": ["recall", "audit"],
    "errors recall": ["errors", "recall", "--tags", "audit-log"],
    "learnings load": ["learnings", "load", "--goal", "audit-log export"],
    "phase-context": ["phase-context", "3"],
}


def _json_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _json_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _json_strings(v)]
    return []


@pytest.mark.parametrize("command", COMMANDS)
def test_human_output_shows_control_characters_visibly_and_json_keeps_them(
    command: str, cli: Any, hostile_project: Path
) -> None:
    args = [*COMMANDS[command], "--root", str(hostile_project)]
    human = cli(*args)
    assert human.exit_code == 0, human.stderr
    assert not RAW.findall(human.stdout + human.stderr)
    assert "␛" in human.stdout and "pwned" in human.stdout
    as_json = cli(*args, "--json")
    assert any(HOSTILE in s for s in _json_strings(as_json.json["data"])), command
    assert json.loads(as_json.stdout) == as_json.json  # still one JSON object


def test_a_warning_quoting_hostile_text_is_shown_visibly(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".mission-control/memory").mkdir(parents=True)
    bad = root / ".mission-control/memory/bad.md"
    bad.write_text(f"---\ntags: [a\n---\n# \x1b[2J{HOSTILE}\n", encoding="utf-8")
    (root / ".mission-control/memory/x\x1b[2J.md").write_text("no frontmatter", encoding="utf-8")
    result = cli("learnings", "load", "--goal", "a", "--root", root)
    assert result.exit_code == 0
    assert "Warning" in result.stderr and not RAW.findall(result.stderr + result.stdout)


def test_visible_maps_every_control_and_keeps_newlines_and_tabs() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("crlf\r\nline") == "crlf\nline"
    assert visible("lone\rcr") == "lone␍cr"
    assert visible("\x1b[31m\x07\x00\x7f") == "␛[31m␇␀␡"
    assert visible("\x9b\x85\u202e\u2066") == "<U+009B><U+0085><U+202E><U+2066>"
    assert not RAW.findall(visible("".join(map(chr, range(0x00, 0xA0)))))
    assert visible("plain text, ümlaut, 日本") == "plain text, ümlaut, 日本"
