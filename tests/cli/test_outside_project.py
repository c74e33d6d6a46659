"""Outside a project (no `.planning/` in the current folder or above it): a write is refused
with a line that says how to start one (`legion-llm init`, or --root), a read says there is no
project (exit 0, as for missing memory: a session starts the same), and nothing is created.
`legion-llm init` starts one, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.entry import run

WRITES = {
    "outcomes add": ["outcomes", "add", "--phase", "1", "--plan", "01-01", "--agent", "dev",
                     "--outcome", "success", "--summary", "s"],
    "patterns add": ["patterns", "add", "--pattern", "p", "--context", "c", "--reuse-criteria", "r"],
    "errors add": ["errors", "add", "--signature", "ValueError: x", "--fix", "f", "--agent", "dev",
                   "--engine", "offline"],
    "preferences add": ["preferences", "add", "--decision-point", "review-verdict", "--context",
                        "c", "--proposed", "p", "--user-choice", "u", "--signal", "positive",
                        "--agent", "dev"],
}  # fmt: skip


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder, not in any project, as the current folder."""
    folder = tmp_path / "not-a-project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("name", WRITES)
def test_a_write_outside_a_project_is_refused_and_creates_nothing(
    cli: Any, elsewhere: Path, name: str
) -> None:
    for extra in ([], ["--json"]):
        result = cli(*WRITES[name], *extra)
        assert result.exit_code == 1, result.stderr
        line = result.stderr if not extra else result.json["data"]["error"] + "\n"
        assert "no .planning/" in line and "legion-llm init" in line and "--root" in line
        assert line.count("\n") == 1 and "Traceback" not in result.stderr
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("name", WRITES)
def test_a_write_with_the_root_named_makes_the_memory_folder(
    cli: Any, elsewhere: Path, name: str
) -> None:
    result = cli(*WRITES[name], "--root", elsewhere)
    assert result.exit_code == 0, result.stderr
    assert (elsewhere / ".planning/memory").is_dir()


def test_a_read_outside_a_project_says_there_is_none(cli: Any, elsewhere: Path) -> None:
    human = cli("briefing")
    assert human.exit_code == 0 and human.stderr == ""
    assert human.stdout.startswith("No project here: no .planning/ in ")
    assert "outcome records" not in human.stdout and human.stdout.count("\n") == 1
    as_json = cli("briefing", "--json")
    assert as_json.exit_code == 0 and as_json.json["ok"] is True
    assert as_json.json["warnings"] == [human.stdout.strip()]
    assert as_json.json["data"]["total_records"] == 0
    named = cli("briefing", "--root", elsewhere)
    assert named.exit_code == 0 and named.stdout.startswith(
        f"No project here: no .planning/ in {elsewhere}, so"
    )
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_the_fast_path_and_typer_say_it_alike(
    elsewhere: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    said = []
    for fast in (True, False):
        capsys.readouterr()
        code = run(["briefing", *extra], fast=fast)
        out = capsys.readouterr()
        said.append((code, out.out, out.err))
    assert said[0] == said[1] and "No project here" in said[0][1]


def test_inside_a_project_a_briefing_is_a_briefing(cli: Any, project: Path) -> None:
    result = cli("briefing", "--root", project)
    assert result.stdout.startswith("Memory briefing: 0 outcome records")


def test_init_starts_a_project_once(cli: Any, elsewhere: Path) -> None:
    made = cli("init")
    assert made.exit_code == 0, made.stderr
    assert (
        made.stdout
        == f"Made .planning/ and .planning/memory/ in {elsewhere}: memory commands now store here\n"
    )
    assert sorted(str(p.relative_to(elsewhere)) for p in elsewhere.rglob("*")) == [
        ".planning",
        ".planning/memory",
    ]
    again = cli("init", "--json")
    assert again.exit_code == 0 and again.json["data"] == {"root": str(elsewhere), "made": []}
    assert cli("init").stdout == f"{elsewhere} already holds .planning/memory/; nothing was made\n"
    stored = cli(*WRITES["outcomes add"], "--json")
    assert stored.exit_code == 0 and stored.json["data"]["record"]["id"] == "O-001"


def test_init_in_a_folder_of_a_project_completes_that_project(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    made = cli("init", "--json")
    assert made.exit_code == 0 and made.json["data"] == {
        "root": str(project.resolve()),
        "made": [".planning/memory/"],
    }
    assert not (deep / ".planning").exists() and (project / ".planning/memory").is_dir()


def test_init_with_a_root_makes_it_there(cli: Any, elsewhere: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert cli("init", "--root", other).exit_code == 0
    assert (other / ".planning/memory").is_dir() and list(elsewhere.iterdir()) == []


def test_init_through_a_link_out_of_the_root_is_refused(cli: Any, tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / ".planning").symlink_to(outside)
    result = cli("init", "--root", root)
    assert result.exit_code != 0 and result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1 and list(outside.iterdir()) == []


READS = [
    ["outcomes", "recall"],
    ["outcomes", "agent-scores"],
    ["outcomes", "archetypes"],
    ["patterns", "recall"],
    ["errors", "recall"],
    ["preferences", "recall"],
    ["recall", "auth"],
    ["signals", "--task-types", "backend"],
]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_every_memory_read_outside_a_project_says_so(
    cli: Any, elsewhere: Path, args: list[str]
) -> None:
    human = cli(*args)
    assert human.exit_code == 0
    assert human.stderr.startswith(f"No project here: no .planning/ in {elsewhere}, so no memory")
    as_json = cli(*args, "--json")
    assert as_json.exit_code == 0 and as_json.json["ok"] is True
    assert as_json.json["warnings"][0] == human.stderr.splitlines()[0]
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("args", READS[:1], ids=" ".join)
def test_the_fast_path_and_typer_say_the_read_alike(
    elsewhere: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    said = []
    for fast in (True, False):
        capsys.readouterr()
        code = run([*args, "--today", "2026-06-15"], fast=fast)
        out = capsys.readouterr()
        said.append((code, out.out, out.err))
    assert said[0] == said[1] and "No project here" in said[0][2]
