"""Finding phases on disk and reading their ROADMAP status (memory/phases.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from legion_llm.errors import InputError
from legion_llm.memory.phases.find import (
    completed_without_compaction,
    find_phase,
    load_phase,
    phase_context,
    roadmap_status,
)
from tests.conftest import FIXTURES

PHASES = FIXTURES / "phases"
CASES = sorted(p.name for p in PHASES.iterdir() if (p / "expected.json").is_file())


def expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PHASES / case / "expected.json").read_text())
    return data


@pytest.mark.parametrize("case", CASES)
def test_phase_found_by_number_as_the_roadmap_writes_it(case: str) -> None:
    exp = expected(case)
    phase = find_phase(PHASES / case, exp["phase"])
    assert phase.folder == (PHASES / case / exp["phase_dir"]).resolve()
    assert phase.name == exp["phase_name"]
    assert [p.name for _, p in phase.summaries] == exp["summaries"]
    assert list(phase.missing_summaries) == exp.get("missing_summaries", [])
    assert phase.roadmap.complete is exp["roadmap_complete"]
    excluded = [n for n in exp["excluded_summaries"] if "/" not in n]
    assert [p.name for p in phase.excluded] == excluded


@pytest.mark.parametrize("case", CASES)
def test_phase_found_by_padded_number_folder_name_and_path(case: str) -> None:
    exp = expected(case)
    folder = (PHASES / case / exp["phase_dir"]).resolve()
    head, _, tail = exp["phase"].partition(".")
    padded = head.zfill(2) + (f".{tail}" if tail else "")
    for spec in (padded, folder.name, str(folder)):
        assert find_phase(PHASES / case, spec).folder == folder, spec


def test_ten_plans_sort_numerically() -> None:
    phase = find_phase(PHASES / "ten-plan-phase", "5")
    assert [pid for pid, _ in phase.summaries][-2:] == ["05-09", "05-10"]


def test_letter_suffixed_plan_sits_between_its_neighbours() -> None:
    phase = find_phase(PHASES / "letter-suffix-plan", "2")
    assert [pid for pid, _ in phase.summaries] == ["02-01", "02-01a", "02-02"]


def test_same_number_folders_resolved_by_the_roadmap_name() -> None:
    root = PHASES / "same-number-milestones"
    assert find_phase(root, "1").folder.name == "01-design-tokens"
    archived = find_phase(root, "01-secure-access-spike")
    assert archived.archived and archived.roadmap.complete
    assert archived.roadmap.evidence == ("archived milestone folder",)
    assert archived.roadmap.requirement_ids == ()  # Design Tokens' ids are not its ids


MILESTONE_ROADMAP = """# Roadmap: v1.1 Mobile

- [x] **Phase 8: Mobile Layout Fixes** - cards and tables on small screens

### Phase 8: Mobile Layout Fixes
**Goal**: every page reads on a phone
**Requirements**: MOB-01, MOB-02
"""
CURRENT_ROADMAP = """# Roadmap: v1.2 Sharing

- [ ] **Phase 9: Share Links** - read-only links

### Phase 9: Share Links
**Requirements**: SHR-01
"""


def test_a_gsd_milestone_archive_is_found_with_its_own_roadmap(tmp_path: Path) -> None:
    """GSD's complete-milestone moves phases to milestones/v1.1-phases/ beside v1.1-ROADMAP.md."""
    planning = tmp_path / ".planning"
    shipped = planning / "milestones" / "v1.1-phases" / "08-mobile-layout-fixes"
    shipped.mkdir(parents=True)
    (planning / "phases").mkdir()
    (planning / "ROADMAP.md").write_text(CURRENT_ROADMAP)
    (planning / "milestones" / "v1.1-ROADMAP.md").write_text(MILESTONE_ROADMAP)
    (shipped / "08-01-SUMMARY.md").write_text(
        "# Plan 08-01 Summary\n\nrequirements-completed: [MOB-01, MOB-02]\n"
        "## Files Modified\n- `src/pages/Dashboard.tsx`\n"
    )
    for spec in ("8", "08-mobile-layout-fixes", str(shipped)):
        phase = find_phase(tmp_path, spec)
        assert phase.folder == shipped.resolve() and phase.archived, spec
        assert phase.roadmap.path == planning / "milestones" / "v1.1-ROADMAP.md"
        assert phase.roadmap.complete and phase.name == "Mobile Layout Fixes"
        assert phase.roadmap.requirement_ids == ("MOB-01", "MOB-02")
        assert [pid for pid, _ in phase.summaries] == ["08-01"]


def test_same_number_without_a_matching_roadmap_name_asks_for_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PHASES / "same-number-milestones", root)
    roadmap = root / ".planning" / "ROADMAP.md"
    roadmap.write_text(roadmap.read_text().replace("Design Tokens", "Colour Palette"))
    with pytest.raises(InputError) as caught:
        find_phase(root, "1")
    message = caught.value.message
    assert "matches 3 folders" in message and "pass the folder name or path" in message
    assert "01-design-tokens" in message and "01-secure-access-spike" in message


def test_planning_below_a_subproject_and_missing_phase(tmp_path: Path) -> None:
    sub = tmp_path / "libs" / "bustand"
    shutil.copytree(PHASES / "decimal-phase" / ".planning", sub / ".planning")
    assert find_phase(sub, "06.1").folder.name == "06.1-cache-eviction-hotfix"
    # a path given from elsewhere finds its own .planning
    found = find_phase(tmp_path, str(sub / ".planning" / "phases" / "06-offline-cache"))
    assert found.planning == (sub / ".planning").resolve() and found.key == "6"
    with pytest.raises(InputError, match="no folder for phase 9"):
        find_phase(sub, "9")
    with pytest.raises(InputError, match="not a number"):
        find_phase(sub, "banana")


def _status(text: str, key: str = "4") -> tuple[bool, tuple[str, ...]]:
    status = roadmap_status(text, key, "04-search")
    return status.complete, status.conflicts


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ("- [x] Phase 4: Search (3 plans)", True),
        ("- [X] **Phase 4: Search** — desc (completed 2026-01-01)", True),
        ("- [ ] Phase 4: Search", False),
        (
            "| Phase | Plans | Completed | Status |\n|---|---|---|---|\n| 4 | 3 | 3 | Complete |",
            True,
        ),
        ("| Phase | Status |\n|---|---|\n| 4 — Search | Complete (reviewed) |", True),
        ("| Phase | Status |\n|---|---|\n| 4 | **Shipped** 2026-09-17 — review passed |", True),
        ("| Phase | Plans Complete | Status |\n|---|---|---|\n| 4. Search | 4/4 | - |", True),
        (
            "| Phase | Plans Complete | Status |\n|---|---|---|\n| 4. Search | 3/4 | In Progress |",
            False,
        ),
        ("| Phase | Status |\n|---|---|\n| 4 | Partial |", False),
        ("| Phase | Status |\n|---|---|\n| 14 | Complete |", False),
        ("", False),
    ],
)
def test_roadmap_completion_variants(text: str, complete: bool) -> None:
    assert _status(text)[0] is complete


def test_roadmap_disagreement_is_reported() -> None:
    text = "- [x] Phase 4: Search\n\n| Phase | Status |\n|---|---|\n| 4 | In Progress |\n"
    complete, conflicts = _status(text)
    assert complete and conflicts == ("ROADMAP Progress table (line 5): not complete",)


def test_roadmap_name_drops_markers_and_reads_requirements() -> None:
    status = roadmap_status(
        "- [x] Phase 6.1: Cache eviction hotfix (INSERTED) (2 plans)\n\n"
        "### Phase 6.1: Cache eviction hotfix (INSERTED)\n**Requirements**: CACHE-04, CACHE-05\n"
        "### Phase 7: Next\n**Requirements**: SYNC-01\n",
        "6.1",
        "06.1-cache-eviction-hotfix",
    )
    assert status.name == "Cache eviction hotfix"
    assert status.requirement_ids == ("CACHE-04", "CACHE-05")


def test_suggest_lists_completed_phases_without_compaction(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PHASES / "legion-spec-billing-exports", root)
    names = [p.folder.name for p in completed_without_compaction(root)]
    assert names == ["02-invoice-lifecycle", "03-billing-exports"]
    (root / ".planning/phases/03-billing-exports/03-COMPACTED.md").write_text("x")
    assert [p.folder.name for p in completed_without_compaction(root)] == ["02-invoice-lifecycle"]
    assert completed_without_compaction(PHASES / "phase-not-complete") == []


def test_phase_context_prefers_the_compacted_summary(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(PHASES / "decimal-phase", root)
    phase = find_phase(root, "6.1")
    context = phase_context(phase)
    assert context.source == "summaries"
    assert [f.name for f in context.files] == ["06.1-01-SUMMARY.md", "06.1-02-SUMMARY.md"]
    assert "<!-- 06.1-02-SUMMARY.md -->" in context.text and "Cache usage panel" in context.text
    phase.compacted_path.write_text("# compacted\n")
    context = phase_context(load_phase(phase.folder, phase.planning))
    assert (context.source, context.text) == ("compacted", "# compacted\n")


def test_a_phase_of_one_plan_without_a_plan_number(tmp_path: Path) -> None:
    from datetime import date

    from legion_llm.llm.engine import Notices, OfflineEngine
    from legion_llm.pipeline.compact.run import check_compacted, compact_phase

    planning = tmp_path / ".planning"
    folder = planning / "phases" / "04-search"
    folder.mkdir(parents=True)
    (planning / "ROADMAP.md").write_text("# Roadmap\n\n- [x] Phase 4: Search\n")
    (folder / "04-PLAN.md").write_text("---\nphase: 04\n---\n# Plan\n")
    (folder / "04-SUMMARY.md").write_text(
        "# Phase 4 Summary: Search\n\n**Status:** Complete\n\n## What Was Done\n"
        "- Added the ranked search endpoint in src/search/rank.py\n"
        + "- Tuned the ranking weights against the saved query log and documented each one\n"
        * 6
        + "\n## Decisions\n- Rank by BM25 first, then by recency, because users search for new "
        "tickets far more often than old ones\n"
    )
    (folder / "TEST_SUMMARY.md").write_text("# Tests\n\nall green\n")
    phase = find_phase(tmp_path, "4")
    assert [(pid, p.name) for pid, p in phase.summaries] == [("04", "04-SUMMARY.md")]
    assert phase.missing_summaries == () and [p.name for p in phase.excluded] == ["TEST_SUMMARY.md"]
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)),
                           today=date(2026, 12, 3))  # fmt: skip
    assert [d.plan_id for d in result.settled.digest.deliverables] == ["04"]
    assert "Added the ranked search endpoint" in result.text
    _, report = check_compacted(phase)
    assert report.ok and report.grounding == [] and report.plans_missing == []


def test_numbered_plans_win_over_a_stray_phase_summary(tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    folder = planning / "phases" / "04-search"
    folder.mkdir(parents=True)
    (planning / "ROADMAP.md").write_text("# Roadmap\n\n- [x] Phase 4: Search\n")
    (folder / "04-01-SUMMARY.md").write_text("# Plan 04-01 Summary: Rank\n")
    (folder / "04-SUMMARY.md").write_text("# Phase 4 roll-up\n")
    phase = find_phase(tmp_path, "4")
    assert [pid for pid, _ in phase.summaries] == ["04-01"]
    assert [p.name for p in phase.excluded] == ["04-SUMMARY.md"]
