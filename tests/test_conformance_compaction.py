"""Compaction conformance on the real summaries and ROADMAPs of every corpus under
../shared/realworld* (tests/conftest.py: CORPORA).

The real files are read in place (and copied to a temporary folder before anything is
written); skipped when no corpus is there.
"""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.engine import Notices, OfflineEngine
from legion_llm.memory.phases.declared import declared_ids
from legion_llm.memory.phases.extract import (
    DECLARING,
    plan_facts,
    range_members,
    requirement_reports,
)
from legion_llm.memory.phases.find import (
    Phase,
    find_phase,
    load_phase,
    phase_context,
    phase_folders,
)
from legion_llm.pipeline.compact.run import CompactResult, check_compacted, compact_phase
from tests.conftest import (
    CORPORA,
    NO_CORPUS,
    REALWORLD,
    copy_corpus,
    corpus_name,
    corpus_projects,
)
from tests.pipeline.compaction_cases import TODAY, fingerprint

pytestmark = [pytest.mark.skipif(not CORPORA, reason=NO_CORPUS), pytest.mark.corpus]

PROJECTS = [corpus_name(p) for p in corpus_projects()]
IN_REALWORLD = REALWORLD.name + "/"  # the tests below that name one project of the first corpus


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("realworld")
    before = [fingerprint(corpus) for corpus in CORPORA]
    copy_corpus(target)
    assert [fingerprint(corpus) for corpus in CORPORA] == before
    return target


def plan_phases(root: Path) -> list[Path]:
    planning = root / ".planning"
    return [f for f in phase_folders(planning) if load_phase(f, planning).summaries]


@pytest.fixture(scope="module")
def compacted(copied: Path) -> dict[str, list[tuple[Path, CompactResult]]]:
    """Every phase the parser accepts, compacted once by the offline engine with --force."""
    done: dict[str, list[tuple[Path, CompactResult]]] = {}
    for project in PROJECTS:
        root = copied / project
        for folder in plan_phases(root):
            phase = find_phase(root, str(folder))
            engine = OfflineEngine(notices=Notices(sink=None))
            done.setdefault(project, []).append(
                (folder, compact_phase(phase, engine, today=TODAY, force=True))
            )
    return done


@pytest.mark.parametrize("project", PROJECTS)
def test_every_real_phase_compacts_and_verifies(
    compacted: dict[str, list[tuple[Path, CompactResult]]], project: str
) -> None:
    results = compacted.get(project, [])
    for folder, result in results:
        assert result.written and result.report.ok and result.repaired == [], folder
        # the offline engine's own text passes its own review as written: nothing to repair,
        # degrade or refuse (the length is reported, never refused)
        first = result.settled.reviews[0]
        assert [p for p in first.problems if p.kind != "too-long"] == [], folder
        assert result.engine == "offline" and not result.fell_back
        assert result.report.ratio <= 1.0, folder  # never longer than its originals
        phase = result.settled.prepared.phase
        _, report = check_compacted(phase)
        assert report.ok and report.sections_missing == [] and report.plans_missing == []
        assert report.grounding == [], folder
        assert phase_context(load_phase(phase.folder, phase.planning)).source == "compacted"
        assert _every_id_is_a_requirement(phase, result), folder
    assert results  # every project has at least one phase the parser accepts


def _every_id_is_a_requirement(phase: Phase, result: CompactResult) -> bool:
    """Each verdict is for an id something declares for the phase (the ROADMAP entry, a PLAN or
    the REQUIREMENTS.md traceability, a summary's list, line or section), recomputed from the
    raw reports rather than read back from the facts."""
    declared = set(phase.roadmap.requirement_ids) | declared_ids(phase)
    reports = [r for _, path in phase.summaries
               for r in requirement_reports(path.read_text(encoding="utf-8"))]  # fmt: skip
    declared |= {r.id for r in reports if r.source in DECLARING}
    members = {m for rid in declared for m in range_members(rid)}
    verdicts = {r.requirement_id for r in result.settled.digest.verification}
    return verdicts <= declared | members


def test_the_median_real_phase_is_in_the_target_band(
    compacted: dict[str, list[tuple[Path, CompactResult]]],
) -> None:
    ratios = [r.report.ratio for results in compacted.values() for _, r in results]
    assert len(ratios) >= 60 and max(ratios) <= 1.0
    assert 0.30 <= statistics.median(ratios) <= 0.50


def test_compact_and_verify_through_the_cli_on_every_real_phase(cli: Any, tmp_path: Path) -> None:
    """As a user runs it: `compact PHASE --engine offline --force`, then `verify-compaction`."""
    copy_corpus(tmp_path)
    for project in PROJECTS:
        root = tmp_path / project
        for folder in plan_phases(root):
            spec = str(folder.relative_to(root))
            made = cli("compact", spec, "--engine", "offline", "--force", "--root", root)
            assert made.exit_code == 0, (project, folder.name, made.stderr)
            checked = cli("verify-compaction", spec, "--root", root)
            assert checked.exit_code == 0, (project, folder.name, checked.stdout)


def test_real_layouts(copied: Path) -> None:
    found = {f"{p.parent.name}/{p.name}" for name in PROJECTS for p in plan_phases(copied / name)}
    assert "phases/06.1-catppuccin-mocha-file-icons" in found  # decimal phase
    assert "archive/01-plugin-foundation" in found  # Legion's own archive layout
    assert "phases/08-agent-registration-websocket-protocol" not in found  # a closeout only
    loci_root = copied / IN_REALWORLD / "C1p86__loci/.planning"
    loci = load_phase(loci_root / "phases/08-agent-registration-websocket-protocol", loci_root)
    assert [p.name for p in loci.excluded] == ["08-CLOSEOUT-SUMMARY.md"] and loci.summaries == ()


def test_real_roadmaps(copied: Path) -> None:
    loci = find_phase(copied / IN_REALWORLD / "C1p86__loci", "1").roadmap
    assert loci.complete and loci.name == "Foundation" and len(loci.evidence) == 2
    legion = find_phase(copied / IN_REALWORLD / "9thLevelSoftware__legion", "6").roadmap
    assert legion.complete and legion.name == "Recommendation Engine v2"
    assert legion.requirement_ids == ("AGT-02", "AGT-03", "AGT-04")
    psa = find_phase(copied / IN_REALWORLD / "ace027__custom-psa-nolegion", "1").roadmap
    assert psa.complete and psa.requirement_ids == ("REQ-01",)
    # an archived folder whose number the current ROADMAP reuses for another phase
    archived = find_phase(
        copied / IN_REALWORLD / "9thLevelSoftware__legion", "01-plugin-foundation"
    )
    assert archived.archived and archived.roadmap.requirement_ids == ()


@pytest.mark.parametrize(
    ("path", "ids", "some_paths", "not_paths"),
    [
        ("9thLevelSoftware__legion/.planning/archive/01-plugin-foundation/01-01-SUMMARY.md",
         ("INFRA-01", "INFRA-02"), [".claude/commands/agency/start.md", "CLAUDE.md"], []),
        ("9thLevelSoftware__legion/.planning/phases/33-knowledge-memory/33-02-SUMMARY.md",
         ("KNW-02", "KNW-03"), ["skills/memory-manager/SKILL.md"], []),
        ("Atypical-Consulting__FlowForge/.planning/phases/06.1-catppuccin-mocha-file-icons/06.1-01-SUMMARY.md",
         (), ["src/lib/file-icons.ts", "Dockerfile"], ["Node.js"]),
        ("ace027__custom-psa-nolegion/.planning/phases/01-block-hour-retainer-agreements/01-01-SUMMARY.md",
         ("REQ-01",), ["backend/app/billing.py"], []),
    ],
)  # fmt: skip
def test_real_summary_extraction(path: str, ids: tuple[str, ...], some_paths: list[str],
                                 not_paths: list[str]) -> None:  # fmt: skip
    facts = plan_facts("x", Path(path).name, (REALWORLD / path).read_text(encoding="utf-8"))
    assert facts.requirement_ids == ids
    assert all(p in facts.paths for p in some_paths)
    assert not any(p in facts.paths for p in not_paths)
    assert facts.name and facts.outcome == "success"


def test_a_real_prose_status_line_reports_only_what_is_declared() -> None:
    # 33-02 lists KNW-02 and KNW-03; KNW-01 is named only in a closing status sentence, and
    # nothing (no list, the ROADMAP, a PLAN) declares it for the phase: a report, no requirement
    path = "9thLevelSoftware__legion/.planning/phases/33-knowledge-memory/33-02-SUMMARY.md"
    text = (REALWORLD / path).read_text(encoding="utf-8")
    facts = plan_facts("33-02", "33-02-SUMMARY.md", text)
    assert facts.requirement_ids == ("KNW-02", "KNW-03")
    assert facts.verdict("KNW-01") is None
    declared = plan_facts("33-02", "33-02-SUMMARY.md", text, {"KNW-01"})
    prose = [r for r in declared.reports if r.source == "prose"]
    assert {r.id for r in prose} == {"KNW-01", "KNW-02", "KNW-03"}
    assert all(r.stated == "pass" for r in prose) and declared.verdict("KNW-01") == "pass"


def test_the_commands_on_a_real_project(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "psa"
    shutil.copytree(REALWORLD / "ace027__custom-psa-nolegion" / ".planning", root / ".planning")
    suggested = cli("compact", "--suggest", "--root", root, "--json").json["data"]["phases"]
    assert [p["phase"] for p in suggested] == ["1"]
    result = cli("compact", "1", "--root", root, "--dry-run", "--json")
    assert result.exit_code == 0 and result.json["data"]["requirement_ids"] == ["REQ-01"]
    assert result.json["data"]["written"] is False
    context = cli("phase-context", "01-block-hour-retainer-agreements", "--root", root, "--json")
    assert context.json["data"]["source"] == "summaries"
