"""A paid batch is never lost nor paid twice (issue 25, point 8): an intent is saved before the
create call, the batch id is printed on any failure after it, and a second submit for phases a
batch not yet collected holds refuses in one line naming it (or --force)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.claude_api.batches import BatchAPI
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.pipeline.batch.record import BatchRecord, batches_dir, list_intents
from tests.batch.conftest import World, record_files, submitted


def test_a_second_submit_refuses_naming_the_pending_batch(world: World) -> None:
    batch_id = submitted(world)
    again = world.cli("compact", "--all", "--batch")
    assert again.exit_code == 1 and again.stderr.count("\n") == 1
    assert again.stderr.startswith(f"error: not submitted: batch {batch_id} (submitted ")
    assert ") already holds phase 2, phase 3 and is not collected; " in again.stderr
    assert f"`legion-llm batch collect {batch_id}`" in again.stderr and "--force" in again.stderr
    assert len(world.batches.creates()) == 1
    forced = world.cli("compact", "--all", "--batch", "--force")
    assert forced.exit_code == 0 and len(world.batches.creates()) == 2


def test_after_collect_a_new_submit_is_allowed(world: World) -> None:
    batch_id = submitted(world)
    assert world.cli("batch", "collect", batch_id).exit_code == 0
    for path in world.compacted().values():  # the phases are waiting again
        path.unlink()
    assert world.cli("compact", "--all", "--batch").exit_code == 0
    assert len(world.batches.creates()) == 2


def test_the_intent_is_on_disk_before_the_create_call(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    real = BatchAPI.create

    def create(self: BatchAPI, requests: list[dict[str, Any]]) -> Any:
        seen.extend(list_intents(world.root))
        return real(self, requests)

    monkeypatch.setattr(BatchAPI, "create", create)
    batch_id = submitted(world)
    [intent] = seen
    assert intent.batch_id is None and intent.requests == 2 and len(intent.request_sha256) == 64
    assert list_intents(world.root) == []  # replaced by the record
    assert world.record(batch_id).request_sha256 == intent.request_sha256


def test_a_record_that_cannot_be_saved_prints_the_id_and_the_record(world: World) -> None:
    def fail(self: BatchRecord, root: Path) -> None:
        raise OSError(28, "No space left on device")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchRecord, "save", fail)
        result = world.cli("compact", "--all", "--batch")
    [batch_id] = world.batches.batches
    assert result.exit_code == 3
    assert result.stderr.startswith(f"error: batch {batch_id} was created (2 request(s)")
    assert "No space left on device" in result.stderr and "do not submit again" in result.stderr
    assert json.loads(result.stdout)["id"] == batch_id  # the record's text: nothing is lost
    [intent] = list_intents(world.root)
    assert intent.batch_id == batch_id
    again = world.cli("compact", "--all", "--batch")
    assert again.exit_code == 1 and f"batch {batch_id}" in again.stderr
    assert "its record was not saved" in again.stderr
    assert len(world.batches.creates()) == 1  # not billed twice


def test_a_create_without_an_answer_keeps_the_intent(world: World) -> None:
    real = BatchAPI.create

    def dropped(self: BatchAPI, requests: list[dict[str, Any]]) -> Any:
        real(self, requests)  # the API made it; the answer was lost on the way
        raise LLMUnavailableError("Message Batches create: connection reset", status=None)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchAPI, "create", dropped)
        first = world.cli("compact", "--all", "--batch")
    assert first.exit_code == 4
    again = world.cli("compact", "--all", "--batch")
    assert again.exit_code == 1 and "a batch whose id was not recorded" in again.stderr
    assert "the create call got no answer" in again.stderr
    assert len(world.batches.creates()) == 1


def test_a_create_the_api_refused_leaves_no_intent(world: World) -> None:
    def refused(self: BatchAPI, requests: list[dict[str, Any]]) -> Any:
        raise LLMUnavailableError("Message Batches create: HTTP 400", status=400)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchAPI, "create", refused)
        assert world.cli("compact", "--all", "--batch").exit_code == 4
    assert list_intents(world.root) == []
    assert world.cli("compact", "--all", "--batch").exit_code == 0


def test_a_record_nested_too_deeply_breaks_no_other_batch(world: World) -> None:
    """Issue 25, point 10: a deep record made `batch status` exit 70 for every batch."""
    batch_id = submitted(world)
    deep = batches_dir(world.root) / "msgbatch_deep0000000000000000.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    status = world.cli("batch", "status", batch_id)
    assert status.exit_code == 0 and batch_id in status.stdout
    assert world.cli("batch", "status").exit_code == 0  # the newest readable one
    named = world.cli("batch", "status", "msgbatch_deep0000000000000000")
    assert named.exit_code == 1 and "nested deeper than 32 levels" in named.stderr
    assert "internal error" not in named.stderr and named.stderr.count("\n") == 1
    assert len(record_files(world.root)) == 2
