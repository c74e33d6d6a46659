from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.errors import InputError
from legion_llm.memory.knowledge.learn_entries import parse_learn_entries
from legion_llm.memory.knowledge.read import (
    ERRORS,
    PATTERNS,
    PREFERENCES,
    parse_knowledge,
    read_knowledge,
)
from legion_llm.memory.knowledge.recall import KnowledgeQuery, recall_knowledge
from legion_llm.memory.knowledge.store import add_knowledge
from legion_llm.project import MemoryPaths

TODAY = date(2026, 4, 1)
LEARN_ONLY = """# Pitfalls

Project-specific pitfalls recorded via `/legion:learn`.
Referenced by planning.

## PIT-001: Vite dev server caches stale env files
- **Date**: 2026-03-20
- **Type**: pitfall
- **Tags**: vite, env, tooling
- **Phase**: 3

Restart the dev server after editing `.env.local`; HMR does not reload env files.

| Command | Result |
|---------|--------|
| npm run dev | stale |

---

## PIT-002: Flaky e2e login
- **Date**: 2026-03-28
- **Type**: pitfall
- **Tags**: e2e, playwright
- **Signal**: corrective
- **Phase**: N/A

Wait for the session cookie before navigating.

---
"""
MIXED = PATTERNS.template + (
    "| P-001 | 2026-03-30 | main | Split migrations per table | Phase 2 | Schema work over 3 tables | O-004 | db, migrations |\n"
    "| P-002 | 2026-01-02 | feature/x | Spike first | Phase 3 | Unknown library | O-009 | spike |\n"
    "\nLearnings recorded with /legion:learn are kept below the table.\n\n"
    "## PAT-001: Contract tests before the client\n- **Date**: 2026-03-31\n- **Type**: pattern\n"
    "- **Tags**: api, testing\n- **Phase**: 4\n\nWrite the contract test first.\n\n---\n"
)


def test_learn_entries_with_bullets_body_and_tables() -> None:
    first, second = parse_learn_entries(LEARN_ONLY)
    assert (first.id, first.title, first.date) == (
        "PIT-001",
        "Vite dev server caches stale env files",
        "2026-03-20",
    )
    assert first.tags == ["vite", "env", "tooling"]
    assert first.fields["phase"] == "3"
    assert (
        first.body.startswith("Restart the dev server") and "| npm run dev | stale |" in first.body
    )
    assert (
        second.fields["signal"] == "corrective"
        and second.body == "Wait for the session cookie before navigating."
    )


def test_learn_entries_become_records_and_their_tables_are_not_rows() -> None:
    loaded = parse_knowledge(ERRORS, Path("ERRORS.md"), LEARN_ONLY)
    assert [r.id for r in loaded.records] == ["PIT-001", "PIT-002"]
    assert loaded.table is None
    pit = loaded.records[0].to_dict()
    assert pit["error_signature"] == "Vite dev server caches stale env files"
    assert pit["fix"].startswith("Restart the dev server") and pit["format"] == "learn"


def test_mixed_file_reads_both_formats() -> None:
    loaded = parse_knowledge(PATTERNS, Path("PATTERNS.md"), MIXED)
    assert [(r.id, r.format) for r in loaded.records] == [
        ("P-001", "table"),
        ("P-002", "table"),
        ("PAT-001", "learn"),
    ]
    assert loaded.records[1].branch == "feature/x"
    assert loaded.max_id() == 2


def test_rows_without_branch_column_count_as_main() -> None:
    text = "| ID | Date | Pattern | Context | Reuse Criteria | Source | Tags |\n|---|---|---|---|---|---|---|\n| P-001 | 2026-01-01 | p | c | r | s | t |\n"
    [record] = parse_knowledge(PATTERNS, Path("PATTERNS.md"), text).records
    assert record.branch == "main"


def project(tmp_path: Path, name: str, text: str) -> MemoryPaths:
    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True, exist_ok=True)
    (paths.memory_dir / name).write_text(text)
    return paths


def test_store_into_a_learn_file_keeps_every_entry_byte_for_byte(tmp_path: Path) -> None:
    paths = project(tmp_path, "ERRORS.md", LEARN_ONLY)
    stored = add_knowledge(
        paths,
        ERRORS,
        {"error_signature": "ENOSPC: no space left", "fix": "prune docker", "agent": "ops"},
        today=TODAY,
        branch="main",
    )
    text = paths.errors.read_text()
    assert text.startswith(LEARN_ONLY)
    assert stored.record.id == "E-001" and stored.action == "added"
    assert [r.id for r in read_knowledge(ERRORS, paths.errors).records] == [
        "E-001",
        "PIT-001",
        "PIT-002",
    ]


def test_store_into_a_mixed_file_appends_after_the_table(tmp_path: Path) -> None:
    paths = project(tmp_path, "PATTERNS.md", MIXED)
    add_knowledge(
        paths,
        PATTERNS,
        {"pattern": "p|ipe", "context": "c", "reuse_criteria": "r", "tags": "a, b"},
        today=TODAY,
        branch="dev",
    )
    text = paths.patterns.read_text()
    entry = MIXED[MIXED.index("\nLearnings recorded") :]
    assert text.endswith(entry)
    records = read_knowledge(PATTERNS, paths.patterns).records
    assert [r.id for r in records] == ["P-001", "P-002", "P-003", "PAT-001"]
    assert records[2].values["pattern"] == "p|ipe" and records[2].branch == "dev"


def test_first_store_writes_the_exact_templates(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    add_knowledge(paths, PREFERENCES, {
        "decision_point": "review-verdict", "context": "Phase 5", "proposed": "2 blockers",
        "user_choice": "accepted", "signal": "positive", "agent": "qa", "tags": "review",
    }, today=TODAY, branch="main")  # fmt: skip
    assert paths.preferences.read_text() == PREFERENCES.template + (
        "| D-001 | 2026-04-01 | main | review-verdict | Phase 5 | 2 blockers | accepted | positive | qa | review |\n"
    )
    assert PREFERENCES.template.splitlines()[0] == "# Memory — User Preferences"
    assert (
        "|----|------|--------|---------------|---------|----------|-------------|--------|-------|------|"
        in PREFERENCES.template
    )


@pytest.mark.parametrize(
    ("kind", "values", "message"),
    [
        (
            PREFERENCES,
            {
                "decision_point": "coffee",
                "context": "c",
                "proposed": "p",
                "user_choice": "u",
                "signal": "positive",
                "agent": "a",
            },
            "--decision-point",
        ),
        (
            PREFERENCES,
            {
                "decision_point": "manual-edit",
                "context": "c",
                "proposed": "p",
                "user_choice": "u",
                "signal": "meh",
                "agent": "a",
            },
            "--signal",
        ),
        (
            ERRORS,
            {"error_signature": "x", "fix": "y", "agent": "a", "resolved": "maybe"},
            "--resolved",
        ),
        (PATTERNS, {"pattern": "", "context": "c", "reuse_criteria": "r"}, "--pattern"),
    ],
)
def test_validation(tmp_path: Path, kind: object, values: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        add_knowledge(MemoryPaths(tmp_path), kind, values, today=TODAY, branch="main")  # type: ignore[arg-type]
    assert not (tmp_path / ".planning").exists()


def test_next_id_is_highest_plus_one_with_gaps(tmp_path: Path) -> None:
    rows = "| P-004 | 2026-01-01 | main | a | b | c | d | e |\n| P-002 | 2026-01-01 | main | a | b | c | d | e |\n"
    paths = project(tmp_path, "PATTERNS.md", PATTERNS.template + rows)
    stored = add_knowledge(
        paths,
        PATTERNS,
        {"pattern": "p", "context": "c", "reuse_criteria": "r"},
        today=TODAY,
        branch="main",
    )
    assert stored.record.id == "P-005"


def error(signature: str, fix: str, resolved: str = "true") -> dict[str, str]:
    return {"error_signature": signature, "fix": fix, "agent": "dev", "resolved": resolved}


def test_the_same_error_stored_with_another_fix_keeps_both_fixes(tmp_path: Path) -> None:
    """Before, the second fix was dropped ("existing") and the row left as it was."""
    paths = MemoryPaths(tmp_path)
    add_knowledge(
        paths,
        ERRORS,
        error("ModuleNotFoundError: No module named 'requests'", "pip install requests"),
        today=TODAY,
        branch="main",
    )
    before = paths.errors.read_bytes()
    again = add_knowledge(
        paths,
        ERRORS,
        error(
            "ModuleNotFoundError: No module named 'requests' (in /srv/app/.venv)",
            "add to requirements",
        ),
        today=TODAY,
        branch="main",
    )
    assert (again.action, again.record.id) == ("updated", "E-001")
    assert again.decided_by in ("exact", "confidence")
    [record] = read_knowledge(ERRORS, paths.errors).records
    assert record.values["fix"] == "pip install requests; also: add to requirements"
    assert record.resolved
    merged = paths.errors.read_bytes()
    assert merged != before
    same = error("ModuleNotFoundError: No module named 'requests'", "Add to requirements.")
    third = add_knowledge(paths, ERRORS, same, today=TODAY, branch="main")
    assert third.action == "existing" and paths.errors.read_bytes() == merged  # held already


def test_an_unresolved_entry_keeps_the_fix_that_did_not_work(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    first = error("ModuleNotFoundError: No module named 'requests'", "pip install request", "false")
    add_knowledge(paths, ERRORS, first, today=TODAY, branch="main")
    second = error(
        "ModuleNotFoundError: No module named 'requests'", "pip3 install --user x", "false"
    )
    assert add_knowledge(paths, ERRORS, second, today=TODAY, branch="main").action == "updated"
    [record] = read_knowledge(ERRORS, paths.errors).records
    assert record.values["fix"] == (
        "pip install request; also tried: pip3 install --user x, which did not resolve it"
    )
    assert not record.resolved


def test_duplicate_of_an_unresolved_error_updates_its_fix(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    add_knowledge(
        paths,
        ERRORS,
        error(
            "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
            "cast",
            "false",
        ),
        today=TODAY,
        branch="main",
    )
    updated = add_knowledge(
        paths,
        ERRORS,
        error(
            "src/a.ts(12,5): error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
            "parse with Number()",
        ),
        today=TODAY,
        branch="main",
    )
    assert (updated.action, updated.record.id) == ("updated", "E-001")
    [record] = read_knowledge(ERRORS, paths.errors).records
    assert record.resolved  # the new fix first, the one that did not work kept
    assert (
        record.values["fix"] == "parse with Number() (tried before: cast, which did not resolve it)"
    )


def test_different_errors_are_not_merged(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    add_knowledge(
        paths,
        ERRORS,
        error(
            "error TS2345: Argument of type 'string' is not assignable to parameter of type 'number'.",
            "a",
        ),
        today=TODAY,
        branch="main",
    )
    other = add_knowledge(
        paths,
        ERRORS,
        error("EACCES: permission denied, open '/etc/app.conf'", "b"),
        today=TODAY,
        branch="main",
    )
    assert (other.action, other.record.id) == ("added", "E-002")


def test_llm_decider_settles_only_the_ambiguous_band(tmp_path: Path) -> None:
    from legion_llm.memory.knowledge.store import find_duplicate

    paths = project(
        tmp_path,
        "ERRORS.md",
        ERRORS.template
        + "| E-001 | 2026-01-01 | main | KeyError: 'DATABASE_URL' in settings loader | set the env var | dev | true | |\n",
    )
    records = read_knowledge(ERRORS, paths.errors).records
    asked: list[str] = []

    def decide(signature: str, matches: object) -> tuple[int | None, str]:
        asked.append(signature)
        return None, "claude"

    assert (
        find_duplicate("KeyError: 'DATABASE_URL' in settings loader", records, decide) is not None
    )
    assert asked == []  # an exact match never asks


def test_pattern_recall_tags_branch_and_recency() -> None:
    records = parse_knowledge(PATTERNS, Path("PATTERNS.md"), MIXED).records
    ids = lambda **q: [r["id"] for r in recall_knowledge(records, KnowledgeQuery(**q), TODAY)]  # noqa: E731
    assert ids() == ["PAT-001", "P-001", "P-002"]
    assert ids(tags=["API"]) == ["PAT-001"]
    assert ids(branch="feature/x") == ["P-002"]
    assert ids(branch="main") == ["PAT-001", "P-001"]
    assert ids(limit=1) == ["PAT-001"]


def test_error_recall_resolved_first_then_keyword_overlap() -> None:
    text = ERRORS.template + (
        "| E-001 | 2026-03-01 | main | Cannot find module 'express' | npm i express | dev | false | node |\n"
        "| E-002 | 2026-01-01 | main | Cannot find module 'lodash' imported from utils | npm i lodash | dev | true | node |\n"
        "| E-003 | 2026-03-02 | main | segmentation fault in worker | rebuild | dev | true | native |\n"
    )
    records = parse_knowledge(ERRORS, Path("ERRORS.md"), text).records
    found = recall_knowledge(
        records, KnowledgeQuery(error_text="Error: Cannot find module 'express'", limit=5), TODAY
    )
    assert [r["id"] for r in found] == ["E-002", "E-001"]
    assert found[1]["match_score"] > found[0]["match_score"]
    assert [r["id"] for r in recall_knowledge(records, KnowledgeQuery(tags=["native"]), TODAY)] == [
        "E-003"
    ]


def test_preference_recall_filters() -> None:
    text = PREFERENCES.template + (
        "| D-001 | 2026-03-01 | main | review-verdict | c | p | u | positive | qa | review |\n"
        "| D-002 | 2026-03-20 | main | manual-edit | c | p | u | corrective | dev | edit |\n"
        "| D-003 | 2026-03-21 | dev | fix-acceptance | c | p | u | negative | dev | fix |\n"
    )
    records = parse_knowledge(PREFERENCES, Path("PREFERENCES.md"), text).records
    ids = lambda **q: [r["id"] for r in recall_knowledge(records, KnowledgeQuery(**q), TODAY)]  # noqa: E731
    assert ids() == ["D-003", "D-002", "D-001"]
    assert ids(signal="corrective") == ["D-002"]
    assert ids(decision_point="review-verdict") == ["D-001"]
    assert ids(agent="dev", branch="main") == ["D-002"]


def test_updating_a_fix_rewrites_the_row_in_its_own_table_columns(tmp_path: Path) -> None:
    legacy = (
        "| ID | Date | Error Signature | Fix | Agent | Resolved | Tags |\n|---|---|---|---|---|---|---|\n"
        "| E-001 | 2026-01-01 | TypeError: cannot read property 'foo' of undefined in src/app.ts | guess | dev | false | ts |\n"
    )
    paths = project(
        tmp_path, "ERRORS.md", legacy + "\n" + ERRORS.template[ERRORS.template.index("## Errors") :]
    )
    updated = add_knowledge(
        paths,
        ERRORS,
        error(
            "TypeError: cannot read property 'foo' of undefined in src/app.ts", "optional chaining"
        ),
        today=TODAY,
        branch="main",
    )
    assert updated.action == "updated"
    [record] = read_knowledge(ERRORS, paths.errors).records
    assert record.values["error_signature"].startswith("TypeError: cannot read property 'foo'")
    assert (record.values["fix"], record.values["agent"], record.tags) == (
        "optional chaining (tried before: guess, which did not resolve it)",
        "dev",
        ["ts"],
    )
    assert record.resolved


def test_ids_in_a_table_hidden_inside_a_learn_entry_are_never_reused(tmp_path: Path) -> None:
    text = (
        "## PAT-001: Entry with a table right after its bullets\n- **Date**: 2026-03-01\n\n"
        + PATTERNS.template[PATTERNS.template.index("| ID") :]
        + "| P-007 | 2026-03-01 | main | a | b | c | d | e |\n"
    )
    paths = project(tmp_path, "PATTERNS.md", text)
    stored = add_knowledge(
        paths,
        PATTERNS,
        {"pattern": "p", "context": "c", "reuse_criteria": "r"},
        today=TODAY,
        branch="main",
    )
    assert stored.record.id == "P-008"
