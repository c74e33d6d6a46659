"""The regex fast path of a store must agree with a full parse on every layout it accepts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.memory.outcomes.fastscan import scan_for_store
from legion_llm.memory.outcomes.read import OUTCOME_COLUMNS, OUTCOMES_TEMPLATE, parse_outcomes
from legion_llm.memory.outcomes.store import FastLogView, LogView, open_log
from legion_llm.records import OutcomeRecord

ROWS = (
    "| O-007 | 2026-01-01 | main | 1 | 01-01 | alpha, beta-two | ci-cd, tooling | success | 2 | x | a \\| b |\n"
    "| O-003 | 2026-01-02 | dev | 1 | 01-02 | gamma | backend | failed | 5 | y | c |\n"
)
LEGACY = (
    "# Log\n\n| ID | Date | Phase | Plan | Agent | Task Type | Outcome | Importance | Tags | Summary |\n"
    "|---|---|---|---|---|---|---|---|---|---|\n"
    "| O-002 | 2026-01-01 | 1 | 01-01 | alpha | backend | success | 2 | x | s |\n"
)
FAST_LAYOUTS = {
    "template only": OUTCOMES_TEMPLATE,
    "canonical": OUTCOMES_TEMPLATE + ROWS,
    "canonical, text after": OUTCOMES_TEMPLATE + ROWS + "\n## Notes\nsome note\n",
    "no final newline": OUTCOMES_TEMPLATE + ROWS.rstrip("\n"),
    "crlf": (OUTCOMES_TEMPLATE + ROWS).replace("\n", "\r\n"),
    "legacy ten columns": LEGACY,
    "split by prose": OUTCOMES_TEMPLATE
    + ROWS
    + "\nA paragraph.\n\n| O-009 | 2026-02-01 | main | 2 | 02-01 | delta | web | success | 2 | z | d |\n",
}
SLOW_LAYOUTS = {
    "key:value sections": OUTCOMES_TEMPLATE
    + ROWS
    + "\n## Phase 1 — Shipped 2026-01-03\nagent: alpha\nresult: success\n",
    "no id column": "| Date | Agent | Task Type | Outcome |\n|---|---|---|---|\n| 2026-01-01 | alpha | backend | success |\n",
    "id not first": "| Date | ID | Agent | Task Type |\n|---|---|---|---|\n| 2026-01-01 | O-001 | alpha | backend |\n",
    "a fenced block": OUTCOMES_TEMPLATE
    + ROWS
    + "\n```\n| O-099 | 2026-01-01 | main | 1 | 01-01 | a | b | success | 1 | x | y |\n```\n",
    "an indented tilde fence": OUTCOMES_TEMPLATE + ROWS + "\n   ~~~\n| O-099 | x |\n   ~~~\n",
}
PROBES = [
    (["alpha"], ["tooling"]), (["beta-two"], ["ci-cd"]), (["beta"], ["ci-cd"]), (["two"], ["ci-cd"]),
    (["gamma"], ["backend"]), (["gamma"], ["back"]), (["alpha"], ["backend"]), (["delta"], ["web"]),
    (["Gamma"], ["backend"]), (["nobody"], ["backend"]), (["x"], ["a \\| b"]), (["y"], ["c"]),
    (["main"], ["1"]), (["success"], ["2"]),
]  # fmt: skip


def new_record() -> OutcomeRecord:
    return OutcomeRecord(
        "O-010", "2026-03-01", "main", "3", "03-01", "zeta", "qa", "success", 2, "t", "new"
    )


@pytest.mark.parametrize("name", sorted(FAST_LAYOUTS))
def test_fast_path_agrees_with_the_full_parse(name: str, tmp_path: Path) -> None:
    text = FAST_LAYOUTS[name]
    scan = scan_for_store(text.encode(), OUTCOME_COLUMNS)
    assert scan is not None
    fast = FastLogView(scan)
    full = LogView(parse_outcomes(Path("OUTCOMES.md"), text))
    assert fast.max_id() == full.max_id()
    assert fast.count() == full.count()
    for agents, types in PROBES:
        assert fast.has_agent_task(agents, types) == full.has_agent_task(agents, types), (
            agents,
            types,
        )
    chunks, fast_row = fast.insert(new_record())
    fast_text = b"".join(chunks).decode()
    assert fast_row == full.insert(new_record())[1]
    reparsed = parse_outcomes(Path("OUTCOMES.md"), fast_text)
    assert [r.id for r in reparsed.records] == [r.id for r in full.parsed.records] + ["O-010"]
    newline = scan.newline.decode()
    assert fast_text.replace(fast_row + newline, "", 1) in (
        text,
        text + newline,
    )  # nothing else moved


@pytest.mark.parametrize("name", sorted(SLOW_LAYOUTS))
def test_other_layouts_take_the_full_parse(name: str, tmp_path: Path) -> None:
    assert scan_for_store(SLOW_LAYOUTS[name].encode(), OUTCOME_COLUMNS) is None
    path = tmp_path / "OUTCOMES.md"
    path.write_text(SLOW_LAYOUTS[name])
    assert type(open_log(path)) is LogView


def test_store_into_each_layout(tmp_path: Path) -> None:
    from legion_llm.memory.outcomes.store import OutcomeInput, add_outcome
    from legion_llm.project import MemoryPaths

    for name, text in {**FAST_LAYOUTS, **SLOW_LAYOUTS}.items():
        root = tmp_path / name.replace(" ", "-").replace(":", "")
        paths = MemoryPaths(root)
        paths.memory_dir.mkdir(parents=True)
        paths.outcomes.write_text(text)
        before = parse_outcomes(paths.outcomes, text).records
        data = OutcomeInput(
            phase="4",
            plan="04-01",
            agent="alpha",
            outcome="success",
            summary="n",
            task_type="backend",
            branch="main",
        )
        stored = add_outcome(paths, data, today=date(2026, 3, 1), catalog_file=root / "none.md")
        after = parse_outcomes(paths.outcomes, paths.outcomes.read_text()).records
        assert len(after) == len(before) + 1, name
        assert [r for r in after if r.date == "2026-03-01" and r.agent == "alpha"], name
        assert stored.record.importance == (
            2 if any("alpha" in r.agents and "backend" in r.task_types for r in before) else 3
        ), name


def test_a_fence_opens_only_at_the_start_of_a_line() -> None:
    from legion_llm.memory.outcomes.fastscan import _has_fence

    assert _has_fence(b"rows\n```\nx") and _has_fence(b"```x") and _has_fence(b"a\n   ~~~")
    assert not _has_fence(b"a\n    ```")  # four spaces: indented code, not a fence
    assert not _has_fence(b"| O-001 | uses ``` inline | x |\n| O-002 | a ~~~ b |")
