"""`eval distill|learnings|compaction --batch`: the suite's calls go into one batch, the log names
the batch and bills its answers at the batch price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.budget import call_usage
from legion_llm.llm.pricing import DEFAULT_MODEL, model_info
from tests.batch.conftest import TODAY
from tests.fakes import FakeMessagesAPI, RecordedRequest, Reply
from tests.fakes.batches import FakeBatches


def empty_proposal(request: RecordedRequest) -> Reply | None:
    """A valid, empty answer for the distill and learnings prompts (whatever the shape asked)."""
    body = request.body if isinstance(request.body, dict) else {}
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
    if schema is None and body.get("tools"):
        schema = body["tools"][0]["input_schema"]
    properties = (schema or {}).get("properties") or {}
    for key in ("patterns", "learnings"):
        if key in properties:
            return Reply.answer({key: []})
    if "verdicts" in properties:  # the error judge: none of the candidates is the same cause
        return Reply.answer({"verdicts": [], "match": 0})
    return None


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    with FakeMessagesAPI(responder=empty_proposal) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        yield api, FakeBatches(api, polls_to_end=2)


# distill: every case's first pass comes from the batch (its second pass reads what the first
# wrote); learnings: the missions are extracted in order into one project, so only the first
# request does not depend on an earlier answer
@pytest.mark.slow
@pytest.mark.parametrize(("suite", "least_from_batch"), [("distill", 20), ("learnings", 1)])
def test_eval_batch_logs_the_batch_and_its_discounted_cost(
    suite: str, least_from_batch: int, fake: Any, cli: Any, project: Path
) -> None:
    api, batches = fake
    out = project / "eval.json"
    result = cli("eval", suite, "--batch", "--wait", "--poll-interval", "0", "--out", out,
                 "--root", project, "--today", TODAY, "--json")  # fmt: skip

    assert result.exit_code in (0, 1), result.stderr  # 1: a gate failed on the empty answers
    [create] = batches.creates()
    assert len(create.body["requests"]) >= 2
    log = json.loads(out.read_text())
    batch_id = next(iter(batches.batches))
    batch = log["batch"]
    assert batch["id"] == batch_id and batch["price_factor"] == 0.5
    assert batch["from_batch"] >= least_from_batch
    direct = api.calls("/v1/messages")  # requests built from earlier answers (the second pass)
    assert batch["direct"] == len(direct)
    assert log["usage"]["calls"] == batch["from_batch"] + batch["unused"] + len(direct)
    assert log["usage"]["estimated_cost_usd"] == pytest.approx(
        batch["batch_cost_usd"] + batch["direct_cost_usd"], abs=2e-6
    )
    assert batch["direct_cost_usd"] == pytest.approx(
        sum(standard(r.usage) for r in direct), abs=1e-6
    )
    # every answer the batch billed, used or not (its request changed after an earlier answer),
    # at half the standard price
    assert batch["from_batch"] + batch["unused"] == len(batches.items)
    every_item = sum(standard(item.usage) for item in batches.items)
    assert batch["batch_cost_usd"] == pytest.approx(every_item / 2, abs=2e-6)
    data = result.json["data"]
    assert data["outcomes"][0]["path"] == str(out) and data["batch_id"] == batch_id


def standard(usage: Any) -> float:
    """What one call's billed usage costs at the standard price."""
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    return call_usage(
        model_info(DEFAULT_MODEL), **{k: int(usage[k]) for k in keys}
    ).estimated_cost_usd


@pytest.mark.subprocess
def test_eval_errors_batch_sends_every_judge_call_in_one_batch(
    fake: Any, cli: Any, project: Path
) -> None:
    """Each query's single judge call reads nothing an earlier answer wrote: all of them come
    from the batch, at half the price, and the split option survives into the collect."""
    api, batches = fake
    out = project / "errors.json"
    result = cli("eval", "errors", "--batch", "--wait", "--poll-interval", "0", "--split",
                 "original", "--out", out, "--root", project, "--today", TODAY, "--json")  # fmt: skip

    assert result.exit_code in (0, 1), result.stderr
    [create] = batches.creates()
    log = json.loads(out.read_text())
    assert list(log["splits"]) == ["original"]
    assert log["batch"]["from_batch"] == len(create.body["requests"]) == len(batches.items) >= 5
    assert log["batch"]["direct"] == 0 and log["batch"]["unused"] == 0
    assert api.calls("/v1/messages") == []
    every_item = sum(standard(item.usage) for item in batches.items)
    assert log["usage"]["estimated_cost_usd"] == pytest.approx(every_item / 2, abs=2e-6)


def test_eval_batch_submit_alone_prints_the_id_and_runs_nothing(
    fake: Any, cli: Any, project: Path
) -> None:
    api, batches = fake
    result = cli("eval", "distill", "--batch", "--root", project, "--today", TODAY, "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["batch_id"] == next(iter(batches.batches))
    assert result.json["data"]["kind"] == "eval-distill"
    assert not (project / "eval-logs").exists() and api.calls("/v1/messages") == []


@pytest.mark.slow
def test_eval_batch_collected_later_writes_its_log_once(fake: Any, cli: Any, project: Path) -> None:
    _, batches = fake
    submit = cli("eval", "learnings", "--batch", "--root", project, "--today", TODAY, "--json")
    batch_id = submit.json["data"]["batch_id"]
    early = cli("batch", "collect", batch_id, "--root", project, "--json")  # one poll: not ended
    first = cli("batch", "collect", batch_id, "--root", project, "--json")
    again = cli("batch", "collect", batch_id, "--root", project, "--json")

    assert early.exit_code == 75 and early.json["data"]["collected"] is False
    assert first.exit_code in (0, 1) and again.exit_code == 0
    logs = list((project / "eval-logs").glob("learnings-*.json"))
    assert len(logs) == 1 and json.loads(logs[0].read_text())["batch"]["id"] == batch_id
    assert again.json["data"]["outcomes"][0]["collected_before"] is True
    assert batches.results_downloads == 1
