"""`compact --all --batch`, `batch status`, `batch collect` through the CLI, the real SDK and the
loopback fake's Message Batches endpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.batch import request_sha256
from tests.batch.conftest import FOUR_PHASES, TODAY, MakeWorld, World, record_files, submitted
from tests.batch.test_eval_batch import standard
from tests.fakes import Reply
from tests.pipeline.compaction_cases import fingerprint


def test_submit_sends_one_batch_with_named_ids_and_stores_the_record(world: World) -> None:
    before = fingerprint(world.root)
    result = world.cli("compact", "--all", "--batch")

    assert result.exit_code == 0, result.stderr
    [create] = world.batches.creates()
    requests = create.body["requests"]
    assert [r["custom_id"] for r in requests] == ["phase-2-chunk-1", "phase-3-chunk-1"]
    batch_id = next(iter(world.batches.batches))
    assert batch_id in result.stdout.splitlines()[0]
    assert world.direct_calls() == [] and world.compacted() == {}  # nothing sent or written
    [path] = record_files(world.root)
    after = fingerprint(world.root)
    assert after.pop(str(path.relative_to(world.root))) and after == before  # only the record
    assert path == world.root / ".planning/memory/.batches" / f"{batch_id}.json"
    record = world.record(batch_id)
    for request in requests:  # each request's input hash is stored under its custom id
        slot = next(k for k, v in record.index.items() if v == request["custom_id"])
        assert slot.split("|")[1] == request_sha256(request["params"])
    assert record.cases["3"].fingerprint and record.results is None


def test_batch_params_are_the_direct_request(world: World, tmp_path: Path) -> None:
    """The same request builder: a phase's batch params equal the body the direct path sends."""
    world.cli("compact", "--all", "--batch")
    [create] = world.batches.creates()
    batched = {r["custom_id"]: r["params"] for r in create.body["requests"]}

    direct = world.cli("compact", "2", "--engine", "anthropic", "--dry-run")

    assert direct.exit_code == 0, direct.stderr
    first = world.direct_calls()[0].body
    sent = {k: v for k, v in first.items() if k != "stream"}
    assert sent == batched["phase-2-chunk-1"]


def test_status_shows_progress_then_the_end(make_world: MakeWorld) -> None:
    world = make_world(polls_to_end=2)
    batch_id = submitted(world)
    first = world.json("batch", "status")["data"]
    second = world.json("batch", "status", batch_id)["data"]

    assert first["id"] == batch_id and first["processing_status"] == "in_progress"
    assert first["request_counts"]["processing"] == 1
    assert second["processing_status"] == "ended"
    assert second["request_counts"] == {"processing": 0, "succeeded": 2, "errored": 0,
                                         "canceled": 0, "expired": 0}  # fmt: skip
    human = world.cli("batch", "status", batch_id).stdout
    assert f"Batch {batch_id} (compact, 2 case(s)" in human and "2/2 request(s) done" in human


def test_collect_writes_every_verified_phase_and_reports_each(world: World) -> None:
    batch_id = submitted(world)
    result = world.cli("batch", "collect", batch_id, "--json")

    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    rows = {row["case"]: row for row in data["outcomes"]}
    assert set(rows) == {"2", "3"}
    for row in rows.values():
        assert row["status"] in ("written", "repaired", "fell back"), row
        assert (world.root / row["path"]).is_file() and row["written"] is True
        assert row["batch"]["from_batch"] >= 1  # the proposal came from the batch
        assert row["usage"]["estimated_cost_usd"] > 0
    assert set(world.compacted()) == {"02-invoice-lifecycle", "03-billing-exports"}
    for row in rows.values():  # a phase settled from its batch answer alone: half the price
        if row["batch"]["direct"] == 0:
            [item] = [
                i for i in world.batches.items if i.custom_id == f"phase-{row['case']}-chunk-1"
            ]
            assert row["usage"]["estimated_cost_usd"] == pytest.approx(
                standard(item.usage) / 2, abs=2e-6
            )
    assert any(row["batch"]["direct"] == 0 for row in rows.values())
    total = data["usage"]
    assert total["estimated_cost_usd"] == pytest.approx(
        sum(r["usage"]["estimated_cost_usd"] for r in rows.values()), abs=1e-6
    )
    assert world.record(batch_id).collected_at is not None


def test_verify_is_the_pipeline_s_own(world: World) -> None:
    """A batch answer that drops a requirement id is repaired, not re-asked (what repair fixes
    is never paid for twice), and the file holds every id: the same settle step as a direct run."""
    broken = dict(world.digests["3"])
    broken["verification"] = [v for v in broken["verification"] if v["requirement_id"] != "BILL-03"]
    world.batches.outcome["phase-3-chunk-1"] = _answer(broken)
    batch_id = submitted(world)

    data = world.json("batch", "collect", batch_id)["data"]

    row = next(r for r in data["outcomes"] if r["case"] == "3")
    about_3 = [c for c in world.direct_calls() if "BILL-03" in json.dumps(c.body)]
    assert about_3 == []  # repaired: no re-ask, no direct call for phase 3
    assert "BILL-03" in (world.root / row["path"]).read_text()
    assert row["batch"] == {**row["batch"], "from_batch": 1, "direct": 0}


def _answer(digest: dict[str, Any]) -> Reply:
    return Reply.answer(digest)


def test_results_out_of_order_with_every_kind_lose_nothing(make_world: MakeWorld) -> None:
    """Four phases: succeeded, errored, expired, canceled, the results file shuffled. The three
    that failed are sent directly, named in the report, and every phase is written."""
    world = make_world(FOUR_PHASES, order="shuffle")
    world.batches.outcome.update({"phase-3-chunk-1": ("errored", "overloaded_error", "busy"),
                                  "phase-6-chunk-1": "expired",
                                  "phase-6_1-chunk-1": "canceled"})  # fmt: skip
    batch_id = submitted(world)

    data = world.json("batch", "collect", batch_id)["data"]

    rows = {row["case"]: row for row in data["outcomes"]}
    assert set(rows) == {"2", "3", "6", "6.1"}
    assert rows["2"]["batch"]["from_batch"] == 1
    expected = {"3": "phase-3-chunk-1 errored in the batch (overloaded_error: busy); sent directly",
                "6": "phase-6-chunk-1 expired in the batch; sent directly",
                "6.1": "phase-6_1-chunk-1 canceled in the batch; sent directly"}  # fmt: skip
    for key, note in expected.items():
        assert note in rows[key]["batch"]["notes"]
        assert rows[key]["batch"]["from_batch"] == 0 and rows[key]["batch"]["direct"] >= 1
    statuses = {key: r["status"] for key, r in rows.items()}
    # phase 6's two summaries (fewer than 700 characters) are shorter than any compacted file:
    # nothing to compact there, and it says so; every other phase is written
    assert statuses == {"2": statuses["2"], "3": statuses["3"], "6": "too small",
                        "6.1": statuses["6.1"]}  # fmt: skip
    assert {statuses[k] for k in ("2", "3", "6.1")} <= {"written", "repaired", "fell back"}
    assert len(world.compacted()) == 3
    lines = world.record(batch_id).results
    assert lines is not None and set(lines) == {"phase-2-chunk-1", "phase-3-chunk-1",
                                                "phase-6-chunk-1", "phase-6_1-chunk-1"}  # fmt: skip


def test_a_missing_or_malformed_result_is_sent_directly(make_world: MakeWorld) -> None:
    world = make_world()
    world.batches.outcome.update({"phase-2-chunk-1": "missing", "phase-3-chunk-1": "malformed"})
    batch_id = submitted(world)

    data = world.json("batch", "collect", batch_id)["data"]

    rows = {row["case"]: row for row in data["outcomes"]}
    assert "phase-2-chunk-1 missing in the batch; sent directly" in rows["2"]["batch"]["notes"]
    assert ("phase-3-chunk-1: the batch answer is not a Messages API answer; sent directly"
            in rows["3"]["batch"]["notes"])  # fmt: skip
    assert len(world.compacted()) == 2


def test_a_failed_request_whose_direct_retry_fails_falls_back(make_world: MakeWorld) -> None:
    world = make_world()
    world.batches.outcome["phase-3-chunk-1"] = "expired"
    batch_id = submitted(world)
    respond = world.respond
    world.api.responder = lambda r: Reply.error(529) if r.path == "/v1/messages" else respond(r)

    data = world.json("batch", "collect", batch_id)["data"]

    rows = {row["case"]: row for row in data["outcomes"]}
    assert rows["3"]["status"] == "fell back" and rows["3"]["engine"] == "offline"
    assert "phase-3-chunk-1 expired in the batch; sent directly" in rows["3"]["batch"]["notes"]
    assert (world.root / rows["3"]["path"]).is_file()  # the offline engine's, verified


def test_direct_calls_failing_do_not_stop_the_batch_answers(make_world: MakeWorld) -> None:
    """Phase 2's batch answer needs a re-ask, whose direct call fails (529); phase 3, collected
    after it, is still settled from its batch answer."""
    world = make_world()
    broken = dict(world.digests["2"], verification=[])
    world.batches.outcome["phase-2-chunk-1"] = _answer(broken)
    batch_id = submitted(world)
    respond = world.respond
    world.api.responder = lambda r: Reply.error(529) if r.path == "/v1/messages" else respond(r)

    data = world.json("batch", "collect", batch_id)["data"]

    rows = {row["case"]: row for row in data["outcomes"]}
    assert rows["2"]["status"] in ("repaired", "fell back") and rows["2"]["batch"]["direct"] == 0
    assert rows["3"]["batch"]["from_batch"] == 1
    assert all((world.root / r["path"]).is_file() for r in rows.values())


def test_a_results_file_with_no_result_line_collects_nothing(world: World) -> None:
    world.batches.results_page = b"<html><body>502 Bad Gateway</body></html>"
    batch_id = submitted(world)

    result = world.cli("batch", "collect", batch_id)

    assert result.exit_code == 4 and "hold no result line (2 expected)" in result.stderr
    assert world.compacted() == {} and world.direct_calls() == []
    assert world.record(batch_id).results is None  # the next collect downloads them again


def test_a_phase_changed_since_submission_is_stale_and_not_written(world: World) -> None:
    batch_id = submitted(world)
    summary = next((world.root / ".planning/phases/03-billing-exports").glob("*03-02-SUMMARY.md"))
    summary.write_text(summary.read_text() + "\nA late note.\n")

    result = world.cli("batch", "collect", batch_id, "--json")

    assert result.exit_code == 1
    rows = {row["case"]: row for row in result.json["data"]["outcomes"]}
    assert rows["3"]["status"] == "stale"
    assert "originals changed since the batch was submitted" in rows["3"]["reason"]
    assert rows["3"]["batch"]["unused"] == 1  # its answer was billed all the same
    assert rows["3"]["usage"]["estimated_cost_usd"] > 0
    assert set(world.compacted()) == {"02-invoice-lifecycle"}
    assert not any("Phase 3:" in json.dumps(c.body) for c in world.direct_calls())


def test_a_setting_that_changes_the_requests_makes_the_phase_stale(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_id = submitted(world)
    monkeypatch.setenv("LEGION_LLM_EFFORT", "high")  # the requests would differ now

    data = world.json("batch", "collect", batch_id)["data"]

    assert {r["status"] for r in data["outcomes"]} == {"stale"}
    assert "requests differ from those submitted" in data["outcomes"][0]["reason"]
    assert world.compacted() == {} and world.direct_calls() == []


def test_collecting_twice_writes_nothing_twice(world: World) -> None:
    batch_id = submitted(world)
    world.cli("batch", "collect", batch_id)
    files = {name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
             for name, p in world.compacted().items()}  # fmt: skip
    calls, downloads = len(world.direct_calls()), world.batches.results_downloads

    again = world.cli("batch", "collect", batch_id, "--json")

    assert again.exit_code == 0
    assert len(world.direct_calls()) == calls and world.batches.results_downloads == downloads
    assert {name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
            for name, p in world.compacted().items()} == files  # fmt: skip
    assert all(r["collected_before"] for r in again.json["data"]["outcomes"])


def test_max_cost_refuses_the_whole_batch_before_submitting(world: World) -> None:
    result = world.cli("compact", "--all", "--batch", "--max-cost", "0.001")

    assert result.exit_code == 4
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: not submitted: the batch of 2 requests")
    assert "over --max-cost $0.0010" in lines[0]
    assert world.batches.creates() == [] and record_files(world.root) == []


def test_a_batch_past_the_api_s_limits_is_refused_before_sending(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import legion_llm.pipeline.batch.run as run

    monkeypatch.setattr(run, "MAX_REQUESTS", 1)
    result = world.cli("compact", "--all", "--batch")

    assert result.exit_code == 1 and "at most 1 requests or 256 MB" in result.stderr
    assert world.batches.creates() == [] and record_files(world.root) == []


def test_a_cap_the_batch_fits_under_is_accepted(world: World) -> None:
    result = world.cli("compact", "--all", "--batch", "--max-cost", "5", "--json")
    assert result.exit_code == 0 and result.json["data"]["estimated_cost_usd"] <= 5


def test_collect_before_the_end_writes_nothing_and_says_so(make_world: MakeWorld) -> None:
    world = make_world(polls_to_end=5)
    batch_id = submitted(world)
    result = world.cli("batch", "collect", batch_id)

    assert result.exit_code == 75
    assert f"Batch {batch_id} is still in_progress" in result.stdout
    assert world.compacted() == {} and world.record(batch_id).results is None


def test_wait_polls_then_collects_in_one_command(make_world: MakeWorld) -> None:
    world = make_world(polls_to_end=3)
    data = world.json("compact", "--all", "--batch", "--wait", "--poll-interval", "0")["data"]

    assert data["collected"] is True and data["submitted"]["batch_id"] == data["batch_id"]
    polls = [r for r in world.api.requests if r.method == "GET" and r.path.endswith(data["id"])]
    assert len(polls) >= 3
    assert set(world.compacted()) == {"02-invoice-lifecycle", "03-billing-exports"}


def test_wait_gives_up_at_the_timeout(make_world: MakeWorld) -> None:
    world = make_world(polls_to_end=50)
    result = world.cli("compact", "--all", "--batch", "--wait", "--poll-interval", "0.01",
                       "--timeout", "0")  # fmt: skip

    assert result.exit_code == 75 and "after waiting 0 s" in result.stdout
    assert world.compacted() == {}


def test_a_phase_that_fails_its_preconditions_is_not_submitted(make_world: MakeWorld) -> None:
    world = make_world("missing-plan-summary")
    result = world.cli("compact", "--all", "--batch")

    assert result.exit_code == 1
    assert "nothing to submit" in result.stderr and "have a PLAN but no SUMMARY" in result.stderr
    assert world.batches.creates() == []


def test_decimal_phase_ids_fit_the_custom_id_rules(make_world: MakeWorld) -> None:
    world = make_world("decimal-phase")
    submitted(world)
    [create] = world.batches.creates()
    assert [r["custom_id"] for r in create.body["requests"]] == ["phase-6-chunk-1",
                                                               "phase-6_1-chunk-1"]  # fmt: skip


def test_batch_needs_the_api(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    offline = world.cli("compact", "--all", "--batch", "--engine", "offline")
    assert offline.exit_code == 2 and "--engine offline cannot" in offline.stderr
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    keyless = world.cli("compact", "--all", "--batch")
    assert keyless.exit_code == 2 and "ANTHROPIC_API_KEY" in keyless.stderr
    assert world.batches.creates() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--batch"], "go with --all"), (["--all", "3"], "takes no PHASE"),
     (["--all", "--wait"], "--wait goes with --batch"), (["--all", "--dry-run"], "preview one")],
)  # fmt: skip
def test_option_mistakes_are_one_line(world: World, args: list[str], message: str) -> None:
    result = world.cli("compact", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_all_without_batch_compacts_one_after_another(world: World) -> None:
    data = world.json("compact", "--all", "--engine", "anthropic")["data"]

    assert [r["case"] for r in data["outcomes"]] == ["2", "3"]
    assert world.batches.creates() == [] and len(world.direct_calls()) >= 2
    assert set(world.compacted()) == {"02-invoice-lifecycle", "03-billing-exports"}
    assert data["usage"]["calls"] == len(world.direct_calls())


def test_today_is_the_submission_s(world: World) -> None:
    batch_id = submitted(world)
    later = world.run("batch", "collect", batch_id, "--root", world.root, "--today", "2027-01-05")
    assert later.exit_code == 0, later.stderr
    assert TODAY in next(iter(world.compacted().values())).read_text()
