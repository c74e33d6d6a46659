"""Parse every real memory file of every corpus under ../shared/realworld* (skipped when there is
none)."""

from __future__ import annotations

import pytest

from legion_llm.memory.outcomes.read import read_outcomes
from tests.conftest import CORPORA, NO_CORPUS, REALWORLD, SHARED

pytestmark = [pytest.mark.skipif(not CORPORA, reason=NO_CORPUS), pytest.mark.corpus]

# file (relative to ../shared) -> (records, records with an ID, key:value section records)
EXPECTED_OUTCOMES = {
    "realworld/ace027__custom-psa-nolegion/.planning/memory/OUTCOMES.md": (28, 26, 2),
    "realworld/ace027__custom-psa-nolegion/.planning/memory/OUTCOMES.md.v1": (6, 6, 0),
    "realworld/9thLevelSoftware__legion/tests/fixtures/dry-run/ok/.planning/memory/OUTCOMES.md":
        (1, 0, 0),
}  # fmt: skip


def test_every_outcomes_file_is_listed() -> None:
    found = {
        p.relative_to(SHARED).as_posix()
        for corpus in CORPORA
        for p in corpus.rglob("*")
        if p.name.startswith(("OUTCOMES.md", "ARCHIVE.md"))
    }
    assert found == set(EXPECTED_OUTCOMES)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTCOMES))
def test_outcomes_row_counts(name: str) -> None:
    path = SHARED / name
    before = path.read_bytes()
    result = read_outcomes(path)
    assert result.parseable and result.warnings == []
    total, with_id, kv = EXPECTED_OUTCOMES[name]
    assert len(result.records) == total
    assert sum(r.id is not None for r in result.records) == with_id
    assert sum(r.line_no is None for r in result.records) == kv
    assert all(r.outcome in {"success", "partial", "failed"} for r in result.records)
    assert path.read_bytes() == before


def test_custom_psa_details() -> None:
    records = read_outcomes(
        REALWORLD / "ace027__custom-psa-nolegion/.planning/memory/OUTCOMES.md"
    ).records
    by_id = {r.id: r for r in records if r.id}
    assert by_id["O-013"].summary.startswith("Appointments on the ticket")
    assert by_id["O-026"].branch == "dev" and by_id["O-026"].plan == "04-04"
    shipped = [r for r in records if r.id is None]
    assert [(r.phase, r.agent, r.task_type, r.date) for r in shipped] == [
        ("2", "ship-pipeline", "ship", "2026-10-10"),
        ("3", "ship-pipeline", "ship", "2026-10-10"),
    ]


def test_legion_fixture_without_id_column() -> None:
    [record] = read_outcomes(
        REALWORLD
        / "9thLevelSoftware__legion/tests/fixtures/dry-run/ok/.planning/memory/OUTCOMES.md"
    ).records
    assert (record.date, record.agent, record.outcome, record.branch) == (
        "2026-03-01", "engineering-senior-developer", "success", "main",
    )  # fmt: skip


def test_real_catalog_first_task_types() -> None:
    from legion_llm.memory.catalog import load_catalog

    catalog = load_catalog(REALWORLD / "9thLevelSoftware__legion/skills/agent-registry/CATALOG.md")
    assert catalog["engineering-backend-architect"].task_types[0] == "backend"
    assert catalog["project-manager-senior"].division == "Project Management"
    assert catalog["polymath"].division == "Specialized"
    assert catalog["testing-workflow-optimizer"].task_types[0] == "test-pipeline-optimization"
    assert len(catalog) == 49


@pytest.mark.parametrize(
    ("name", "phase"),
    [
        ("ace027__custom-psa-nolegion", "4"),
        ("9thLevelSoftware__legion", "12"),
        ("C1p86__loci", "16"),
    ],
)
def test_current_phase_from_real_state_files(name: str, phase: str) -> None:
    from legion_llm.memory.phases.planning import current_phase

    assert current_phase(REALWORLD / name / ".planning/STATE.md") == phase


# file -> (kind, table rows, learn entries)
EXPECTED_KNOWLEDGE = {
    "realworld/ace027__custom-psa-nolegion/.planning/memory/PATTERNS.md": ("patterns", 2, 0),
    "realworld/ace027__custom-psa-nolegion/.planning/memory/PATTERNS.md.v1": ("patterns", 1, 0),
    "realworld/ace027__custom-psa-nolegion/.planning/memory/PREFERENCES.md":
        ("preferences", 6, 0),
}  # fmt: skip


def test_every_knowledge_file_is_listed() -> None:
    names = ("PATTERNS.md", "ERRORS.md", "PREFERENCES.md", "PITFALLS.md")
    found = {
        p.relative_to(SHARED).as_posix()
        for corpus in CORPORA
        for p in corpus.rglob("*")
        if p.name.startswith(names)
    }
    assert found == set(EXPECTED_KNOWLEDGE)


@pytest.mark.parametrize("name", sorted(EXPECTED_KNOWLEDGE))
def test_knowledge_files_parse(name: str) -> None:
    from legion_llm.memory.knowledge.read import KINDS, read_knowledge

    kind, rows, entries = EXPECTED_KNOWLEDGE[name]
    path = SHARED / name
    before = path.read_bytes()
    loaded = read_knowledge(KINDS[kind], path)
    assert loaded.warnings == []
    assert sum(r.format == "table" for r in loaded.records) == rows
    assert sum(r.format == "learn" for r in loaded.records) == entries
    assert all(r.branch == "dev" and r.id for r in loaded.records)
    assert path.read_bytes() == before


def test_real_preferences_cells_with_diff_fragments() -> None:
    from legion_llm.memory.knowledge.read import PREFERENCES, read_knowledge

    records = read_knowledge(
        PREFERENCES, REALWORLD / "ace027__custom-psa-nolegion/.planning/memory/PREFERENCES.md"
    ).records
    first = records[0].to_dict()
    assert first["decision_point"] == "manual-edit" and first["signal"] == "corrective"
    assert first["user_choice"].startswith("User edited backend/app/models.py")
    assert [r.values["signal"] for r in records].count("positive") == 3
