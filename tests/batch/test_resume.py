"""A `batch collect` killed mid-way (the process dies right after writing the first file) resumes:
the second collect writes the remaining phases, leaves the first one's file as it is, and pays
for no request twice (the first run's direct answers are replayed from the record's journal)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.batch.conftest import TODAY, World, submitted

# Runs `legion-llm batch collect` with the atomic writer wrapped: the process exits at once
# (os._exit: no cleanup, no record saved after it) right after the first COMPACTED.md is on disk.
KILLED_COLLECT = textwrap.dedent(
    """
    import os, sys
    import legion_llm.memory.files as files
    real = files.atomic_write

    def write_then_die(path, content, **kwargs):
        written = real(path, content, **kwargs)
        if str(path).endswith("-COMPACTED.md"):
            os._exit(9)
        return written

    files.atomic_write = write_then_die
    import legion_llm.pipeline.compact.run as run
    run.atomic_write = write_then_die
    from legion_llm.entry import main
    main(sys.argv[1:])
    """
)


@pytest.mark.subprocess
def test_a_killed_collect_resumes_and_pays_nothing_twice(world: World) -> None:
    world.batches.outcome["phase-2-chunk-1"] = "expired"  # phase 2 needs a direct call
    batch_id = submitted(world)
    args = ["batch", "collect", batch_id, "--root", str(world.root), "--today", TODAY]

    killed = subprocess.run([sys.executable, "-c", KILLED_COLLECT, *args], env=dict(os.environ),
                            capture_output=True, text=True, timeout=120)  # fmt: skip

    assert killed.returncode == 9, killed.stderr
    [first] = world.compacted().values()
    assert first.parent.name == "02-invoice-lifecycle"
    written = (first.stat().st_ino, first.stat().st_mtime_ns, first.read_bytes())
    record = world.record(batch_id)
    assert record.results is not None and record.collected_at is None
    assert record.cases["2"].outcome is None  # it died before recording the outcome
    assert any(key.startswith("2|") for key in record.journal)  # but after the journal
    direct_before = len(world.direct_calls())

    resumed = world.cli("batch", "collect", batch_id, "--json")

    assert resumed.exit_code == 0, resumed.stderr
    rows = {row["case"]: row for row in resumed.json["data"]["outcomes"]}
    assert rows["2"]["note"] == "already written (by an interrupted collect)"
    assert (first.stat().st_ino, first.stat().st_mtime_ns, first.read_bytes()) == written
    assert set(world.compacted()) == {"02-invoice-lifecycle", "03-billing-exports"}
    new_calls = world.direct_calls()[direct_before:]
    assert not any("Phase 2:" in json.dumps(c.body) for c in new_calls)  # phase 2 not paid again
    assert world.batches.results_downloads == 1  # the results were kept, not fetched again
    assert world.record(batch_id).collected_at is not None


def test_a_collect_that_waited_for_another_sees_its_work(world: World) -> None:
    """Two collects at once: the second one read the record before the first took the lock;
    once it has the lock it reads the record again, so it writes and pays for nothing."""
    from legion_llm.app.batch import record_choice
    from legion_llm.app.commands.batches import job_for
    from legion_llm.cli.render import common
    from legion_llm.pipeline.batch.run import collect_job

    world.batches.outcome["phase-2-chunk-1"] = "expired"  # a direct call to pay for
    batch_id = submitted(world)
    stale = world.record(batch_id)  # read before the other collect ran
    assert world.cli("batch", "collect", batch_id).exit_code == 0
    calls, downloads = len(world.direct_calls()), world.batches.results_downloads
    c = common(world.root, TODAY, True)

    report = collect_job(job_for(c, stale), stale, record_choice(stale).engines_for(c), world.root)

    assert report.collected_now == []
    assert len(world.direct_calls()) == calls and world.batches.results_downloads == downloads
