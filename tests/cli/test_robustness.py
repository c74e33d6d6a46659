"""Bad input from the outside world: one clear line, nothing written, never an internal error."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.signatures.features import MAX_LINE, MAX_TEXT, bounded
from tests.conftest import FIXTURES

BILLING = FIXTURES / "phases" / "legion-spec-billing-exports"


def copy_phase(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(BILLING, target)
    return target


def test_compact_refuses_a_phase_folder_of_another_project(cli: Any, tmp_path: Path) -> None:
    mine, other = copy_phase(tmp_path, "mine"), copy_phase(tmp_path, "other")
    folder = other / ".planning/phases/03-billing-exports"
    result = cli("compact", folder, "--engine", "offline", "--root", mine)
    assert result.exit_code == 1
    assert "outside the project root" in result.stderr and result.stderr.count("\n") == 1
    assert not (folder / "03-COMPACTED.md").exists()


def test_a_summary_that_is_not_utf8_is_named_in_one_line(cli: Any, tmp_path: Path) -> None:
    root = copy_phase(tmp_path, "p")
    bad = root / ".planning/phases/03-billing-exports/03-01-SUMMARY.md"
    bad.write_bytes(bad.read_bytes() + b"\nCaf\xe9\n")
    for args in (["compact", "3", "--dry-run", "--engine", "offline"], ["phase-context", "3"]):
        result = cli(*args, "--root", root)
        assert result.exit_code == 1, result.stderr
        assert (
            result.stderr.startswith("error: ")
            and "03-01-SUMMARY.md is not UTF-8 text" in result.stderr
        )
        assert "internal error" not in result.stderr


def test_errors_match_takes_bytes_that_are_not_utf8(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Stdin(io.StringIO):
        buffer = io.BytesIO(b"KeyError: \xff\xfe bad\n")

    monkeypatch.setattr("sys.stdin", Stdin())
    piped = cli("errors", "match", "--stdin", "--json", "--engine", "offline", "--root", project)
    assert piped.exit_code == 0 and piped.json["data"]["matches"] == []
    argv = cli(
        "errors", "match", "KeyError: \udcff", "--json", "--engine", "offline", "--root", project
    )
    assert argv.exit_code == 0, argv.stderr


def test_huge_error_text_is_bounded_at_both_ends() -> None:
    text = (
        "error: the first line names it\n"
        + "x" * (3 * MAX_TEXT)
        + "\nFinalError: the last line too"
    )
    kept = bounded(text)
    assert len(kept) <= MAX_TEXT + MAX_LINE
    assert kept.startswith("error: the first line names it") and kept.endswith(
        "FinalError: the last line too"
    )
    assert all(len(line) <= MAX_LINE for line in kept.split("\n"))


DEEP = "[" * 100_000 + "]" * 100_000  # JSON past the decoder's recursion limit


@pytest.mark.subprocess
def test_a_deeply_nested_settings_file_is_one_warning(cli: Any, demo_project: Path) -> None:
    """settings.json comes with the repository: a hostile one must not stop every write."""
    (demo_project / "settings.json").write_text(DEEP, encoding="utf-8")
    result = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", "stored", "--root", demo_project)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "Warning: settings.json is nested too deeply" in result.stderr


def test_a_deeply_nested_host_proposal_is_one_error_line(cli: Any, demo_project: Path) -> None:
    """A proposal comes from an agent (a model): as untrusted as any file."""
    proposal = demo_project / "proposal.json"
    proposal.write_text(DEEP, encoding="utf-8")
    result = cli(
        "compact", "3", "--proposal", proposal, "--ticket", "lt2.x", "--root", demo_project
    )
    assert result.exit_code == 1, result.stderr
    assert result.stderr.startswith("error: --proposal") and "nested deeper" in result.stderr
    assert "internal error" not in result.stderr and result.stderr.count("\n") == 1
