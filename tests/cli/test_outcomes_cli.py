from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

RECORD_KEYS = [
    "id", "date", "branch", "phase", "plan", "agent", "task_type", "outcome", "importance", "tags",
    "summary", "recency_weight", "decay_score",
]  # fmt: skip
ADD = [
    "outcomes",
    "add",
    "--phase",
    "2",
    "--plan",
    "02-01",
    "--agent",
    "dev",
    "--outcome",
    "success",
]


def add(cli: Any, root: Path, summary: str = "did it", *extra: str) -> Any:
    return cli(*ADD, "--summary", summary, "--root", root, "--today", "2026-03-10", *extra)


def write_rows(root: Path, count: int, when: str = "2026-03-01") -> Path:
    path = root / ".planning/memory/OUTCOMES.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(
        f"| O-{i:03d} | {when} | main | 1 | 01-01 | agent-{i % 3} | backend | success | 2 | api | row {i} |\n"
        for i in range(1, count + 1)
    )
    path.write_text(OUTCOMES_TEMPLATE + rows)
    return path


@pytest.mark.subprocess
def test_add_then_recall_json_envelope(cli: Any, project: Path) -> None:
    added = add(cli, project, "first | one", "--json", "--tags", "api, db")
    assert added.exit_code == 0, added.stderr
    assert added.json["ok"] is True and added.json["command"] == "outcomes add"
    assert added.json["data"]["action"] == "added"
    assert added.json["data"]["record"]["id"] == "O-001"
    recalled = cli("outcomes", "recall", "--json", "--root", project, "--today", "2026-03-10")
    envelope = recalled.json
    assert list(envelope) == ["ok", "command", "data", "warnings"]
    assert envelope["data"]["total"] == 1
    [record] = envelope["data"]["records"]
    assert list(record) == RECORD_KEYS
    assert record["summary"] == "first | one" and record["tags"] == ["api", "db"]
    assert record["decay_score"] == 3.0 and record["recency_weight"] == 1.0


@pytest.mark.subprocess
def test_human_output_is_a_table(cli: Any, project: Path) -> None:
    add(cli, project, "visible summary")
    result = cli("outcomes", "recall", "--root", project, "--today", "2026-03-10")
    assert result.exit_code == 0
    assert "O-001" in result.stdout and "visible summary" in " ".join(result.stdout.split())


def test_missing_memory_is_empty_silent_and_creates_nothing(cli: Any, project: Path) -> None:
    for args in (["outcomes", "recall"], ["briefing"], ["outcomes", "agent-scores"], ["prune"]):
        result = cli(*args, "--json", "--root", project)
        assert result.exit_code == 0 and result.stderr == ""
        assert result.json["ok"] is True
    assert not (project / ".planning/memory").exists()


def test_unparseable_file_warns_once_and_stays_untouched(cli: Any, project: Path) -> None:
    path = project / ".planning/memory/OUTCOMES.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"| a | b |\ngarbage\n")
    result = cli("outcomes", "recall", "--json", "--root", project)
    assert result.exit_code == 0
    assert result.stderr == "Warning: OUTCOMES.md could not be parsed. Proceeding without memory.\n"
    assert result.json["data"] == {"records": [], "total": 0}
    assert result.json["warnings"] == [result.stderr.strip()]
    assert path.read_bytes() == b"| a | b |\ngarbage\n"


def test_prune_note_over_200_records_once(cli: Any, project: Path) -> None:
    write_rows(project, 201)
    result = cli(
        "outcomes", "recall", "--json", "--limit", "3", "--root", project, "--today", "2026-03-02"
    )
    assert len(result.json["data"]["records"]) == 3
    [note] = result.json["warnings"]
    assert note.startswith("OUTCOMES.md has 201 records.") and "memory.auto_prune" in note
    assert result.stderr.count("OUTCOMES.md has 201 records") == 1
    quiet = cli("outcomes", "recall", "--json", "--root", write_rows(project, 200).parents[2])
    assert quiet.json["warnings"] == []


@pytest.mark.subprocess
def test_bad_input_usage_and_write_failure_exit_codes(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = cli(*ADD[:-1], "maybe", "--summary", "x", "--root", project)
    assert bad.exit_code == 1
    assert bad.stderr == "error: --outcome must be one of success, partial, failed, not 'maybe'\n"
    usage = cli("outcomes", "recall", "--limit", "0", "--root", project)
    assert (
        usage.exit_code == 2 and usage.stderr.count("\n") == 1 and "Traceback" not in usage.stderr
    )
    assert cli("outcomes", "recall", "--today", "yesterday").exit_code == 2
    assert cli("outcomes", "recall", "--root", project / "missing").exit_code == 1

    def disk_full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    failed = add(cli, project, "keep me")
    assert failed.exit_code == 3
    assert failed.stderr.startswith("error: could not write") and failed.stderr.count("\n") == 1
    assert "| O-001 |" in failed.stdout and "keep me" in failed.stdout
    as_json = add(cli, project, "keep me", "--json")
    assert as_json.exit_code == 3 and as_json.json["ok"] is False
    assert as_json.json["data"]["record"]["summary"] == "keep me"


@pytest.mark.subprocess
def test_root_is_found_upward(cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add(cli, project)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert cli("outcomes", "recall", "--json").json["data"]["total"] == 1


@pytest.mark.subprocess
def test_branch_filters(cli: Any, project: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "feature/memory", str(project)], check=True)
    add(cli, project)  # branch from git
    path = project / ".planning/memory/OUTCOMES.md"
    path.write_text(
        path.read_text()
        + "| O-002 | 2026-03-09 | dev | 1 | 01-01 | dev | t | success | 2 | x | y |\n"
    )

    def ids(branch: str) -> list[str]:
        data = cli(
            "outcomes",
            "recall",
            "--json",
            "--branch",
            branch,
            "--root",
            project,
            "--today",
            "2026-03-10",
        ).json
        return [r["id"] for r in data["data"]["records"]]

    assert ids("current") == ["O-001"]
    assert ids("dev") == ["O-002"]
    assert ids("all") == ["O-001", "O-002"]


def test_scores_briefing_and_prune_commands(cli: Any, project: Path) -> None:
    write_rows(project, 6)
    scores = cli(
        "outcomes",
        "agent-scores",
        "--task-types",
        "backend",
        "--json",
        "--root",
        project,
        "--today",
        "2026-03-02",
    )
    assert [s["agent"] for s in scores.json["data"]["scores"]] == ["agent-0", "agent-1", "agent-2"]
    types = cli("outcomes", "archetypes", "--json", "--root", project, "--today", "2026-03-02")
    assert types.json["data"]["archetypes"]["backend"]["totalOutcomes"] == 6
    brief = cli("briefing", "--json", "--root", project, "--today", "2026-03-02")
    assert (
        brief.json["data"]["total_records"] == 6 and len(brief.json["data"]["recent_outcomes"]) == 5
    )
    pruned = cli("prune", "--json", "--root", project, "--today", "2026-12-01")
    assert pruned.exit_code == 0 and len(pruned.json["data"]["archived"]) == 6
    assert "not over the threshold" in pruned.stderr


@pytest.mark.subprocess
def test_auto_prune_after_store_when_enabled(cli: Any, project: Path) -> None:
    write_rows(project, 5, when="2025-01-01")
    (project / "settings.json").write_text('{"memory": {"auto_prune": true, "prune_threshold": 5}}')
    result = add(cli, project, "sixth", "--json")
    assert result.exit_code == 0
    assert result.json["data"]["auto_prune"]["archived"] == 5
    left = cli("outcomes", "recall", "--json", "--root", project, "--today", "2026-03-10").json
    assert [r["id"] for r in left["data"]["records"]] == ["O-006"]


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [
        ["outcomes", "recall"],
        ["recall", "auth"],
        ["signals", "--task-types", "backend"],
        ["briefing"],
    ],
)
def test_plain_commands_import_no_llm_library(project: Path, command: list[str]) -> None:
    code = (
        "import sys; from legion_llm.entry import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
        "    heavy = [m for m in ('anthropic', 'tiktoken', 'tenacity', 'httpx2') if m in sys.modules]\n"
        "    print('HEAVY', heavy, file=sys.stderr); raise\n"
    )
    write_rows(project, 3)
    done = subprocess.run(
        [sys.executable, "-c", code, *command, "--json", "--root", str(project)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr


@pytest.mark.subprocess
def test_console_script_entry_point(project: Path) -> None:
    write_rows(project, 3)
    script = Path(sys.executable).with_name("legion-llm")
    done = subprocess.run(
        [script, "outcomes", "recall", "--json", "--root", project], capture_output=True, text=True
    )
    assert done.returncode == 0 and '"total": 3' in done.stdout


@pytest.mark.subprocess
def test_task_type_from_catalog_option_env_and_default_path(
    cli: Any, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = "### Engineering Division\n\n| ID | File | Specialty | Task Types |\n|---|---|---|---|\n| {agent} | a.md | s | {types} |\n"
    default = project / "skills/agent-registry/CATALOG.md"
    default.parent.mkdir(parents=True)
    default.write_text(catalog.format(agent="dev", types="from-default, x"))
    elsewhere = tmp_path / "other.md"
    elsewhere.write_text(catalog.format(agent="dev", types="from-env"))
    given = tmp_path / "given.md"
    given.write_text(catalog.format(agent="dev", types="from-option"))

    def task_type(*extra: str) -> str:
        result = cli(*ADD, "--summary", "s", "--json", "--root", project, *extra)
        assert result.exit_code == 0, result.stderr
        return str(result.json["data"]["record"]["task_type"])

    assert task_type() == "from-default"
    monkeypatch.setenv("LEGION_CATALOG", str(elsewhere))
    assert task_type() == "from-env"
    assert task_type("--catalog", str(given)) == "from-option"
    assert task_type("--task-type", "explicit") == "explicit"


@pytest.mark.subprocess
def test_branch_is_unknown_outside_git(cli: Any, project: Path) -> None:
    result = add(cli, project, "s", "--json")
    assert result.json["data"]["record"]["branch"] == "unknown"


@pytest.mark.subprocess
def test_brackets_in_memory_text_are_shown_not_interpreted(cli: Any, project: Path) -> None:
    added = cli("outcomes", "add", "--phase", "2", "--plan", "02-01", "--agent", "[/red]", "--outcome", "success",
                "--summary", "[/bold] and [red]kept[/red]", "--root", project)  # fmt: skip
    assert added.exit_code == 0, added.stderr
    for args in (["outcomes", "recall"], ["briefing"]):
        shown = cli(*args, "--root", project)
        assert shown.exit_code == 0, shown.stderr
    recalled = cli("outcomes", "recall", "--root", project)
    assert "[red]kept[/red]" in " ".join(recalled.stdout.split())


@pytest.mark.subprocess
def test_a_memory_folder_that_cannot_be_made_prints_the_record(cli: Any, project: Path) -> None:
    (project / ".planning/memory").write_text("a file where the folder should be")
    failed = add(cli, project, "keep me too", "--json")
    assert failed.exit_code == 3
    assert failed.json["ok"] is False and failed.json["data"]["record"]["summary"] == "keep me too"
    human = add(cli, project, "keep me too")
    assert human.exit_code == 3 and "keep me too" in human.stdout and human.stderr.count("\n") == 1


def test_usage_errors_with_json_still_print_one_envelope(cli: Any, project: Path) -> None:
    result = cli("outcomes", "recall", "--limit", "0", "--json", "--root", project)
    assert result.exit_code == 2
    assert (
        result.json["ok"] is False and "greater than or equal to 1" in result.json["data"]["error"]
    )


@pytest.mark.subprocess
def test_settings_warnings_reach_recall_and_add(cli: Any, project: Path) -> None:
    (project / "settings.json").write_text("{broken")
    added = add(cli, project, "s", "--json")
    recalled = cli("outcomes", "recall", "--json", "--root", project)
    for result in (added, recalled):
        assert result.exit_code == 0
        assert any("settings.json is not valid JSON" in w for w in result.json["warnings"])


def test_agent_that_names_nobody_is_refused(cli: Any, project: Path) -> None:
    result = cli(
        "outcomes",
        "add",
        "--phase",
        "1",
        "--plan",
        "01-01",
        "--agent",
        ", ,",
        "--outcome",
        "success",
        "--summary",
        "s",
        "--root",
        project,
    )
    assert result.exit_code == 1 and "--agent must name an agent" in result.stderr
