from __future__ import annotations

from pathlib import Path

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE, parse_outcomes, read_outcomes

CANONICAL = OUTCOMES_TEMPLATE + (
    "| O-001 | 2026-03-01 | feature/x | 5 | 05-01 | qa-agent | quality-review | success | 3 | review, testing | Review approved |\n"
    "| O-002 | 2026-03-02 | main | 05 | 05-02a | autonomous | workflow | FAILED | 5 | command | Broke the status line |\n"
)


def parse(text: str) -> list[dict[str, object]]:
    result = parse_outcomes(Path("OUTCOMES.md"), text)
    assert result.parseable, result.warnings
    return [r.to_dict() for r in result.records]


def test_canonical_eleven_columns() -> None:
    first, second = parse(CANONICAL)
    assert first == {
        "id": "O-001", "date": "2026-03-01", "branch": "feature/x", "phase": "5", "plan": "05-01",
        "agent": "qa-agent", "task_type": "quality-review", "outcome": "success", "importance": 3,
        "tags": ["review", "testing"], "summary": "Review approved",
    }  # fmt: skip
    assert second["outcome"] == "failed"  # outcome in any case
    assert second["plan"] == "05-02a"


def test_legacy_ten_columns_without_branch_read_as_main() -> None:
    text = (
        "| ID | Date | Phase | Plan | Agent | Task Type | Outcome | Importance | Tags | Summary |\n"
        "|----|------|-------|------|-------|-----------|---------|------------|------|---------|\n"
        "| O-001 | 2026-03-01 | 1 | review-fix | a, b | ci-cd, tooling | partial | 3 | t | s |\n"
    )
    [record] = parse_outcomes(Path("OUTCOMES.md"), text).records
    assert record.branch == "main"
    assert record.plan == "review-fix"
    assert record.agents == ["a", "b"]
    assert record.task_types == ["ci-cd", "tooling"]


def test_columns_are_found_by_name_and_id_may_be_missing() -> None:
    text = "| Outcome | Agent | Date |\n|---|---|---|\n| Success | dev-1 | 2026-03-01 |\n"
    [record] = parse(text)
    assert record["id"] is None
    assert (record["agent"], record["outcome"], record["date"]) == (
        "dev-1",
        "success",
        "2026-03-01",
    )
    assert record["importance"] == 2  # no Importance column: the spec's base score


def test_table_interrupted_by_key_value_section_and_continued() -> None:
    text = CANONICAL + (
        "\n## Phase 5 — Shipped 2026-03-04\n"
        "task_type: ship\nagent: ship-pipeline\nresult: success\npr: N/A\n"
        "| O-003 | 2026-03-05 | main | 6 | 06-01 | dev | backend | success | 2 | api | Endpoint |\n"
    )
    records = parse(text)
    assert [r["id"] for r in records] == ["O-001", "O-002", "O-003", None]
    shipped = records[-1]
    assert shipped["phase"] == "5"
    assert shipped["date"] == "2026-03-04"
    assert (shipped["agent"], shipped["task_type"], shipped["outcome"]) == (
        "ship-pipeline",
        "ship",
        "success",
    )


def test_key_value_section_layout_alone() -> None:
    text = (
        "# Outcomes\n\n## Phase 1 — Shipped 2026-02-01\n"
        "task_type: implementation\nagent: builder\nresult: partial\nimportance: 4\n"
        "summary: First slice\ntags: core, api\n\n"
        "## Phase 2 — Shipped 2026-02-09\nagent: builder\nresult: success\n"
    )
    first, second = parse(text)
    assert first["importance"] == 4
    assert first["tags"] == ["core", "api"]
    assert first["summary"] == "First slice"
    assert second["phase"] == "2"
    assert second["summary"] == "Phase 2 — Shipped 2026-02-09"


def test_crlf_file() -> None:
    records = parse(CANONICAL.replace("\n", "\r\n"))
    assert [r["id"] for r in records] == ["O-001", "O-002"]
    assert records[0]["summary"] == "Review approved"


def test_exact_duplicate_rows_count_once() -> None:
    row = CANONICAL.splitlines(keepends=True)[-1]
    assert len(parse(CANONICAL + row)) == 2


def test_header_only_template_is_an_empty_log() -> None:
    result = parse_outcomes(Path("OUTCOMES.md"), OUTCOMES_TEMPLATE)
    assert result.parseable and result.records == [] and result.warnings == []


def test_garbage_is_unparseable_with_the_spec_warning(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.md"
    path.write_text("| just | a | row |\nno header here\n")
    result = read_outcomes(path)
    assert not result.parseable
    assert result.records == []
    assert result.warnings == [
        "Warning: OUTCOMES.md could not be parsed. Proceeding without memory."
    ]


def test_binary_file_is_unparseable(tmp_path: Path) -> None:
    path = tmp_path / "OUTCOMES.md"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert not read_outcomes(path).parseable


def test_row_with_missing_cells_is_skipped_with_a_warning() -> None:
    text = CANONICAL + "| O-003 | 2026-03-03 | main |\n"
    result = parse_outcomes(Path("OUTCOMES.md"), text)
    assert [r.id for r in result.records] == ["O-001", "O-002"]
    assert result.warnings == ["Warning: OUTCOMES.md line 12 is not a valid row; skipped."]


def test_missing_file_is_empty_without_warning(tmp_path: Path) -> None:
    result = read_outcomes(tmp_path / "nope" / "OUTCOMES.md")
    assert (result.exists, result.records, result.warnings) == (False, [], [])
    assert not (tmp_path / "nope").exists()


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    from datetime import date

    from legion_llm.memory.outcomes.store import OutcomeInput, add_outcome
    from legion_llm.project import MemoryPaths

    path = tmp_path / ".planning/memory/OUTCOMES.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(
        b"\xef\xbb\xbf| Date | Agent | Outcome |\n|---|---|---|\n| 2026-03-01 | dev | success |\n"
    )
    [record] = read_outcomes(path).records
    assert (record.date, record.agent) == ("2026-03-01", "dev")
    data = OutcomeInput(
        phase="1",
        plan="01-01",
        agent="dev",
        outcome="success",
        summary="s",
        task_type="t",
        branch="main",
    )
    add_outcome(
        MemoryPaths(tmp_path), data, today=date(2026, 3, 2), catalog_file=tmp_path / "none.md"
    )
    assert [r.date for r in read_outcomes(path).records] == ["2026-03-01", "2026-03-02"]
