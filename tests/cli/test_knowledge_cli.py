from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.knowledge.read import PATTERNS, PREFERENCES
from legion_llm.memory.knowledge.signals import claude_code_memory_path
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

DAY = ["--today", "2026-04-01"]


@pytest.mark.subprocess
def test_add_and_recall_each_kind(cli: Any, project: Path) -> None:
    outcomes = project / ".planning/memory/OUTCOMES.md"
    outcomes.parent.mkdir(parents=True)
    outcomes.write_text(
        OUTCOMES_TEMPLATE
        + "| O-004 | 2026-03-01 | main | 1 | 01-01 | a | t | success | 2 | x | s |\n"
    )
    added = cli(
        "patterns",
        "add",
        "--pattern",
        "Contract tests first",
        "--context",
        "API phase",
        "--reuse-criteria",
        "new client",
        "--source",
        "O-004",
        "--tags",
        "api,testing",
        "--json",
        "--root",
        project,
        *DAY,
    )
    assert added.json["data"]["action"] == "added" and added.json["data"]["record"]["id"] == "P-001"
    err = cli(
        "errors",
        "add",
        "--signature",
        "Error: Cannot find module 'express'",
        "--fix",
        "npm i express",
        "--agent",
        "dev",
        "--unresolved",
        "--json",
        "--root",
        project,
        *DAY,
    )
    assert err.json["data"]["record"]["resolved"] is False
    again = cli(
        "errors",
        "add",
        "--signature",
        "Error: Cannot find module 'express'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1145:15)",
        "--fix",
        "add express to dependencies",
        "--agent",
        "dev",
        "--json",
        "--root",
        project,
        *DAY,
    )
    assert (
        again.json["data"]["action"] == "updated" and again.json["data"]["record"]["id"] == "E-001"
    )
    assert again.json["data"]["decided_by"] in ("exact", "fuzzy", "offline")
    pref = cli(
        "preferences",
        "add",
        "--decision-point",
        "review-verdict",
        "--context",
        "Phase 5",
        "--proposed",
        "PASS",
        "--user-choice",
        "accepted",
        "--signal",
        "positive",
        "--agent",
        "qa",
        "--json",
        "--root",
        project,
        *DAY,
    )
    assert pref.json["data"]["record"]["id"] == "D-001"
    for kind, extra in (
        ("patterns", ["--tags", "api"]),
        ("errors", ["--error-text", "Cannot find module 'express'"]),
        ("preferences", ["--signal", "positive"]),
    ):
        recalled = cli(kind, "recall", *extra, "--json", "--root", project, *DAY)
        assert recalled.exit_code == 0 and recalled.json["data"]["total"] == 1, kind
        assert list(recalled.json["data"]) == ["records", "total"]
        assert "id" in recalled.json["data"]["records"][0]


def test_bad_enum_is_exit_1_with_one_line(cli: Any, project: Path) -> None:
    result = cli(
        "preferences",
        "add",
        "--decision-point",
        "lunch",
        "--context",
        "c",
        "--proposed",
        "p",
        "--user-choice",
        "u",
        "--signal",
        "positive",
        "--agent",
        "a",
        "--root",
        project,
    )
    assert result.exit_code == 1
    assert (
        result.stderr.startswith("error: --decision-point must be one of review-verdict")
        and result.stderr.count("\n") == 1
    )
    assert not (project / ".planning/memory").exists()


@pytest.mark.subprocess
def test_branch_option_on_every_recall(cli: Any, project: Path) -> None:
    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "PATTERNS.md").write_text(
        PATTERNS.template
        + "| P-001 | 2026-03-01 | feat | a | b | c | d | x |\n| P-002 | 2026-03-01 | main | a | b | c | d | x |\n"
    )
    (memory / "OUTCOMES.md").write_text(
        OUTCOMES_TEMPLATE
        + "| O-001 | 2026-03-01 | feat | 1 | 01-01 | a | t | success | 2 | x | s |\n"
    )
    assert [
        r["id"]
        for r in cli(
            "patterns", "recall", "--branch", "feat", "--json", "--root", project, *DAY
        ).json["data"]["records"]
    ] == ["P-001"]
    assert (
        cli("outcomes", "recall", "--branch", "main", "--json", "--root", project, *DAY).json[
            "data"
        ]["total"]
        == 0
    )
    for kind in ("errors", "preferences"):
        assert (
            cli(kind, "recall", "--branch", "current", "--json", "--root", project).exit_code == 0
        )


def test_recall_topic_scores_across_files(cli: Any, project: Path) -> None:
    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "PATTERNS.md").write_text(
        PATTERNS.template
        + "| P-001 | 2026-03-01 | main | Cache the auth token | login flow | auth work | O-1 | auth, cache |\n"
    )
    (memory / "OUTCOMES.md").write_text(
        OUTCOMES_TEMPLATE
        + "| O-001 | 2026-03-02 | main | 1 | 01-01 | a | t | success | 2 | x | Refresh auth token on 401 |\n"
    )
    (memory / "ERRORS.md").write_text(
        "# Pitfalls\n\n## PIT-001: Token expiry\n- **Date**: 2026-03-03\n- **Tags**: security\n\nThe auth token expires after 5 minutes.\n\n---\n"
    )
    (memory / "RETRO.md").write_text(
        "# Retro\n\n## Sprint 3\nTags: auth, process\nWe lost a day to auth.\n\n## Sprint 4\nNothing about it.\n"
    )
    data = cli("recall", "auth", "--json", "--root", project).json["data"]
    scored = [(r["source"], r["id"], r["score"]) for r in data["records"]]
    assert scored == [
        ("PATTERNS.md", "P-001", 6),
        ("RETRO.md", "RETRO-1", 4),
        ("OUTCOMES.md", "O-001", 2),
        ("ERRORS.md", "PIT-001", 1),
    ]


def test_signals_in_one_call(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    memory = project / ".planning/memory"
    memory.mkdir()
    rows = "".join(
        f"| O-00{i} | 2026-03-2{i} | main | 1 | 01-0{i} | {a} | backend | success | 2 | api | s |\n"
        for i, a in enumerate(["be", "be", "fe"], start=1)
    )
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + rows)
    (memory / "PREFERENCES.md").write_text(PREFERENCES.template + (
        "| D-001 | 2026-03-01 | main | review-verdict | c | p | u | positive | be | r |\n"
        "| D-002 | 2026-03-01 | main | manual-edit | c | p | u | corrective | be | r |\n"
        "| D-003 | 2026-03-01 | main | fix-acceptance | c | p | u | negative | fe | r |\n"
    ))  # fmt: skip
    (memory / "PATTERNS.md").write_text(
        PATTERNS.template
        + "| P-001 | 2026-03-01 | main | p | c | r | O-1 | backend |\n| P-002 | 2026-03-01 | main | q | c | r | O-2 | frontend |\n"
    )
    home = tmp_path / "home"
    note = claude_code_memory_path(project, home)
    note.parent.mkdir(parents=True)
    note.write_text("- User prefers small pull requests\n")
    monkeypatch.setenv("HOME", str(home))
    data = cli(
        "signals", "--task-types", "backend", "--agents", "be,fe", "--json", "--root", project, *DAY
    ).json["data"]
    assert [s["agent"] for s in data["agent_scores"]] == ["be"]
    assert data["archetype_scores"]["backend"]["totalOutcomes"] == 3
    assert data["preference_boosts"]["be"]["preference_boost"] == 0.75
    assert data["preference_boosts"]["fe"]["preference_boost"] == -0.5
    assert [p["id"] for p in data["patterns"]] == ["P-001"]
    assert data["claude_code"] == {"path": str(note), "note": "- User prefers small pull requests"}


def test_signals_with_every_file_missing_or_broken(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    empty = cli("signals", "--task-types", "backend", "--json", "--root", project)
    assert empty.exit_code == 0 and empty.stderr == "" and empty.json["warnings"] == []
    data = empty.json["data"]
    assert (
        data["agent_scores"],
        data["archetype_scores"],
        data["preference_boosts"],
        data["patterns"],
    ) == ([], {}, {}, [])
    memory = project / ".planning/memory"
    memory.mkdir()
    for name in ("OUTCOMES.md", "PATTERNS.md", "PREFERENCES.md"):
        (memory / name).write_bytes(b"| x |\n\xff\xfe garbage\n")
    broken = cli("signals", "--json", "--root", project)
    assert broken.exit_code == 0
    assert sorted(broken.json["warnings"]) == sorted(
        warning
        for n in ("OUTCOMES.md", "PATTERNS.md", "PREFERENCES.md")
        for warning in (
            f"Warning: {n} line 2 is not UTF-8 text (byte 0xff); that line is skipped.",
            f"Warning: {n} could not be parsed. Proceeding without memory.",
        )
    )


@pytest.mark.subprocess
def test_nothing_is_written_under_home(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    note = claude_code_memory_path(project, home)
    note.parent.mkdir(parents=True)
    note.write_text("advice\n")
    monkeypatch.setenv("HOME", str(home))

    def snapshot() -> dict[str, tuple[int, int]]:
        return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in home.rglob("*")}

    before = snapshot()
    for args in (
        ["signals"],
        ["recall", "x"],
        ["patterns", "add", "--pattern", "p", "--context", "c", "--reuse-criteria", "r"],
        [
            "outcomes",
            "add",
            "--phase",
            "1",
            "--plan",
            "01-01",
            "--agent",
            "a",
            "--outcome",
            "success",
            "--summary",
            "s",
        ],
    ):
        assert cli(*args, "--root", project).exit_code == 0
    assert snapshot() == before
    assert os.listdir(home) == [".claude"]
