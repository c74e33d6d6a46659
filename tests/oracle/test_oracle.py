"""Tests of the independent compaction oracle (tests/oracle/compaction.py) itself.

Every fixture is invented here, per rule: a small phase, a good compacted output that passes and
broken outputs that must produce exactly the expected violation. The last test runs the oracle
over every real phase under ../shared/realworld* (skipped when absent) and only prints counts.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tests.oracle.compaction import (
    check,
    declared_ids,
    listed_paths,
    plan_summaries,
    read_text,
)

PADDING = (
    "## Performance\n\n"
    + "The work went in small steps with a test before each change and a review after it. " * 12
    + "\n"
)

ROADMAP = """# Kalender — Roadmap

## Phases
- [x] Phase 3: Kalender (2 plans)

## Phase Details

### Phase 3: Kalender
**Goal**: a calendar with recurring events
**Requirements**: CAL-01, CAL-02, MED-EVENT, CAL-07
**Plans**: 2

### Phase 13: Sync
**Requirements**: CAL-99
"""

REQUIREMENTS = """# Requirements

- [x] **CAL-01**: recurring events
- [x] **CAL-02**: month view
- [ ] **CAL-09**: year view
- [x] **MED-EVENT**: meeting events
- **UI**: kept simple
"""

SUMMARY_01 = (
    """---
phase: 03-kalender
plan: 01
requirements-completed: [CAL-01]
key-files:
  created:
    - src/lib/rrule.ts — recurrence parser
  modified: []
---

# Phase 3 Plan 01: Recurrence Summary

Recurrence rules parse and expand into single events.

## Files Created/Modified
- `src/lib/rrule.ts` - the parser
- `tests/rrule.test.ts` - unit tests

## Decisions Made
- A small RRULE subset: daily, weekly, monthly.

"""
    + PADDING
)

SUMMARY_02 = (
    """---
phase: 03-kalender
plan: 02
requirements_completed:
  - CAL-02
key_files:
  modified: ["src/app/page.tsx"]
---

# Phase 3 Plan 02: Month View Summary

Meeting events (MED-EVENT) now render in the month view.

"""
    + PADDING
)

PLAN_01 = """---
phase: 03-kalender
plan: 01
requirements: [CAL-01, CAL-08]
---

# Plan 03-01
"""

GOOD = """---
phase: 03-kalender
compacted: 2026-12-07
original_summaries: [03-01-SUMMARY.md, 03-02-SUMMARY.md]
requirements_satisfied: [CAL-01, CAL-02, MED-EVENT]
---

# Phase 3: Kalender — Compacted Summary

## Deliverables
- **03-01 Recurrence** (success): a parser for recurrence rules.
- **03-02 Month View** (success): the month view with meeting events.

## Decisions
- (03-01) A small RRULE subset. Why: enough for the first release.

## Files Modified
| File | Change |
|------|--------|
| `src/lib/rrule.ts` | created in 03-01 |
| tests/rrule.test.ts | created in 03-01 (`grep a \\| wc -l`) |
| src/app/page.tsx | modified in 03-02 |

## Verification
- CAL-01: PASS — reported by 03-01
- CAL-02: PASS — reported by 03-02
- MED-EVENT: PASS — reported by 03-02
- CAL-07: NOT VERIFIED
- CAL-08: NOT VERIFIED
- Plan 03-01: 6/6 checks passed

## Agents
- (no agent recorded): 03-01, 03-02
"""


def write(path: Path, text: str, newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def kalender(root: Path, newline: str = "\n") -> tuple[Path, Path]:
    """The invented phase 3 of a calendar project: (phase folder, planning folder)."""
    planning = root / ".planning"
    phase = planning / "phases" / "03-kalender"
    write(planning / "ROADMAP.md", ROADMAP, newline)
    write(planning / "REQUIREMENTS.md", REQUIREMENTS, newline)
    write(phase / "03-01-SUMMARY.md", SUMMARY_01, newline)
    write(phase / "03-02-SUMMARY.md", SUMMARY_02, newline)
    write(phase / "03-01-PLAN.md", PLAN_01, newline)
    write(phase / "03-CONTEXT.md", "# Context\n\nCAL-09 is for later.\n", newline)
    return phase, planning


def edited(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.fixture
def phase(tmp_path: Path) -> tuple[Path, Path]:
    return kalender(tmp_path)


# --- the good output -------------------------------------------------------------------------


def test_good_output_satisfies_every_rule(phase: tuple[Path, Path]) -> None:
    assert check(*phase, "3", GOOD) == []
    assert check(*phase, 3, GOOD) == []
    assert check(*phase, "03", GOOD) == []


def test_crlf_phase_and_crlf_output_satisfy_every_rule(tmp_path: Path) -> None:
    phase_dir, planning = kalender(tmp_path, newline="\r\n")
    assert b"\r\n" in (phase_dir / "03-01-SUMMARY.md").read_bytes()
    assert declared_ids(phase_dir, planning, "3") == {
        "CAL-01",
        "CAL-02",
        "MED-EVENT",
        "CAL-07",
        "CAL-08",
    }
    texts = [read_text(p) for p in plan_summaries(phase_dir)]
    assert listed_paths(texts) == ["src/lib/rrule.ts", "tests/rrule.test.ts", "src/app/page.tsx"]
    assert check(phase_dir, planning, "3", GOOD.replace("\n", "\r\n")) == []


# --- rule 1 ------------------------------------------------------------------------------------


def test_rule_1_plan_summaries_by_name(tmp_path: Path) -> None:
    names = [
        "03-01-SUMMARY.md",
        "03-02a-SUMMARY.md",
        "06.1-02-SUMMARY.md",
        "16-SUMMARY.md",
        "01-SUMMARY.md",
        "CTRX-23-01-summary.md",
    ]
    not_plans = [
        "PLANNING-SUMMARY.md",
        "08-CLOSEOUT-SUMMARY.md",
        "02-PHASE-SUMMARY.md",
        "MILESTONE-v2.0-SUMMARY.md",
        "TEST_SUMMARY.md",
        "SUMMARY.md",
        "03-COMPACTED.md",
        "03-CONTEXT.md",
        "03-01-PLAN.md",
        "deferred-items.md",
    ]
    for name in names + not_plans:
        write(tmp_path / name, "x\n")
    (tmp_path / "04-SUMMARY.md").mkdir()  # a folder, not a file
    assert [p.name for p in plan_summaries(tmp_path)] == sorted(names)


def test_rule_1_original_summaries_must_be_the_plan_summaries(phase: tuple[Path, Path]) -> None:
    missing = edited(GOOD, "[03-01-SUMMARY.md, 03-02-SUMMARY.md]", "[03-01-SUMMARY.md]")
    assert check(*phase, "3", missing) == [
        "rule 1: original_summaries lacks plan summary 03-02-SUMMARY.md"
    ]
    block = edited(
        GOOD,
        "original_summaries: [03-01-SUMMARY.md, 03-02-SUMMARY.md]",
        "original_summaries:\n  - 03-01-SUMMARY.md\n  - '03-02-SUMMARY.md'\n  - 03-CONTEXT.md",
    )
    assert check(*phase, "3", block) == [
        "rule 1: original_summaries lists 03-CONTEXT.md, which is not a plan summary of the phase"
    ]


# --- rule 2 ------------------------------------------------------------------------------------


def test_rule_2_declared_ids_of_the_kalender_phase(phase: tuple[Path, Path]) -> None:
    # CAL-09 is defined but mentioned only by CONTEXT; CAL-99 belongs to phase 13; UI is no id.
    assert declared_ids(*phase, "3") == {"CAL-01", "CAL-02", "MED-EVENT", "CAL-07", "CAL-08"}


def test_rule_2_odd_id_shapes_from_every_source(tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    phase_dir = planning / "phases" / "04-sync"
    write(
        phase_dir / "04-01-SUMMARY.md",
        """---
Requirements-Completed: [AUTH-01, "UX-STATES", 'REQ-sizes-five']  # from the plan
requirements_addressed:
  - V16-AI-01: model picker
  - "`SYNC_05`"
  - none
  - n/a
metrics:
  requirements_count: 3
requirements-pending:
  uat: [R1.1–R1.4]
---

# Plan 04-01: Sync

**Requirements:** R1, FR1.1 (partial), NFR1; All of the above
- Requirements: 42/42 verified (100%)

**REQUIREMENTS.md Updates:**
- Configuration: NOT-DECLARED-01 ✅

```yaml
requirements: [FENCED-01]
```

## Requirements Covered
- ✓ LOG-01-phase-local: a log per phase
- [x] **PHASE-34-D-A1** (kept)
- All requirements of the wave

| ID | Requirement |
|----|-------------|
| 04.2-K1 | the key |

Also touches D-045 and MED-EVENT, and D-04x, but never the other one.
""",
    )
    write(phase_dir / "04-PLAN-02.md", "---\nrequirements:\n  - FX-01..03\n---\n# Plan\n")
    write(
        planning / "ROADMAP.md",
        "## Phase 4: Sync\n**Requirements**: SYNC-10 through SYNC-12, TBD\n"
        "#### Notes\n- **Requirements:**\n  - RM-01, RM-02 (later)\n  - [x] RM-03\n"
        "\n- NOT-THIS-03\n"
        "## Phase 4.1: Inserted\n**Requirements**: NOT-THIS-01\n"
        "## Phase 14: Far\n**Requirements**: NOT-THIS-02\n",
    )
    write(
        planning / "REQUIREMENTS.md",
        "| ID | Phase | Text |\n|---|---|---|\n| MED-EVENT | Phase 4 | meetings |\n"
        "| D-04 | Phase 5 | another phase's |\n"
        "- **UI**: plain\n### REQ-OTHER-01: defined, mapped to no phase\n",
    )
    assert declared_ids(phase_dir, planning, "04") == {
        "AUTH-01",
        "UX-STATES",
        "REQ-sizes-five",
        "V16-AI-01",
        "SYNC_05",
        "R1.1–R1.4",
        "R1",
        "FR1.1",
        "NFR1",
        "LOG-01-phase-local",
        "PHASE-34-D-A1",
        "04.2-K1",
        "FX-01..03",
        "SYNC-10",
        "SYNC-12",
        "RM-01",
        "RM-02",
        "RM-03",
        "MED-EVENT",
    }


# --- rule 3 ------------------------------------------------------------------------------------


def test_rule_3_a_declared_id_without_a_verdict_line(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "- CAL-08: NOT VERIFIED\n", "")
    assert check(*phase, "3", broken) == ["rule 3: declared requirement CAL-08 has no verdict line"]


def test_rule_3_two_verdict_lines_for_one_id(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "- CAL-08: NOT VERIFIED\n", "- CAL-08: NOT VERIFIED\n" * 2)
    assert check(*phase, "3", broken) == ["rule 3: CAL-08 has 2 verdict lines"]


def test_rule_3_a_verdict_line_for_an_undeclared_id(phase: tuple[Path, Path]) -> None:
    broken = edited(
        GOOD, "- CAL-08: NOT VERIFIED\n", "- CAL-08: NOT VERIFIED\n- CAL-09: NOT VERIFIED\n"
    )
    assert check(*phase, "3", broken) == [
        "rule 3: verdict line for CAL-09, which is not a declared requirement"
    ]


def test_rule_3_satisfied_without_pass(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "- CAL-02: PASS", "- CAL-02: PARTIAL")
    assert check(*phase, "3", broken) == [
        "rule 3: requirements_satisfied lists CAL-02 without a PASS verdict line"
    ]


def test_rule_3_satisfied_but_undeclared(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "MED-EVENT]", "MED-EVENT, CAL-99]")
    assert check(*phase, "3", broken) == ["rule 3: requirements_satisfied lists undeclared CAL-99"]


def test_rule_3_plan_check_lines_and_bold_ids(phase: tuple[Path, Path]) -> None:
    styled = edited(GOOD, "- CAL-01: PASS", "- **CAL-01**: PASS")
    styled = edited(styled, "- Plan 03-01:", "- Plan 03-02: PASS\n- Plan 03-01:")
    assert check(*phase, "3", styled) == []


RANGE_SUMMARY = (
    """---
requirements-completed: [R1.1–R1.4, FX-01..03]
---

# Plan 05-01 Summary

Covers R1.1–R1.4 and FX-01..03.

"""
    + PADDING * 2
)

RANGE_OUTPUT = """---
phase: 05-ranges
original_summaries: [05-01-SUMMARY.md]
requirements_satisfied: [{satisfied}]
---

# Phase 5: Ranges — Compacted Summary

## Verification
{lines}
"""


@pytest.mark.parametrize(
    ("satisfied", "lines", "expected"),
    [
        ("R1.1–R1.4", "- R1.1–R1.4: PASS\n- FX-01..03: PASS", []),
        (
            "R1.1–R1.4, FX-01..03",
            "- R1.1: PASS\n- R1.2: PASS\n- R1.3: PASS\n- R1.4: PASS\n"
            "- FX-01: PASS\n- FX-02: PASS\n- FX-03: PASS",
            [],
        ),
        (
            "",
            "- R1.1: PASS\n- R1.2: PASS\n- R1.4: PASS\n- FX-01..03: PARTIAL",
            ["rule 3: declared requirement R1.1–R1.4 has no verdict line"],
        ),
        (
            "FX-01..03",
            "- R1.1–R1.4: PASS\n- FX-01: PASS\n- FX-02: FAIL\n- FX-03: PASS",
            ["rule 3: requirements_satisfied lists FX-01..03 without a PASS verdict line"],
        ),
    ],
    ids=["literal-lines", "member-lines", "a-member-missing", "a-member-fails"],
)
def test_rule_3_range_literals(
    tmp_path: Path, satisfied: str, lines: str, expected: list[str]
) -> None:
    phase_dir = tmp_path / "05-ranges"
    write(phase_dir / "05-01-SUMMARY.md", RANGE_SUMMARY)
    output = RANGE_OUTPUT.format(satisfied=satisfied, lines=lines)
    assert check(phase_dir, tmp_path, "5", output) == expected


def test_rule_3_members_of_a_through_span_are_accepted(tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    phase_dir = planning / "phases" / "02-span"
    write(phase_dir / "02-01-SUMMARY.md", "# Plan 02-01\n\nDid SP-01 to SP-03.\n" + PADDING)
    write(planning / "ROADMAP.md", "### Phase 2: Span\n**Requirements:** SP-01 through SP-03\n")
    output = (
        "---\noriginal_summaries: [02-01-SUMMARY.md]\nrequirements_satisfied: []\n---\n"
        "## Verification\n- SP-01: PASS\n- SP-02: NOT VERIFIED\n- SP-03: PASS\n"
    )
    assert check(phase_dir, planning, "2", output) == []
    assert check(phase_dir, planning, "2", output.replace("- SP-01: PASS\n", "")) == [
        "rule 3: declared requirement SP-01 has no verdict line"
    ]


# --- rule 4 ------------------------------------------------------------------------------------


def test_rule_4_roadmap_only_id_must_not_pass(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "- CAL-07: NOT VERIFIED", "- CAL-07: PASS")
    assert check(*phase, "3", broken) == [
        "rule 4: CAL-07 is PASS but no plan summary mentions it (must be NOT VERIFIED)"
    ]


def test_rule_4_plan_only_id_must_not_fail(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "- CAL-08: NOT VERIFIED", "- CAL-08: FAIL — not built")
    assert check(*phase, "3", broken) == [
        "rule 4: CAL-08 is FAIL but no plan summary mentions it (must be NOT VERIFIED)"
    ]


# --- rule 5 ------------------------------------------------------------------------------------

PATHS_SUMMARY = """---
key-files:
  created:
    - src/a.ts — the parser
    - "src/b.ts (new)"
    - 'wBlock Advanced/wBlock_Advanced.entitlements'
    - path: .goreleaser.yaml
      purpose: release config for v1.2 builds
    - `data/pdfs/{poliza_id}.pdf` - one per policy
    - "pyproject.toml — `__version__ = '0.1.0'` (D-03)"
  modified: []
  deleted: [old/legacy.py, none]
keyFiles: [".env.example", config.yml.example]
files_modified:
  - go.sum
  - src/app/[slug]/page.tsx: the page  # generated
metrics:
  files_created: 3
tech-stack:
  added: [zod.js-not-a-file]
---

# Plan 07-01 Summary: Files of Every Shape

## Files Created/Modified
- `App.xcodeproj/project.pbxproj` - bundle
- **app/(auth)/login/page.tsx**: login page
  - added `helper.ts` inside it (a note, not a file)
- Created/modified:
  - `tests/fixtures/*.json` - fixtures
- [x] docs/café/ñandú.md — FOUND
- `src/a.ts` - listed twice
- `a/old.ts` → `b/new.ts`
- **Commit:** `5bb2b79`
- None (verification only)
- `Makefile` - targets

| File | Lines |
|------|-------|
| `.github/workflows/ci.yml` | 40 |

```
fenced/ignored.ts
- `fenced/also-ignored.ts`
```

**Created:** `src/created.ts` and `src/second.ts`
- **Modified**: `lib/changed.py` (small)
Added: `DetailLevel` enum

## Archivos modificados
- `src/es/archivo.ts` - texto
- src/es/otro.ts — lee `config.json`

## Изменённые файлы
- `src/ru/файл.ts`

## 修改的文件
| 文件 | 说明 |
|---|---|
| `src/zh/x.ts` | 说明 |

## Task 1: Single-File Helper
- `src/not/listed.ts` (a task, not a files section)
"""


def test_rule_5_listed_paths_of_every_shape() -> None:
    assert listed_paths([PATHS_SUMMARY]) == [
        "src/a.ts",
        "src/b.ts",
        "wBlock Advanced/wBlock_Advanced.entitlements",
        ".goreleaser.yaml",
        "data/pdfs/{poliza_id}.pdf",
        "pyproject.toml",
        "old/legacy.py",
        ".env.example",
        "config.yml.example",
        "go.sum",
        "src/app/[slug]/page.tsx",
        "App.xcodeproj/project.pbxproj",
        "app/(auth)/login/page.tsx",
        "tests/fixtures/*.json",
        "docs/café/ñandú.md",
        "a/old.ts",
        "b/new.ts",
        "Makefile",
        ".github/workflows/ci.yml",
        "lib/changed.py",
        "src/es/archivo.ts",
        "src/es/otro.ts",
        "src/ru/файл.ts",
        "src/zh/x.ts",
        "src/created.ts",
    ]


def test_rule_5_crlf_translated_heading_and_moves_in_frontmatter() -> None:
    text = (
        "---\nfiles_created:\n  - src/old.rs → src/new.rs\n---\n"
        "## Geänderte Dateien\n- `src/de/datei.rs` — neu\n"
        "## Fichiers créés\n- src/fr/fichier.rs (nouveau)\n"
    ).replace("\n", "\r\n")
    assert listed_paths([text]) == [
        "src/old.rs",
        "src/new.rs",
        "src/de/datei.rs",
        "src/fr/fichier.rs",
    ]


# --- rule 6 ------------------------------------------------------------------------------------


def test_rule_6_a_listed_file_without_a_row(phase: tuple[Path, Path]) -> None:
    broken = edited(GOOD, "| src/app/page.tsx | modified in 03-02 |\n", "")
    assert check(*phase, "3", broken) == [
        "rule 6: listed file src/app/page.tsx is not the first cell of any Files Modified row"
    ]


def test_rule_6_a_file_in_two_rows(phase: tuple[Path, Path]) -> None:
    broken = edited(
        GOOD,
        "| src/app/page.tsx | modified in 03-02 |\n",
        "| src/app/page.tsx | modified in 03-02 |\n| `src/app/page.tsx` | again |\n",
    )
    assert check(*phase, "3", broken) == [
        "rule 6: file src/app/page.tsx is in 2 Files Modified rows"
    ]


def test_rule_6_a_move_cell_holds_both_paths(tmp_path: Path) -> None:
    phase_dir = tmp_path / "08-moves"
    write(
        phase_dir / "08-01-SUMMARY.md",
        "# Plan 08-01\n\n## Files Moved\n- `a/old.ts` → `b/new.ts`\n\n" + PADDING,
    )
    output = (
        "---\noriginal_summaries: [08-01-SUMMARY.md]\n---\n## Files Modified\n"
        "| File | Change |\n|---|---|\n| `a/old.ts` → `b/new.ts` | moved in 08-01 |\n"
    )
    assert check(phase_dir, tmp_path, "8", output) == []
    assert check(phase_dir, tmp_path, "8", output.replace("→ `b/new.ts`", "")) == [
        "rule 6: listed file b/new.ts is not the first cell of any Files Modified row"
    ]


PER_PLAN_SUMMARY = (
    """---
key-files:
  created: [src/lib, src/a.ts, .env]
---

# Plan 01-01

"""
    + PADDING * 2
)

PER_PLAN_OUTPUT = """---
phase: 01-tiny
layout: per-plan
original_summaries: [01-01-SUMMARY.md]
requirements_satisfied: []
---

# Phase 1: Tiny — Compacted Summary

## Plan 01-01 (success)
- Added the folder src/lib and `src/a.ts`.
- Files: .env

## Verification
"""


def test_rule_6_per_plan_layout_paths_occur_whole(tmp_path: Path) -> None:
    phase_dir = tmp_path / "01-tiny"
    write(phase_dir / "01-01-SUMMARY.md", PER_PLAN_SUMMARY)
    assert check(phase_dir, tmp_path, "1", PER_PLAN_OUTPUT) == []
    only_longer = edited(PER_PLAN_OUTPUT, "the folder src/lib and", "src/lib/x.ts and")
    assert check(phase_dir, tmp_path, "1", only_longer) == [
        "rule 6: listed file src/lib does not occur as a whole path in the per-plan body"
    ]
    only_tail = edited(PER_PLAN_OUTPUT, "`src/a.ts`", "`backend/src/a.ts`")
    assert check(phase_dir, tmp_path, "1", only_tail) == [
        "rule 6: listed file src/a.ts does not occur as a whole path in the per-plan body"
    ]
    only_inside = edited(PER_PLAN_OUTPUT, "- Files: .env", "- Files: .env.example")
    assert check(phase_dir, tmp_path, "1", only_inside) == [
        "rule 6: listed file .env does not occur as a whole path in the per-plan body"
    ]


# --- rule 7 ------------------------------------------------------------------------------------


def test_rule_7_an_invented_row(phase: tuple[Path, Path]) -> None:
    broken = edited(
        GOOD,
        "| src/app/page.tsx | modified in 03-02 |\n",
        "| src/app/page.tsx | modified in 03-02 |\n| src/app/layout.tsx | modified |\n",
    )
    assert check(*phase, "3", broken) == [
        "rule 7: Files Modified row src/app/layout.tsx occurs in no plan summary nor the ROADMAP"
    ]


def test_rule_7_a_suffix_row_is_noise(phase: tuple[Path, Path]) -> None:
    broken = edited(
        GOOD,
        "| src/app/page.tsx | modified in 03-02 |\n",
        "| src/app/page.tsx | modified in 03-02 |\n| app/page.tsx | the same file |\n",
    )
    assert check(*phase, "3", broken) == [
        "rule 7: Files Modified row app/page.tsx is a suffix of row src/app/page.tsx"
    ]


def test_rule_7_a_listed_suffix_path_keeps_its_row(tmp_path: Path) -> None:
    phase_dir = tmp_path / "02-mono"
    summary = "---\nkey-files:\n  created: [package.json, packages/cli/package.json]\n---\n"
    write(phase_dir / "02-01-SUMMARY.md", summary + PADDING)
    output = (
        "---\noriginal_summaries: [02-01-SUMMARY.md]\n---\n## Files Modified\n"
        "| File | Change |\n|---|---|\n| package.json | root |\n"
        "| packages/cli/package.json | the CLI's |\n"
    )
    assert check(phase_dir, tmp_path, "2", output) == []


# --- rule 8 ------------------------------------------------------------------------------------


def test_rule_8_output_longer_than_the_summaries(phase: tuple[Path, Path]) -> None:
    limit = sum(len(read_text(p).encode()) for p in plan_summaries(phase[0]))
    broken = GOOD + "\n" + "x" * limit
    assert check(*phase, "3", broken) == [
        f"rule 8: output has {len(broken.encode())} bytes, more than the summaries' {limit}"
    ]


# --- odd input never crashes -------------------------------------------------------------------


def test_odd_input_never_crashes(tmp_path: Path) -> None:
    planning = tmp_path / ".planning"
    phase_dir = planning / "phases" / "09-odd"
    phase_dir.mkdir(parents=True)
    (phase_dir / "09-01-SUMMARY.md").write_bytes(bytes(range(256)) * 4)
    write(phase_dir / "09-02-SUMMARY.md", "")
    write(phase_dir / "09-03-SUMMARY.md", "---\nkey-files: [unclosed, \n\trequirements: {a: [\n")
    write(phase_dir / "09-04-SUMMARY.md", "---\n---\n---\n## Files\n| |\n|-|\n- `` \n- ``` \n")
    write(phase_dir / "09-05-PLAN.md", "---\nrequirements: 'unterminated\n---\n")
    long_runs = (
        "## Files\n- " + "`" * 20_000 + "\n- a" + " " * 20_000 + "b\n# x" + " " * 20_000 + "y\n"
    )
    write(
        phase_dir / "09-06-SUMMARY.md",
        "---\nkey-files:\n  - a" + " " * 20_000 + "b\n---\n" + long_runs,
    )
    write(planning / "ROADMAP.md", "### Phase\n### Phase 9\n**Requirements**:\n- \n")
    (planning / "REQUIREMENTS.md").write_bytes(b"\xff\xfe| \x00 |\n")
    for junk in ["", "---", "---\noriginal_summaries: [\n", "\x00\r\r\n## Verification\n- : PASS"]:
        assert isinstance(check(phase_dir, planning, "9", junk), list)
    assert isinstance(declared_ids(tmp_path / "absent", tmp_path / "absent", "x"), set)
    assert listed_paths(["", "---\n", "\x00\x01"]) == []


def mutated(rng: random.Random, text: str, donors: list[str]) -> str:
    """The text with random markdown/YAML punctuation, deletions and pasted pieces."""
    marks = ["-", "*", "|", "`", "[", "]", ":", "#", "\n", "\r", "→", "–", "---\n", "## Files\n"]
    chars = list(text)
    for _ in range(rng.randint(1, 30)):
        at = rng.randrange(len(chars) + 1)
        roll = rng.random()
        if roll < 0.4:
            chars[at:at] = list(rng.choice(marks))
        elif roll < 0.7:
            del chars[at : at + rng.randint(1, 20)]
        else:
            donor = rng.choice(donors)
            start = rng.randrange(len(donor))
            chars[at:at] = list(donor[start : start + rng.randint(1, 80)])
    return "".join(chars)


def test_mutated_input_never_crashes(tmp_path: Path) -> None:
    rng = random.Random(20261207)
    donors = [SUMMARY_01, SUMMARY_02, PATHS_SUMMARY, GOOD, ROADMAP, REQUIREMENTS, PLAN_01]
    for attempt in range(60):
        phase_dir, planning = kalender(tmp_path / str(attempt))
        for path in [*phase_dir.iterdir(), planning / "ROADMAP.md", planning / "REQUIREMENTS.md"]:
            write(path, mutated(rng, read_text(path), donors))
        assert isinstance(check(phase_dir, planning, "3", mutated(rng, GOOD, donors)), list)


# --- smoke run over the real corpora -----------------------------------------------------------

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPORA = sorted(p for p in SHARED.glob("realworld*") if p.is_dir())


def phase_folders(corpus: Path) -> list[tuple[Path, Path]]:
    """(phase folder, planning folder) of every folder holding a plan summary."""
    found = []
    for planning in sorted(corpus.glob("*/.planning")):
        for folder in sorted(p for p in planning.rglob("*") if p.is_dir()):
            if plan_summaries(folder):
                found.append((folder, planning))
    return found


def number_of(folder: Path) -> str:
    """The phase number of a folder name (`03-kalender` -> 03, `CTRX-23-x` -> 23)."""
    match = re.match(r"(?:[A-Za-z]+-)?(\d+(?:\.\d+)*)", folder.name)
    return match.group(1) if match else "0"


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.skipif(not CORPORA, reason="no ../shared/realworld* corpus")
def test_smoke_over_every_real_phase() -> None:
    phases = ids = paths = 0
    for corpus in CORPORA:
        for folder, planning in phase_folders(corpus):
            texts = [read_text(p) for p in plan_summaries(folder)]
            ids += len(declared_ids(folder, planning, number_of(folder)))
            paths += len(listed_paths(texts))
            phases += 1
    print(f"oracle smoke: {phases} phases, {ids} declared ids, {paths} listed paths")
    assert phases > 0
