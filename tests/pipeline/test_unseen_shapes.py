"""One test per class of failure seen on real phases nobody had tuned on, each on a hand-written
phase (invented text; none of it copied from a real file), each stating the general rule.

1. The writer and the checker agree: whatever `compact` writes, `verify-compaction` reads back
   as written (an id of any shape, a plan name with a colon) and finds OK; a FAILED says why.
2. A declared file list is taken whole: each entry is its own Files row, whatever its shape.
3. Declaration, not shape, makes a requirement: a declared decision-shaped id gets its verdict,
   an id-shaped token in prose (a screen code, another phase's decision) never does.
4. Layouts: a prefixed folder, plans numbered without their phase, a PLANNING-SUMMARY.md that
   is no plan's, a phase the ROADMAP does not list, a shipped folder beside a current twin.
5. The last rung never fails: a plan whose summary is only a file name still gets a file.
6. No noise rows: no row for the tail of a path named in full, nor for a bare name in prose.
7. Never longer than the originals: summaries shorter than any compacted summary are left as
   they are, and `compact` says so.
8. Nothing new in a model's sentence: a clause that brings a name or a number the originals do
   not state is cut, and the report says so; a hand-made file that says one fails its verify.
9. Form is repaired, not a reason to fall back: a placeholder change text takes the summaries'
   own, an over-long item is cut at a sentence, a NOT VERIFIED for a reported id takes the
   reported verdict.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.errors import InputError
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.prepare import header_for, offline_proposal, prepare
from legion_llm.pipeline.compact.render import FileItem, RequirementItem
from legion_llm.pipeline.compact.settle import Proposal, settle

TODAY = date(2026, 12, 7)
BODY = (
    "## What Was Done\n"
    + "".join(
        f"- Reworked step {n} of the import so a bad row is reported, not dropped\n"
        for n in range(1, 7)
    )
    + "\n## Decisions\n- Keep the importer synchronous, because the files stay under a megabyte\n"
)


def project(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def roadmap(number: str, name: str, ids: str = "") -> str:
    line = f"**Requirements**: {ids}\n" if ids else ""
    return f"# Roadmap\n\n- [x] **Phase {number}: {name}**\n\n### Phase {number}: {name}\n{line}"


def compacted(cli: Any, root: Path, spec: str) -> str:
    made = cli("compact", spec, "--engine", "offline", "--force", "--root", root)
    assert made.exit_code == 0, made.stderr
    checked = cli("verify-compaction", spec, "--root", root)
    assert checked.exit_code == 0, checked.stdout
    [path] = (root / spec).glob("*-COMPACTED.md") if "/" in spec else root.rglob("*-COMPACTED.md")
    return path.read_text(encoding="utf-8")


def test_1_what_compact_writes_verify_reads_as_written(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("3", "Calendar"),
        ".planning/phases/03-calendar/03-01-SUMMARY.md":
            "---\nrequirements-completed: [MED-EVENT, REQ-sizes-five]\n---\n"
            "# Phase 3 Plan 1: Wave 2: the calendar schema Summary\n\n" + BODY,
    })  # fmt: skip
    text = compacted(cli, root, "3")
    assert "- MED-EVENT: PASS" in text and "- REQ-sizes-five: PASS" in text
    # a hand edit that drops a verdict: FAILED, and the reason is named in human output
    path = root / ".planning/phases/03-calendar/03-COMPACTED.md"
    path.write_text(text.replace("- MED-EVENT: PASS", "- Plan note: PASS"), encoding="utf-8")
    checked = cli("verify-compaction", "3", "--root", root)
    assert checked.exit_code == 1 and "FAILED" in checked.stdout
    assert "missing requirement ids: MED-EVENT" in checked.stdout


def test_2_every_entry_of_a_declared_file_list_is_its_own_row(cli: Any, tmp_path: Path) -> None:
    entries = ["config.yml.example", ".env.example", "go.sum", "App.xcodeproj/project.pbxproj",
               "data/pdfs/{poliza_id}.pdf", "tests/fixtures/*.json", "docs/User Guide.md",
               "src/app/(auth)/[slug]/page.tsx"]  # fmt: skip
    listed = "".join(f"    - {e}\n" for e in entries)
    # in the body: a bold head and a path column's cell may hold spaces; a scoped folder with
    # a file at its end is a path (`@scope/ui` alone is a package)
    body = ("## Files Created\n\n- **notes/release notes.txt**: draft\n\n| File | Change |\n"
            "|---|---|\n| assets/Brand Kit/logo mark.svg | new |\n\n"
            "**Modified:** `@scope/ui/index.ts`, `src/@types/env.d.ts`\n\n")  # fmt: skip
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("4", "Export"),
        ".planning/phases/04-export/04-01-SUMMARY.md":
            f"---\nkey-files:\n  created:\n{listed}---\n# Plan 04-01 Summary: Export\n\n"
            + body + BODY,
    })  # fmt: skip
    text = compacted(cli, root, "4")
    rows = [
        line.split(" | ")[0].strip("| `") for line in text.splitlines() if line.startswith("| ")
    ]
    body_entries = ["notes/release notes.txt", "assets/Brand Kit/logo mark.svg",
                    "@scope/ui/index.ts", "src/@types/env.d.ts"]  # fmt: skip
    assert all(rows.count(entry) == 1 for entry in entries + body_entries), rows
    assert not any(row in ("notes.txt", "logo mark.svg", "index.ts") for row in rows), rows


def test_3_declaration_not_shape_makes_a_requirement(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap(
            "5", "Attachments", "D-18, Qz_4.m, Self-sovereign recovery infrastructure"),
        ".planning/REQUIREMENTS.md": "# Requirements\n\n## Traceability\n\n| Requirement | Phase |"
            " Status |\n|---|---|---|\n| Kb7.retry | Phase 5 | Pending |\n",
        ".planning/phases/05-attachments/05-01-SUMMARY.md":
            "# Plan 05-01 Summary: Attachments\n\nThe Dashboard (S-06) is complete and follows "
            "the pattern of DEC-041, which is done. D-18 is satisfied.\n\n" + BODY,
    })  # fmt: skip
    text = compacted(cli, root, "5")
    assert "- D-18: PASS" in text
    assert "- Kb7.retry: NOT VERIFIED" in text  # a traceability row's id cell: taken whole
    assert "- Qz_4.m: NOT VERIFIED" in text  # a one-word item of a requirements line: whole
    assert "Self-sovereign:" not in text  # an item of several words is prose
    assert "- S-06:" not in text and "- DEC-041:" not in text


def test_4_layouts(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("23", "Packaging"),
        ".planning/phases/CTRX-23-packaging/23-01-SUMMARY.md":
            "# Plan 23-01 Summary: Packaging\n\n" + BODY,
        ".planning/phases/CTRX-23-packaging/PLANNING-SUMMARY.md": "# Planning\n\nnotes\n",
        ".planning/phases/02-unlisted/01-SUMMARY.md": "# Plan 01 Summary: Import\n\n" + BODY,
        ".planning/phases/02-unlisted/01-PLAN.md": "---\nrequirements: [IMP-01]\n---\n# Plan\n",
    })  # fmt: skip
    phase = find_phase(root, "23")
    assert [p.name for _, p in phase.summaries] == ["23-01-SUMMARY.md"]
    assert [p.name for p in phase.excluded] == ["PLANNING-SUMMARY.md"]
    unlisted = find_phase(root, ".planning/phases/02-unlisted")
    assert [pid for pid, _ in unlisted.summaries] == ["01"]
    suggested = cli("compact", "--suggest", "--root", root, "--json").json["data"]["phases"]
    assert {row["phase"] for row in suggested} == {"23", "2"}  # not listed, every plan summarised
    assert "- IMP-01: NOT VERIFIED" in compacted(cli, root, ".planning/phases/02-unlisted")


def test_4b_a_roadmap_entry_goes_to_the_folder_whose_name_it_fits_best(
    tmp_path: Path,
) -> None:
    """Twins, and a shipped folder beside a current one of its number (the current ROADMAP
    describes the current phases): each takes only the entries whose names fit it better."""
    two = "# Roadmap\n\n### Phase 7: Settings\n**Requirements**: SET-01\n\n" \
          "### Phase 7: Sync Onboarding\n**Requirements**: SYNC-01\n"  # fmt: skip
    one = "# Roadmap\n\n### Phase 7: Settings\n**Requirements**: SET-01\n"
    for text, archived, current in ((two, ("SET-01",), ("SYNC-01",)), (one, (), ("SET-01",))):
        root = project(tmp_path / str(len(text)), {
            ".planning/ROADMAP.md": text,
            ".planning/archive/v1/07-settings/07-01-SUMMARY.md": "# Plan 07-01\n\n" + BODY,
            ".planning/phases/07-" + ("sync-onboarding" if text == two else "settings")
            + "/07-01-SUMMARY.md": "# Plan 07-01\n\n" + BODY,
        })  # fmt: skip
        [folder] = (root / ".planning/phases").iterdir()
        old = find_phase(root, ".planning/archive/v1/07-settings")
        new = find_phase(root, str(folder.relative_to(root)))
        assert (old.roadmap.requirement_ids, new.roadmap.requirement_ids) == (archived, current)
    with pytest.raises(InputError, match="matches 2 folders"):  # two names for 7: no guess
        find_phase(tmp_path / str(len(two)), "7")
    # twins beside each other: the one entry is the twin's whose name it fits better
    root = project(tmp_path / "twins", {
        ".planning/ROADMAP.md": "# Roadmap\n\n### Phase 9: Reports 2\n**Requirements**: REP-02\n",
        ".planning/phases/09-reports/09-01-SUMMARY.md": "# Plan 09-01\n\n" + BODY,
        ".planning/phases/09-reports-2/09-01-SUMMARY.md": "# Plan 09-01\n\n" + BODY,
    })  # fmt: skip
    ids = {name: find_phase(root, name).roadmap.requirement_ids
           for name in ("09-reports", "09-reports-2")}  # fmt: skip
    assert ids == {"09-reports": (), "09-reports-2": ("REP-02",)}


def test_5_a_summary_of_only_a_file_name_still_gets_a_file(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("6", "Tooling"),
        ".planning/phases/06-tooling/06-01-SUMMARY.md": "# Plan 06-01 Summary\n\n`scripts/x.py`\n",
        ".planning/phases/06-tooling/06-02-SUMMARY.md": "# Plan 06-02 Summary: Lint\n\n" + BODY,
    })  # fmt: skip
    text = compacted(cli, root, "6")
    assert "06-01" in text and "scripts/x.py" in text


def test_6_no_row_for_a_tail_or_a_bare_name_met_in_prose(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("7", "Backend"),
        ".planning/phases/07-backend/07-01-SUMMARY.md":
            "---\nkey-files:\n  created: [backend/tests/test_x.py]\n---\n# Plan 07-01 Summary\n\n"
            "Ran tests/test_x.py after reading CLAUDE.md and SUMMARY.md.\n\n" + BODY,
    })  # fmt: skip
    text = compacted(cli, root, "7")
    rows = [
        line.split(" | ")[0].strip("| `") for line in text.splitlines() if line.startswith("| ")
    ]
    assert rows[1:] == ["backend/tests/test_x.py"]


def test_7_summaries_shorter_than_a_compaction_stay_as_they_are(cli: Any, tmp_path: Path) -> None:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("8", "Tiny"),
        ".planning/phases/08-tiny/08-01-SUMMARY.md": "# Plan 08-01 Summary\n\nDone.\n",
    })  # fmt: skip
    made = cli("compact", "8", "--engine", "offline", "--root", root)
    assert made.exit_code == 0 and made.stdout.startswith("Nothing to compact")
    assert not list(root.rglob("*-COMPACTED.md"))


def _prepared(tmp_path: Path, front: str = "") -> Any:
    root = project(tmp_path, {
        ".planning/ROADMAP.md": roadmap("9", "Rates"),
        ".planning/phases/09-rates/09-01-SUMMARY.md":
            f"---\n{front}key-files:\n  created:\n    - src/rates.py — the exchange-rate endpoint\n"
            "    - src/feeds/ecb.py — the ECB feed reader\n---\n"
            "# Plan 09-01 Summary: Rates\n\n## What Was Done\n- Added the exchange-rate endpoint "
            "in `src/rates.py`; it reads the ECB feed and stores the rates in Postgres\n" + BODY,
    })  # fmt: skip
    prep = prepare(find_phase(root, "9"))
    return root, prep, header_for(prep, TODAY, "test")


def test_8_a_clause_that_brings_a_new_name_or_number_is_cut(cli: Any, tmp_path: Path) -> None:
    root, prep, header = _prepared(tmp_path)
    good = offline_proposal(prep, header)
    first = good.deliverables[0]  # the host's own words, then a clause of its own
    said = (
        "The exchange-rate endpoint in `src/rates.py` reads the ECB feed and stores the "
        "rates in Postgres; rates are now cached in Redis for 24 hours"
    )
    proposal = good.model_copy(
        update={"deliverables": [first.model_copy(update={"summary": said})]}
    )
    settled = settle(prep, header, [Proposal(proposal, "host")])
    assert "Redis" not in settled.text and "24 hours" not in settled.text
    assert any("Redis, 24" in note for note in settled.repaired)
    assert settled.sections["deliverables"]["source"] == "host"
    # a hand-made file that says it: a false fact, verify fails and says which
    path = root / ".planning/phases/09-rates/09-COMPACTED.md"
    path.write_text(settled.text.replace("stores the rates in Postgres",
                                         "stores the rates in Postgres on Kubernetes"))  # fmt: skip
    checked = cli("verify-compaction", "9", "--root", root)
    assert checked.exit_code == 1 and "Kubernetes" in checked.stdout


def test_9_form_is_repaired_never_a_fallback(tmp_path: Path) -> None:
    _, prep, header = _prepared(tmp_path)
    good = offline_proposal(prep, header)
    files = [FileItem(path=f.path, change="n/a") if f.path == "src/rates.py"
             else f.model_copy(update={"change": "reads the ECB feed"}) for f in good.files]  # fmt: skip
    first = good.deliverables[0]
    long = " ".join([first.summary.rstrip(".") + "."] * 12)
    proposal = good.model_copy(update={
        "files": files, "deliverables": [first.model_copy(update={"summary": long})]})  # fmt: skip
    settled = settle(prep, header, [Proposal(proposal, "host")])
    assert not settled.fell_back and settled.review.ok
    assert "| src/rates.py | the exchange-rate endpoint |" in settled.text
    assert all(len(d.summary) <= 600 for d in settled.digest.deliverables)


def test_9b_a_verdict_is_the_summaries_whoever_proposes_it(tmp_path: Path) -> None:
    """A NOT VERIFIED for an id a summary reports claims less than the summaries: repaired to
    the reported verdict, and the section is then the offline engine's line, said so."""
    _, prep, header = _prepared(tmp_path, "requirements-completed: [RATE-01]\n")
    good = offline_proposal(prep, header)
    unclaimed = RequirementItem(requirement_id="RATE-01", verdict="not verified", evidence="")
    settled = settle(prep, header, [Proposal(good.model_copy(update={
        "verification": [unclaimed]}), "host")])  # fmt: skip
    assert "- RATE-01: PASS" in settled.text and settled.review.ok
    assert [name for name, s in settled.sections.items() if s["fallback"]] == ["verification"]
    assert settled.sections["verification"]["because"] == ["unclaimed-verdict"]
