"""Issue 17 (attack pass), the outcome log: prune moves table rows only (point 1), one byte that
is not UTF-8 hides nothing else and is never lost (point 3), and distill's grouping, now linear,
still links what the pairwise rule linked (point 8; its speed: benchmarks/bench_hardening.py)."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.config import Settings
from legion_llm.memory.outcomes.distill_candidates import (
    DistillCandidate,
    phase_tags,
    select_candidates,
    specific_tags,
)
from legion_llm.memory.outcomes.prune import prune
from legion_llm.memory.outcomes.read import OUTCOMES_TEMPLATE, read_outcomes
from legion_llm.memory.phases.planning import phase_key
from legion_llm.project import MemoryPaths
from legion_llm.records import OutcomeRecord

TODAY = date(2026, 6, 30)


def row(n: int, when: str, importance: int, summary: str) -> str:
    return (
        f"| O-{n:03d} | {when} | main | 1 | 01-0{n} | dev | backend | success | {importance} | "
        f"api | {summary} |\n"
    )


OLD = row(1, "2026-01-01", 2, "Old and low: pruned")
KEPT = row(2, "2026-06-20", 2, "Recent: kept")
NOTES = (
    "\n## Notes\n\nThe row that prune moved, quoted while debugging:\n\n```text\n"
    + OLD
    + "```\n\nA table of examples (not outcomes):\n\n| Example | Note |\n|---|---|\n"
    + OLD
)


@pytest.fixture
def paths(tmp_path: Path) -> MemoryPaths:
    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True)
    return paths


# ---------------------------------------------------------------- 1. prune moves rows only


def test_prune_keeps_text_that_repeats_a_moved_row(paths: MemoryPaths) -> None:
    paths.outcomes.write_text(OUTCOMES_TEMPLATE + OLD + KEPT + NOTES)
    report = prune(paths, Settings(), TODAY)
    assert report.applied and report.archived == 1
    assert paths.outcomes.read_text() == OUTCOMES_TEMPLATE + KEPT + NOTES
    assert [r.id for r in read_outcomes(paths.archive).records] == ["O-001"]
    assert [r.id for r in read_outcomes(paths.outcomes).records] == ["O-002"]


def test_a_fenced_row_is_not_a_record(paths: MemoryPaths) -> None:
    fenced = "\n```\n" + row(7, "2026-01-01", 2, "an example in a code block") + "```\n"
    paths.outcomes.write_text(OUTCOMES_TEMPLATE + KEPT + fenced)
    assert [r.id for r in read_outcomes(paths.outcomes).records] == ["O-002"]


@pytest.mark.subprocess
def test_a_store_after_a_fenced_block_goes_into_the_table(paths: MemoryPaths, cli: Any) -> None:
    fenced = "\n```\n" + row(7, "2026-01-01", 2, "an example in a code block") + "```\n"
    paths.outcomes.write_text(OUTCOMES_TEMPLATE + KEPT + fenced)
    added = cli(
        "outcomes", "add", "--root", paths.root, "--phase", "2", "--plan", "02-01",
        "--agent", "dev", "--outcome", "success", "--summary", "new", "--task-type", "backend",
    )  # fmt: skip
    assert added.exit_code == 0
    text = paths.outcomes.read_text()
    assert text.endswith(fenced)
    assert [r.summary for r in read_outcomes(paths.outcomes).records] == ["Recent: kept", "new"]


# ---------------------------------------------------------------- 3. a byte that is not UTF-8


BAD = row(2, "2026-06-20", 2, "Bad byte here: caf\xe9").encode("latin-1")


def write_bad(paths: MemoryPaths) -> bytes:
    data = (
        (OUTCOMES_TEMPLATE + row(1, "2026-06-01", 3, "Good one")).encode()
        + BAD
        + row(3, "2026-06-21", 5, "Good three").encode()
    )
    paths.outcomes.write_bytes(data)
    return data


def bad_line(paths: MemoryPaths) -> int:
    return paths.outcomes.read_bytes().split(b"\n").index(BAD.rstrip(b"\n")) + 1


def test_one_bad_byte_hides_only_its_line(paths: MemoryPaths, cli: Any) -> None:
    write_bad(paths)
    line = bad_line(paths)
    parsed = read_outcomes(paths.outcomes)
    assert [r.id for r in parsed.records] == ["O-001", "O-003"]
    assert parsed.warnings == [
        f"Warning: OUTCOMES.md line {line} is not UTF-8 text (byte 0xe9); that line is skipped."
    ]
    recall = cli("outcomes", "recall", "--root", paths.root, "--json")
    assert [r["id"] for r in recall.json["data"]["records"]] == ["O-003", "O-001"]
    briefing = cli("briefing", "--root", paths.root, "--json")
    assert briefing.exit_code == 0
    assert f"line {line} is not UTF-8" in " ".join(briefing.json["warnings"])
    signals = cli("signals", "--root", paths.root, "--json")
    assert signals.exit_code == 0
    assert f"line {line} is not UTF-8" in " ".join(signals.json["warnings"])


@pytest.mark.subprocess
def test_a_store_into_a_file_with_a_bad_byte_is_refused_and_changes_nothing(
    paths: MemoryPaths, cli: Any
) -> None:
    data = write_bad(paths)
    added = cli(
        "outcomes", "add", "--root", paths.root, "--phase", "2", "--plan", "02-01",
        "--agent", "dev", "--outcome", "success", "--summary", "new", "--task-type", "backend",
        "--json",
    )  # fmt: skip
    assert added.exit_code == 1
    message = added.json["data"]["error"]
    assert f"OUTCOMES.md line {bad_line(paths)} is not UTF-8 text" in message
    assert paths.outcomes.read_bytes() == data


def test_prune_moves_the_readable_rows_and_keeps_the_bad_bytes_exactly(
    paths: MemoryPaths,
) -> None:
    data = (OUTCOMES_TEMPLATE + OLD).encode() + BAD
    paths.outcomes.write_bytes(data)
    report = prune(paths, Settings(), TODAY)
    assert report.applied and report.archived == 1
    assert paths.outcomes.read_bytes() == OUTCOMES_TEMPLATE.encode() + BAD
    assert [r.id for r in read_outcomes(paths.archive).records] == ["O-001"]


# ---------------------------------------------------------------- 8. distill's grouping, linear


def test_grouping_links_exactly_the_pairs_that_share_a_tag_or_hands() -> None:
    """The linear grouping gives the components of the pairwise rule it replaced: two plan
    candidates are linked when they share a specific tag, or an agent within one phase."""
    rng = random.Random(17)
    records = [
        OutcomeRecord(
            f"O-{n:03d}",
            "2026-01-01",
            "main",
            str(rng.randint(1, 12)),
            f"0{n % 9}-01",
            f"agent-{rng.randint(1, 15)}",
            rng.choice(["backend", "frontend"]),
            "success",
            4,
            ", ".join(f"t{rng.randint(1, 60)}" for _ in range(rng.randint(0, 2))),
            f"did {n}",
        )
        for n in range(1, 301)
    ]
    selection = select_candidates(records)
    common = phase_tags(records)
    plans = [c for c in selection.candidates if not c.is_review]

    def linked(a: DistillCandidate, b: DistillCandidate) -> bool:
        ta = set(specific_tags(a.record)) - common.get(phase_key(a.record.phase), set())
        tb = set(specific_tags(b.record)) - common.get(phase_key(b.record.phase), set())
        same_phase = phase_key(a.record.phase) == phase_key(b.record.phase)
        return bool(ta & tb) or (same_phase and bool(set(a.record.agents) & set(b.record.agents)))

    group_of = {c.id: g.key for g in selection.groups for c in g.candidates}
    for a in plans:
        for b in plans:
            if a.record.task_type == b.record.task_type and linked(a, b):
                assert group_of[a.id] == group_of[b.id]
    for group in selection.groups:  # every group is connected through links
        members = [c for c in group.candidates if not c.is_review]
        reached, todo = {members[0].id}, [members[0]]
        while todo:
            here = todo.pop()
            for other in members:
                if other.id not in reached and linked(here, other):
                    reached.add(other.id)
                    todo.append(other)
        assert reached == {c.id for c in members}
