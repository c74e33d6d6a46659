"""Paths: precision as well as recall (memory/phases/paths.py). Files Modified rows are real
files, one per row: no code expression, no library name, no host-led module path, no glob,
and no bare name the phase also names with its folder."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.phases.find import find_phase
from legion_llm.memory.phases.paths import file_paths, find_paths, is_path
from legion_llm.pipeline.compact.render import PhaseDigest
from legion_llm.pipeline.compact.run import compact_phase


@pytest.mark.parametrize(
    "token",
    ["console.log", "process.env", "assert+console.log", "res.json", "Auth.js", "postgres.js",
     "github.com/acme/tool/pkg.v2", "gopkg.in/yaml.v3", "https://example.com/app.js"],
)  # fmt: skip
def test_code_expressions_libraries_and_hosts_are_not_paths(token: str) -> None:
    assert not is_path(token) and find_paths(f"We used {token} here.") == []


@pytest.mark.parametrize(
    "token", ["console.svg", "src/app.py", "app.py", "socket.io/lib/index.js", "src/Auth.js"]
)
def test_files_of_the_same_shapes_still_are(token: str) -> None:
    assert is_path(token)


def test_a_phase_keeps_files_not_globs_nor_bare_names_it_names_in_full() -> None:
    named = ["src/types.ts", "types.ts", "src/**/*.ts", "package.json",
             "packages/web/package.json", "README.md", "docs/README.md", "index.ts"]  # fmt: skip
    assert file_paths(named) == ["src/types.ts", "package.json", "packages/web/package.json",
                                 "README.md", "docs/README.md", "index.ts"]  # fmt: skip


SUMMARY = """# Plan 03-01 Summary: Types

**Status:** Complete

## What Was Done
- Moved the shared types into src/types.ts and logged with console.log while testing.
- Every module under src/**/*.ts now imports from types.ts.

## Files Modified
- `src/types.ts` — shared types
- `src/api/client.ts` — imports the shared types
"""


def test_repair_adds_rows_only_for_real_files(tmp_path: Path) -> None:
    root = tmp_path / "p"
    folder = root / ".planning" / "phases" / "03-types"
    folder.mkdir(parents=True)
    (root / ".planning" / "ROADMAP.md").write_text("# Roadmap\n\n- [x] Phase 3: Types\n")
    (folder / "03-01-SUMMARY.md").write_text(SUMMARY)
    phase = find_phase(root, "3")
    empty = PhaseDigest(deliverables=[], decisions=[], files=[], verification=[], checks=[],
                        agents=[])  # fmt: skip
    result = compact_phase(phase, FakeEngine().enqueue(empty, empty), today=date(2026, 12, 3))
    rows = [f.path for f in result.settled.digest.files]
    assert rows == ["src/types.ts", "src/api/client.ts"]
    assert result.facts.paths == ("src/types.ts", "src/api/client.ts")
    assert result.settled.review.ok and "console.log" not in rows
