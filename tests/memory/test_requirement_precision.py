"""Requirement ids: precision as well as recall (requirements.py, declared.py).

An id is a requirement of a phase exactly when something declares it for the phase (a summary's
frontmatter list, requirements section or line; the ROADMAP's phase entry; a PLAN's list; a
REQUIREMENTS.md traceability row naming the phase), whatever its shape. A status sentence gives
a declared id its verdict but declares nothing: an id-shaped token in prose (a form's name, a
ticket, a standard, a screen code, another phase's decision) stays text.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.llm.engine import Notices, OfflineEngine
from legion_llm.memory.phases.declared import declared_ids
from legion_llm.memory.phases.extract import phase_facts, plan_facts
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.run import compact_phase


def summary(body: str, frontmatter: str = "") -> str:
    front = f"---\n{frontmatter}\n---\n\n" if frontmatter else ""
    return f"{front}# Plan 02-01 Summary: Intake\n\n**Status:** Complete\n\n{body}\n"


@pytest.mark.parametrize(
    "line",
    [
        "Implemented the RCF-1 form and its validation; all tasks complete.",
        "ISO-8601 timestamps everywhere; UTF-8 output verified.",
        "Responses follow RFC-7231 semantics (done).",
        "Fixed the crash in TICKET-12 handling; tests pass.",
        "Updated 2 CMD-03 assertions to the new error text, all passing.",
    ],
)
def test_a_name_in_ordinary_prose_is_no_requirement(line: str) -> None:
    assert plan_facts("02-01", "x", summary(line)).requirement_ids == ()


@pytest.mark.parametrize(
    ("line", "ids"),
    [
        ("This plan satisfies INTAKE-03.", ("INTAKE-03",)),
        ("INTAKE-01 and INTAKE-02 are now covered.", ("INTAKE-01", "INTAKE-02")),
        ("Closes requirement R4.", ("R4",)),
        ("Together these satisfy spec R1.1–R1.3.", ("R1.1", "R1.2", "R1.3")),
        ("It also closes the carried-over fixes FX-01..03 carried from phase 1.",
         ("FX-01", "FX-02", "FX-03")),
        ("Implements MATRIX-01 through MATRIX-03.", ("MATRIX-01", "MATRIX-02", "MATRIX-03")),
        ("Dashboard (S-06) is complete.", ("S-06",)),
        ("Follows the pattern of DEC-041 and is done.", ("DEC-041",)),
    ],
)  # fmt: skip
def test_a_status_sentence_declares_nothing_but_reports_a_declared_id(
    line: str, ids: tuple[str, ...]
) -> None:
    assert plan_facts("02-01", "x", summary(line)).requirement_ids == ()
    declared = plan_facts("02-01", "x", summary(line), set(ids))
    assert set(declared.requirement_ids) == set(ids)
    assert all(declared.verdict(rid) == "pass" for rid in ids)


@pytest.mark.parametrize(
    "rid", ["UX-STATES", "D-04", "REQ-sizes-five", "V16-AI-01", "PHASE-34-D-A1", "SYNC_05",
            "04.2-K1", "MED-EVENT", "LOG-01-phase-local", "FR1.1", "NFR1"],
)  # fmt: skip
def test_a_declared_id_of_any_shape_is_a_requirement(rid: str) -> None:
    for text in (summary("Done.", f"requirements-completed: [{rid}]"),
                 summary("Done.", f"requirements_completed:\n  - \"{rid}\"  # the one"),
                 summary(f"**Requirements:** {rid}\n\nDone."),
                 summary(f"## Requirements Covered\n\n- {rid}: the screen works\n")):  # fmt: skip
        facts = plan_facts("02-01", "x", text)
        assert facts.requirement_ids == (rid,), text
        assert facts.verdict(rid) == "pass"


def test_a_declared_id_counts_in_a_looser_sentence() -> None:
    text = summary("The RCF-1 form ships with validation and is done.")
    assert plan_facts("02-01", "x", text).requirement_ids == ()
    assert plan_facts("02-01", "x", text, {"RCF-1"}).requirement_ids == ("RCF-1",)
    # declared by another summary of the same phase (its frontmatter list)
    other = summary("Done.", "requirements-completed: [RCF-1]")
    facts = phase_facts([("02-01", "a", text), ("02-02", "b", other)])
    assert facts.plans[0].requirement_ids == ("RCF-1",)


def test_a_verification_item_reports_a_declared_id_only() -> None:
    body = ("## Verification\n\n- SETUP-01: install steps documented\n"
            "- Built with ES2022 target: ok\n| P0 | 3 | ok |")  # fmt: skip
    assert plan_facts("02-01", "x", summary(body)).requirement_ids == ()
    facts = plan_facts("02-01", "x", summary(body), {"SETUP-01"})
    assert facts.requirement_ids == ("SETUP-01",) and facts.verdict("SETUP-01") == "pass"


def project(tmp_path: Path, body: str, requirements: str, plan: str = "") -> Path:
    root = tmp_path / "p"
    folder = root / ".planning" / "phases" / "02-intake"
    folder.mkdir(parents=True)
    (root / ".planning" / "ROADMAP.md").write_text(
        "# Roadmap\n\n- [x] Phase 2: Intake\n\n### Phase 2: Intake\n**Goal**: forms\n"
    )
    (root / ".planning" / "REQUIREMENTS.md").write_text(requirements)
    (folder / "02-01-SUMMARY.md").write_text(summary(body))
    if plan:
        (folder / "02-01-PLAN.md").write_text(plan)
    return root


def test_a_traceability_row_and_a_plan_list_declare_ids(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        "The RCF-1 form and the RCF-2 export are done.",
        "# Requirements\n\n- [x] **RCF-1**: intake form\n- [ ] **RCF-7**: later\n\n"
        "## Traceability\n\n| Requirement | Phase | Status |\n|---|---|---|\n"
        "| RCF-1 | Phase 2 | Complete |\n| UX-STATES | 2 — Intake | Pending |\n"
        "| RCF-7 | Phase 3 | Pending |\n",
        "---\nphase: 02\nrequirements: [RCF-2]\n---\n# Plan\n",
    )
    phase = find_phase(root, "2")
    assert declared_ids(phase) == {"RCF-1", "UX-STATES", "RCF-2"}
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)),
                           today=date(2026, 12, 3), write=False)  # fmt: skip
    assert result.facts.requirement_ids == ("RCF-1", "RCF-2", "UX-STATES")
    # reported by the summary's status sentence: PASS; declared but never reported: NOT VERIFIED
    assert "- RCF-1: PASS" in result.text and "- UX-STATES: NOT VERIFIED" in result.text
    assert "RCF-7:" not in result.text  # defined for another phase, and not reported


def test_an_undeclared_name_never_becomes_a_verdict(tmp_path: Path) -> None:
    done = (
        "## What Was Done\n\n- Built the RCF-1 form; all tasks complete.\n"
        + "- Validated every intake field against the office's printed form and noted it\n" * 5
    )
    root = project(tmp_path, done, "# Requirements\n\n- [x] **INTAKE-01**: forms\n")
    phase = find_phase(root, "2")
    result = compact_phase(phase, OfflineEngine(notices=Notices(sink=None)),
                           today=date(2026, 12, 3))  # fmt: skip
    text = phase.compacted_path.read_text()
    assert "requirements_satisfied: []" in text and "- RCF-1:" not in text
    assert "RCF-1 form" in text  # kept as text
    assert result.facts.requirement_ids == ()
