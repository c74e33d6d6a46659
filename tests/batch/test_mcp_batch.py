"""The MCP tool phase_compact_batch (submit, status, collect), in process through the SDK's own
client, against the loopback fake."""

from __future__ import annotations

from tests.batch.conftest import MakeWorld, World
from tests.mcp.inprocess import call_tool, call_tools


def test_compact_all_then_status_then_collect(world: World) -> None:
    submitted = call_tool(world.root, "phase_compact_batch", {"action": "submit",
                                                              "today": "2026-11-30"})  # fmt: skip

    assert not submitted.is_error, submitted.text
    data = submitted.data["data"]
    batch_id = data["batch_id"]
    assert data["requests"] == 2 and data["cases"]["3"]["custom_ids"] == ["phase-3-chunk-1"]
    assert world.compacted() == {} and len(world.batches.creates()) == 1

    status, unapplied, collected, again = call_tools(world.root, [
        ("phase_compact_batch", {"batch_id": batch_id}),
        ("phase_compact_batch", {"action": "collect"}),  # no apply: the status, nothing written
        ("phase_compact_batch", {"action": "collect", "apply": True}),
        ("phase_compact_batch", {"action": "collect", "batch_id": batch_id, "apply": True}),
    ])  # fmt: skip
    assert unapplied.data["data"]["processing_status"] == "ended"
    assert any("apply=true" in w for w in unapplied.data["warnings"])

    assert status.data["data"]["processing_status"] == "ended"
    outcomes = {row["case"]: row for row in collected.data["data"]["outcomes"]}
    assert collected.data["ok"] is True and set(outcomes) == {"2", "3"}
    assert all(row["status"] in ("written", "repaired", "fell back") for row in outcomes.values())
    assert set(world.compacted()) == {"02-invoice-lifecycle", "03-billing-exports"}
    assert all(row["collected_before"] for row in again.data["data"]["outcomes"])


def test_collect_of_a_batch_in_progress_says_so(make_world: MakeWorld) -> None:
    world = make_world(polls_to_end=5)
    submitted = call_tool(world.root, "phase_compact_batch", {"action": "submit",
                                                              "today": "2026-11-30"})  # fmt: skip
    batch_id = submitted.data["data"]["batch_id"]

    collected = call_tool(world.root, "phase_compact_batch", {"action": "collect",
                                                              "batch_id": batch_id, "apply": True})  # fmt: skip

    assert collected.data["ok"] is False and collected.data["data"]["collected"] is False
    assert world.compacted() == {}


def test_a_bad_batch_id_is_a_tool_error(world: World) -> None:
    result = call_tool(world.root, "phase_compact_batch", {"batch_id": "../../etc/passwd"})
    assert result.is_error and "is not a batch id" in result.text
