"""Deterministic extraction of requirement ids, paths and plan facts (memory/extract.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.phases.extract import (
    expand_range,
    find_paths,
    ids_in_line,
    ids_present,
    is_path,
    outcome_of,
    path_present,
    phase_facts,
    plan_facts,
    plan_name,
    requirement_ids,
    requirement_reports,
    sections,
)
from tests.conftest import FIXTURES

PHASES = FIXTURES / "phases"
CASES = sorted(p.name for p in PHASES.iterdir() if (p / "expected.json").is_file())


def expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PHASES / case / "expected.json").read_text())
    return data


def facts_of(case: str, roadmap_ids: tuple[str, ...] = ()) -> Any:
    exp = expected(case)
    folder = PHASES / case / exp["phase_dir"]
    items = [(n.removesuffix("-SUMMARY.md"), n, (folder / n).read_text(encoding="utf-8"))
             for n in exp["summaries"]]  # fmt: skip
    return phase_facts(items, roadmap_ids)


def excluded_texts(case: str) -> str:
    exp = expected(case)
    parts = []
    for name in exp["excluded_summaries"]:
        base = PHASES / case if name.startswith(".planning/") else PHASES / case / exp["phase_dir"]
        parts.append((base / name).read_text(encoding="utf-8"))
    return "\n".join(parts)


def test_there_are_at_least_twelve_fixture_phases() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("case", CASES)
def test_paths_equal_the_ground_truth(case: str) -> None:
    exp = expected(case)
    found = facts_of(case).paths
    assert sorted(found) == sorted(exp["paths"])
    assert len(found) == len(set(found))
    for not_path in exp.get("not_paths", []):
        assert not_path not in found
    # a glob or a bare name only prose mentions is kept as written (find_paths reads it) but
    # is no Files row; a declared one is (fixtures/phases/README.md)
    named = {p for plan in facts_of(case).plans for p in plan.paths}
    prose_only = [*exp.get("globs", []), *exp.get("prose_bare_names", [])]
    assert all(path in named and path not in found for path in prose_only)


@pytest.mark.parametrize("case", CASES)
def test_requirement_ids_from_summaries_and_roadmap(case: str) -> None:
    exp = expected(case)
    from_summaries = set(facts_of(case).requirement_ids)
    # every id a summary names is a real requirement of the phase ...
    assert from_summaries <= set(exp["requirement_ids"])
    assert not from_summaries & set(exp["not_requirement_ids"])
    # ... and with the ROADMAP's line (phases.py reads it) the set is exactly the ground truth
    roadmap_only = tuple(set(exp["requirement_ids"]) - from_summaries)
    assert set(facts_of(case, roadmap_only).requirement_ids) == set(exp["requirement_ids"])


@pytest.mark.parametrize("case", CASES)
def test_plan_facts_equal_the_ground_truth(case: str) -> None:
    plans = [{"id": p.id, "name": p.name, "status": p.status, "outcome": p.outcome,
              "agent": p.agent} for p in facts_of(case).plans]  # fmt: skip
    assert plans == expected(case)["plans"]


@pytest.mark.parametrize("case", [c for c in CASES if expected(c)["excluded_summaries"]])
def test_excluded_files_hold_facts_the_phase_must_not_report(case: str) -> None:
    exp = expected(case)
    facts = facts_of(case)
    for rid in exp.get("excluded_only_requirement_ids", []):
        assert rid not in facts.requirement_ids
        assert rid in excluded_texts(case)  # the trap is real
    for path in exp.get("excluded_only_paths", []):
        assert path not in facts.paths
        assert path in excluded_texts(case)


def test_roadmap_only_requirement_is_not_in_any_summary() -> None:
    # missing-plan-summary: NOTF-03 lives only in ROADMAP.md, so summaries alone miss it
    assert "NOTF-03" not in facts_of("missing-plan-summary").requirement_ids


@pytest.mark.parametrize(
    ("line", "ids"),
    [
        ("R1.1–R1.4, R2.1", ["R1.1–R1.4", "R1.1", "R1.2", "R1.3", "R1.4", "R2.1"]),
        ("REQ-01—REQ-03", ["REQ-01—REQ-03", "REQ-01", "REQ-02", "REQ-03"]),
        ("AUTH-01 - AUTH-02", ["AUTH-01 - AUTH-02", "AUTH-01", "AUTH-02"]),
        ("R1, R2, R15 (docs move)", ["R1", "R2", "R15"]),
        ("R5 (publish and edit only; see R9)", ["R5"]),
        ("L9I-01, FOUN-02", ["L9I-01", "FOUN-02"]),
        ("D-05, T-01-01, O-014, E-002, PAT-003, P-256, INV-2026-0001", []),
        ("AUTH-01–BILL-04", ["AUTH-01", "BILL-04"]),  # not a range: prefixes differ
        ("GATE-KX2-04, REQ-M7-11, NFR-SYNC-003", ["GATE-KX2-04", "REQ-M7-11", "NFR-SYNC-003"]),
    ],
)
def test_ids_in_a_requirement_line(line: str, ids: list[str]) -> None:
    assert ids_in_line(line) == ids


def test_range_expansion_rules() -> None:
    assert expand_range("R1.1", "R1.4") == ["R1.1", "R1.2", "R1.3", "R1.4"]
    assert expand_range("REQ-08", "REQ-10") == ["REQ-08", "REQ-09", "REQ-10"]
    assert expand_range("R4", "R2") == []  # backwards
    assert expand_range("R1", "R900") == []  # implausibly long


def test_id_presence_respects_boundaries() -> None:
    assert ids_present("R1", "covers R1 and R14")
    assert not ids_present("R1", "covers R14, R15 and R1.2")
    assert not ids_present("AUTH-0", "AUTH-01")
    assert ids_present("R1.1–R1.4", "R1.1, R1.2, R1.3 and R1.4")  # a range counts by its members
    assert not ids_present("R1.1–R1.4", "R1.1, R1.2 and R1.4")


def test_requirement_sources_in_one_summary() -> None:
    text = "\r\n".join([
        "---", "requirements-completed: [AUTH-01, AUTH-02]", "requirements_fulfilled:",
        "  - R14", "decisions:", "  - id: D-06", "---",
        "# Plan 01-01 Summary: X", "**Requirement:** R3", "> **Requirements**: R4 (later)",
        "Prose names R9 and AUTH-09, which are not sources.",
        "## Requirements Satisfied", "- R15 — moved; see D-07", "| REQ-07 | table cell |",
        "```", "R16 inside a fence", "```", "## Threat Model", "| T-01-01 | x |",
    ])  # fmt: skip
    assert requirement_ids(text) == ["AUTH-01", "AUTH-02", "R3", "R4", "R14", "R15", "REQ-07"]


def test_frontmatter_lists_give_ids_of_any_shape_and_comments_are_not_reports() -> None:
    text = "\n".join([
        "---", "requirements-completed: [] # leaves OPS-LINK-07 open for the next wave",
        'requirements_done: ["04.2-K1", WIDGET-ALPHA-9X, SYNC_05, API-7b, D-03, none, TBD, 17]',
        "requirements:", "  - PORT-X1-02  # the second half", "---", "# Plan 04-01 Summary",
    ])  # fmt: skip
    reports = requirement_reports(text)
    assert [r.id for r in reports] == [
        "04.2-K1",
        "WIDGET-ALPHA-9X",
        "SYNC_05",
        "API-7b",
        "D-03",  # decision-shaped, but a requirements list declares it: taken whole
        "PORT-X1-02",
    ]
    assert {r.stated for r in reports} == {"pass"}


def test_a_prose_range_of_other_shapes_names_no_requirements() -> None:
    text = "The table has one row per open question Q2..Q6 (verified by grep). R3.1–R3.3 verified."
    assert requirement_ids(text) == ["R3.1–R3.3", "R3.1", "R3.2", "R3.3"]


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        (
            "Sorted the imports of **__init__.py** and `pages/_document.tsx`",
            ["__init__.py", "pages/_document.tsx"],
        ),
        ("see _notes/plan.md_ and *_hooks.ts_*", ["notes/plan.md", "hooks.ts"]),
        ("- src/tokenize.ts (~370 lines) — tokenizer", ["src/tokenize.ts"]),
        ("- src-tauri/src/cache/evict.rs (created - eviction)", ["src-tauri/src/cache/evict.rs"]),
        (
            "`packages/{core,web}/package.json` and `src/assets/*.svg`",
            ["packages/{core,web}/package.json", "src/assets/*.svg"],
        ),
        ('File "/srv/app/query.py", line 88, in run', ["/srv/app/query.py"]),
        (
            "CARTRIDGE_ROM=/home/m/roms/kiln.sfc python tools/scan.py --x",
            ["/home/m/roms/kiln.sfc", "tools/scan.py"],
        ),
        ("see docs/deploy.md.", ["docs/deploy.md"]),
        (
            "(packages/core/src/index.ts), and package.json",
            ["packages/core/src/index.ts", "package.json"],
        ),
        (
            "`.gitignore`, .github/workflows/ci.yml, .gitleaks.toml, Dockerfile",
            [".gitignore", ".github/workflows/ci.yml", ".gitleaks.toml", "Dockerfile"],
        ),
        ("--- a/src/x.py\n+++ b/src/x.py", ["src/x.py"]),
        ("tests/a.py::test_b and src/c.py:12:4", ["tests/a.py", "src/c.py"]),
        ("/beacon and /beacon:migrate, @node-rs/argon2, @orrery/core/src", []),
        ("3/2 cups, 1/2, 5/5 passed, v6.3.5, harbor.search.bulk, order.confirmed", []),
        ("Node.js and Next.js; files ending in .mjs; https://x.io/a.json", []),
    ],
)
def test_paths_in_text(text: str, paths: list[str]) -> None:
    assert find_paths(text) == paths


def test_path_shapes() -> None:
    assert is_path("harbour-cup.pdf") and is_path("deploy/nginx/orrery.conf")
    assert is_path("src-tauri/icons/*.png") and is_path("~/.claude/agency/portfolio.md")
    assert not is_path("text.primary") and not is_path(".venv") and not is_path("E.164")
    assert path_present("src/a.py", "| `src/a.py` | x |")
    assert not path_present("src/a.py", "lib/src/a.py and src/a.pyc")


@pytest.mark.parametrize(
    ("token", "path"),
    [
        (".env.local", True), (".env.production", True), (".eslintrc.js", True),
        ("src/index.d.ts", True), ("a.test.ts", True), ("src/routes/+page.svelte", True),
        ("socket.io/lib/index.js", True), ("docs/v1.0.md", True),
        (".test.ts", False), (".d.ts", False), (".module.css", False),  # a kind of file
        ("STATE.md/ROADMAP.md", False), ("packages/a.ts/b.ts", False),  # two names, one slash
    ],
)  # fmt: skip
def test_env_files_are_paths_suffixes_and_slash_joined_names_are_not(
    token: str, path: bool
) -> None:
    assert is_path(token) is path


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Plan 03-01 Summary: Streaming CSV export", "Streaming CSV export"),
        ("Plan 07-01 Summary — Portfolio Manager", "Portfolio Manager"),
        ("Phase 2 Plan 01: Password hashing Summary", "Password hashing"),
        ("Plan 06-01: Tile cache", "Tile cache"),
        ("01-01 Summary: Scaffold", "Scaffold"),
        ("Summary: 01-01 Scaffold", "Scaffold"),
        ("Plan 09-01 Summary", None),
    ],
)
def test_plan_name_variants(title: str, name: str | None) -> None:
    assert plan_name(title) == name


def test_status_and_outcome_variants() -> None:
    assert outcome_of("Complete with Warnings") == "partial"
    assert outcome_of("Partial") == "partial"
    assert outcome_of("Failed") == "failed"
    assert outcome_of("Success") == outcome_of("Complete") == "success"
    assert outcome_of(None, "## Self-Check: FAILED\n") == "partial"
    plan = plan_facts("04-01", "04-01-SUMMARY.md", "# Plan 04-01 Summary: X\r\n\r\n"
                      "> **Status**: Complete  \r\n> **Agent**: `eng-x`\r\n")  # fmt: skip
    assert (plan.status, plan.agent, plan.outcome) == ("Complete", "eng-x", "success")


def test_sections_ignore_headings_inside_fences() -> None:
    found = sections("# T\n\n## A\n```\n## not a heading\n```\n## B\ntext\n")
    assert [(s.title, s.level) for s in found] == [("T", 1), ("A", 2), ("B", 2)]


def test_crlf_and_lf_give_the_same_facts(tmp_path: Path) -> None:
    case = "crlf-italian-body"
    folder = PHASES / case / expected(case)["phase_dir"]
    raw = (folder / "02-01-SUMMARY.md").read_bytes()
    assert b"\r\n" in raw  # the fixture really is CRLF on disk
    lf = raw.replace(b"\r\n", b"\n").decode()
    crlf = plan_facts("02-01", "x", raw.decode())
    assert crlf == plan_facts("02-01", "x", lf)
    assert all("\r" not in p for p in crlf.paths)


def roadmap_ids(case: str) -> tuple[str, ...]:
    from legion_llm.memory.phases.find import find_phase

    return find_phase(PHASES / case, expected(case)["phase"]).roadmap.requirement_ids


@pytest.mark.parametrize("case", [c for c in CASES if "verdicts" in expected(c)])
def test_grounded_verdicts_equal_the_ground_truth(case: str) -> None:
    facts = facts_of(case, roadmap_ids(case))
    found = {rid: facts.grounded(rid).verdict for rid in facts.requirement_ids}
    assert found == expected(case)["verdicts"]


@pytest.mark.parametrize("case", [c for c in CASES if "brace_members" in expected(c)])
def test_a_brace_list_is_kept_by_its_literal_or_all_its_members(case: str) -> None:
    for literal, members in expected(case)["brace_members"].items():
        assert literal in facts_of(case).paths
        assert path_present(literal, f"| {literal} | x |")
        assert path_present(literal, " and ".join(members))
        assert not path_present(literal, " and ".join(members[:-1]))


@pytest.mark.parametrize(
    ("line", "reported"),
    [
        ("Satisfies spec R2.3–R2.5 and the logging part of R2.9.",
         {"R2.3–R2.5": "pass", "R2.3": "pass", "R2.4": "pass", "R2.5": "pass", "R2.9": "partial"}),
        ("- Phase 7 is done (AUTH-01, AUTH-02 all satisfied)", {"AUTH-01": "pass", "AUTH-02": "pass"}),
        ("This closes FX-01..03.", {"FX-01..03": "pass", "FX-01": "pass", "FX-02": "pass", "FX-03": "pass"}),
        ("Also implements FX-04..FX-05.", {"FX-04..FX-05": "pass", "FX-04": "pass", "FX-05": "pass"}),
        ("Covers R4 partially; R5 is not yet covered.", {"R4": "partial", "R5": "not verified"}),
        ("AUTH-03 is complete but AUTH-04 is not.", {"AUTH-03": "pass", "AUTH-04": "not verified"}),
        ("R6, R7, and R8 are met.", {"R6": "pass", "R7": "pass", "R8": "pass"}),
        ("Checks for R9 failed, so R9 is not met.", {"R9": "fail"}),
        ("All 3 requirements (MATRIX-01 through MATRIX-03) are satisfied.",
         {"MATRIX-01": "pass", "MATRIX-02": "pass", "MATRIX-03": "pass"}),
        ("AUTH-05 went through review and is complete.", {"AUTH-05": "pass"}),
        ("See R3.1 and AUTH-09 in the spec.", {}),  # no status word: not a report
        ("Implemented SHA-256 digests, UTF-8 input and ES2022 output for S3.", {}),
        # reports all the same: only a declaration makes them count (keep_reports; the
        # precision tests in test_requirement_precision.py)
        ("Closes D-05 and T-01-01; satisfies O-014.", {"D-05": "pass", "O-014": "pass"}),
    ],
)  # fmt: skip
def test_prose_status_lines_report_requirements(line: str, reported: dict[str, str]) -> None:
    found = {r.id: r.stated for r in requirement_reports(f"# Plan 01-01 Summary: X\n\n{line}\n")}
    assert found == reported


def test_prose_inside_a_fence_is_not_a_report() -> None:
    text = "# T\n\n```\nR1 satisfied\n```\n"
    assert requirement_ids(text) == []


def test_a_failed_plan_passes_nothing_it_reports() -> None:
    text = "# Plan 01-01 Summary: X\n\n**Status:** Failed\n\nThis plan completes R1.\n"
    plan = plan_facts("01-01", "x", text, {"R1"})
    assert plan.requirement_ids == ("R1",) and plan.verdict("R1") == "fail"
    assert phase_facts([("01-01", "x", text)], ("R1", "R2")).grounded("R2").plans == ()


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("## Files Created\n- **Procfile.dev** — x\n- `kiosk.service` — y\n", ["Procfile.dev", "kiosk.service"]),
        ("## Artifacts\n1. **app.webmanifest**: z\n", ["app.webmanifest"]),
        ("## Decisions\n- **kiosk.local** is the host\n", []),  # not a Files section
        ("## Files\n- **v1.2** and **Node.js**\n```\n- **in.fence**\n```\n", []),
        ("apps/web/{index.html,vite.config.ts,src/main.tsx}", ["apps/web/{index.html,vite.config.ts,src/main.tsx}"]),
        ("`{a,b}.ts`, src/**/*.{ts,tsx} and src/{a,b}", ["{a,b}.ts", "src/**/*.{ts,tsx}"]),
        ("globs /*.ts, **/*.md and *.md, but src/*.ts", ["src/*.ts"]),
        ("see {src/x.py} and .planning/phases/{06..08}/*-SUMMARY.md",
         ["src/x.py", ".planning/phases/{06..08}/*-SUMMARY.md"]),
    ],
)  # fmt: skip
def test_file_names_brace_lists_and_globs(text: str, paths: list[str]) -> None:
    assert find_paths(text) == paths
