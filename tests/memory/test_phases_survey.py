"""The pass over every phase (the Stop hook, after every answer) looks at each phase folder and
each ROADMAP once: linear in the number of folders, and the same phases as loading each folder
on its own (issue 34, point 5; benchmarks/bench_stop_hook.py measures it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from legion_llm.memory.phases import find
from legion_llm.memory.phases.find import (
    completed_without_compaction,
    load_phase,
    phase_folders,
    phase_specs,
)
from tests.conftest import FIXTURES

PHASES = FIXTURES / "phases"
SUMMARY = "# Summary\n\n" + "Done. " * 80 + "\n"


def many_phases(root: Path, count: int) -> None:
    phases = root / ".planning" / "phases"
    lines, details = [], []
    for n in range(1, count + 1):
        folder = phases / f"{n:02d}-feature-{n}"
        folder.mkdir(parents=True)
        (folder / f"{n:02d}-01-SUMMARY.md").write_text(SUMMARY, encoding="utf-8")
        lines.append(f"- [x] Phase {n}: Feature {n}")
        details.append(f"### Phase {n}: Feature {n}\n**Requirements**: F{n}-01\n")
    text = "# Roadmap\n\n" + "\n".join(lines) + "\n\n" + "\n".join(details)
    (root / ".planning" / "ROADMAP.md").write_text(text, encoding="utf-8")


def test_each_roadmap_is_read_once_and_no_folder_lists_its_siblings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, every folder read and parsed the whole ROADMAP again and listed its parent's
    folders again: N folders cost N ROADMAP parses and N^2 folder checks."""
    many_phases(tmp_path, 40)
    reads: list[Path] = []
    real_read = find.read_text
    monkeypatch.setattr(find, "read_text", lambda path: reads.append(path) or real_read(path))
    monkeypatch.setattr(find, "_twins", lambda *_: pytest.fail("a folder listed its siblings"))
    found = completed_without_compaction(tmp_path)
    assert len(found) == 40
    assert [p.name for p in found[:2]] == ["Feature 1", "Feature 2"]
    assert found[6].roadmap.requirement_ids == ("F7-01",)
    assert reads.count(tmp_path / ".planning" / "ROADMAP.md") == 1


@pytest.mark.parametrize(
    "case", sorted(p.name for p in PHASES.iterdir() if (p / ".planning").is_dir())
)
def test_the_pass_over_all_phases_reads_each_as_loading_it_alone_does(
    case: str, tmp_path: Path
) -> None:
    root = tmp_path / case
    shutil.copytree(PHASES / case, root)
    planning = root / ".planning"
    folders = phase_folders(planning)
    keys = [find.phase_key(find.folder_number(f.name) or "") for f in folders]
    alone = [
        load_phase(f, planning, require_name=keys.count(k) > 1)
        for f, k in zip(folders, keys, strict=True)
    ]
    together = completed_without_compaction(root)
    wanted = [p for p in alone if p.folder in {q.folder for q in together}]
    assert together == wanted
    assert len(phase_specs(together, root)) == len(together)
