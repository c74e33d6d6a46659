"""Helpers shared by the compaction tests: fixture projects copied to a temporary folder."""

from __future__ import annotations

import hashlib
import shutil
from datetime import date
from pathlib import Path

from legion_llm.memory.phases.find import Phase, find_phase
from legion_llm.pipeline.compact.render import PhaseDigest
from legion_llm.pipeline.compact.run import header_for, offline_digest, prepare
from tests.conftest import FIXTURES

TODAY = date(2026, 11, 30)


def copy_case(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / "phases" / name, target)
    return target


def phase_of(name: str, tmp_path: Path, spec: str) -> Phase:
    return find_phase(copy_case(name, tmp_path), spec)


def good_digest(phase: Phase, level: int = 1) -> PhaseDigest:
    """A complete, verified proposal (what the offline step would answer)."""
    prep = prepare(phase)
    return offline_digest(prep, header_for(prep, TODAY), level)


def fingerprint(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` except a COMPACTED.md."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith("-COMPACTED.md")
    }


def without_requirement(digest: PhaseDigest, rid: str) -> PhaseDigest:
    kept = [r for r in digest.verification if r.requirement_id != rid]
    return digest.model_copy(update={"verification": kept})


def without_path(digest: PhaseDigest, path: str) -> PhaseDigest:
    kept = [f for f in digest.files if f.path != path]
    return digest.model_copy(update={"files": kept})
