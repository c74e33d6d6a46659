"""Input that would be stored wrong is refused: one line, exit 1, nothing written. A catalog that
is not one, a phase that is not a number, a pattern's source naming an outcome that does not
exist; and the same pattern twice is one row, not two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE

ADD = ["outcomes", "add", "--plan", "02-01", "--agent", "dev", "--outcome", "success"]
ROW = "| O-001 | 2026-03-01 | main | 1 | 01-01 | dev | backend | success | 2 | api | first |\n"


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def refused(result: Any, *words: str) -> None:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for word in words:
        assert word in result.stderr


@pytest.fixture
def stored(project: Path) -> Path:
    """A project with one outcome, O-001, stored."""
    memory = project / ".planning/memory"
    memory.mkdir(parents=True)
    (memory / "OUTCOMES.md").write_text(OUTCOMES_TEMPLATE + ROW)
    return project


@pytest.mark.parametrize("phase", ["abc", "-1", "", "3a", "1..2", "٣"])
def test_a_phase_that_is_not_a_phase_number_is_refused(cli: Any, stored: Path, phase: str) -> None:
    before = files_under(stored)
    result = cli(*ADD, "--phase", phase, "--summary", "s", "--root", stored)
    refused(result, "--phase")
    assert files_under(stored) == before


@pytest.mark.parametrize("phase", ["4", "04", "6.1", "12.3.1"])
def test_a_phase_number_is_stored(cli: Any, stored: Path, phase: str) -> None:
    result = cli(*ADD, "--phase", phase, "--summary", "s", "--root", stored, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["record"]["phase"] == phase


def _catalogs(tmp: Path) -> dict[str, Path]:
    folder = tmp / "a-folder"
    folder.mkdir()
    binary = tmp / "binary.md"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    nul = tmp / "nul.md"
    nul.write_bytes(b"### Engineering Division\x00\n")
    prose = tmp / "prose.md"
    prose.write_text("# Notes\n\nNo agents here.\n")
    return {
        "missing": tmp / "nonexistent/CATALOG.md",
        "folder": folder,
        "binary": binary,
        "nul": nul,
        "prose": prose,
    }


@pytest.mark.parametrize("kind", ["missing", "folder", "binary", "nul", "prose"])
def test_a_catalog_that_is_not_one_is_refused(
    cli: Any, stored: Path, tmp_path_factory: pytest.TempPathFactory, kind: str
) -> None:
    catalog = _catalogs(tmp_path_factory.mktemp("catalogs"))[kind]
    before = files_under(stored)
    result = cli(*ADD, "--phase", "2", "--summary", "s", "--catalog", catalog, "--root", stored)
    refused(result, "--catalog", str(catalog))
    assert files_under(stored) == before


def test_a_catalog_named_in_the_environment_is_checked_too(
    cli: Any, stored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEGION_CATALOG", str(stored / "no-such-catalog.md"))
    before = files_under(stored)
    refused(cli(*ADD, "--phase", "2", "--summary", "s", "--root", stored), "$LEGION_CATALOG")
    assert files_under(stored) == before


def test_no_catalog_at_the_default_path_is_fine(cli: Any, stored: Path) -> None:
    result = cli(*ADD, "--phase", "2", "--summary", "s", "--root", stored, "--json")
    assert result.exit_code == 0 and result.json["data"]["record"]["task_type"] == "general"


PATTERN = ["patterns", "add", "--context", "Phase 2", "--reuse-criteria", "Any schema change"]


@pytest.mark.parametrize("source", ["O-999", "o-2", "O-001, O-999"])
def test_a_pattern_source_naming_no_outcome_is_refused(cli: Any, stored: Path, source: str) -> None:
    before = files_under(stored)
    result = cli(*PATTERN, "--pattern", "Split migrations", "--source", source, "--root", stored)
    refused(result, "--source")
    assert files_under(stored) == before
    assert not (stored / ".planning/memory/PATTERNS.md").exists()


@pytest.mark.parametrize("source", ["O-001", "o-1", "the phase 2 retro", "", "O-001, a retro"])
def test_a_pattern_source_that_exists_or_is_text_is_kept(
    cli: Any, stored: Path, source: str
) -> None:
    result = cli(*PATTERN, "--pattern", "Split", "--source", source, "--root", stored, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["record"]["source"] == source


def test_an_archived_outcome_is_a_source(cli: Any, stored: Path) -> None:
    archive = stored / ".planning/memory/ARCHIVE.md"
    archive.write_text(OUTCOMES_TEMPLATE + ROW.replace("O-001", "O-007"))
    result = cli(*PATTERN, "--pattern", "Split", "--source", "O-007", "--root", stored, "--json")
    assert result.exit_code == 0, result.stderr


def test_the_same_pattern_twice_is_one_row(cli: Any, stored: Path) -> None:
    first = cli(*PATTERN, "--pattern", "Split migrations per table", "--root", stored, "--json")
    assert first.json["data"]["action"] == "added"
    path = stored / ".planning/memory/PATTERNS.md"
    before = path.read_bytes()
    for text in ("Split migrations per table", "split  migrations per table."):
        again = cli(*PATTERN, "--pattern", text, "--root", stored, "--json")
        assert again.exit_code == 0, again.stderr
        assert again.json["data"]["action"] == "existing"
        assert again.json["data"]["record"]["id"] == "P-001"
    human = cli(*PATTERN, "--pattern", "Split migrations per table", "--root", stored)
    assert human.stdout.startswith("Already known as P-001")
    assert path.read_bytes() == before
    other = cli(*PATTERN, "--pattern", "Split migrations per schema", "--root", stored, "--json")
    assert other.json["data"]["action"] == "added" and other.json["data"]["record"]["id"] == "P-002"
