"""Error matching with the ambiguous band adjudicated by an engine: FakeEngine for the logic,
respx through the real SDK for the Claude call and its fallback."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.engine import Notices
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.knowledge.read import ERRORS, parse_knowledge, read_knowledge
from legion_llm.memory.knowledge.store import add_knowledge
from legion_llm.pipeline.errmatch import (
    PROMPT,
    RootCauseVerdict,
    engine_decider,
    match_error,
    offline_verdict,
)
from legion_llm.project import MemoryPaths
from tests.llm.conftest import body, error_reply, message, stream_reply

STORED = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
BAND_QUERY = "npm error code ERESOLVE\nnpm error ERESOLVE could not resolve"
EXACT_QUERY = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
FIX = "Align the peer versions, or install with --legacy-peer-deps as a stopgap"
ERRORS_TEXT = ERRORS.template + (
    f"| E-001 | 2026-03-01 | main | {STORED.replace(chr(10), '<br>')} | {FIX} | dev | true | npm |\n"
    "| E-002 | 2026-03-02 | main | ModuleNotFoundError: No module named 'yaml' | pip install pyyaml | dev | true | python |\n"
)


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, offline_verdict)
    return reg


def records() -> list[Any]:
    return parse_knowledge(ERRORS, Path("ERRORS.md"), ERRORS_TEXT).records


def verdict_reply(same: bool, confidence: float = 0.9) -> httpx.Response:
    block = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "record_root_cause_verdict",
        "input": {
            "same_root_cause": same,
            "confidence": confidence,
            "reason": "same peer-dependency conflict",
        },
    }
    return stream_reply(message([block], usage={"input_tokens": 400, "output_tokens": 30}))


def test_band_case_is_decided_by_the_engine_and_others_are_not() -> None:
    fake = FakeEngine()
    fake.enqueue(RootCauseVerdict(same_root_cause=True, confidence=0.8, reason="same"))
    [judged] = match_error(records(), BAND_QUERY, fake, limit=1)
    assert judged.match.band == "ambiguous" and judged.same and judged.decided_by == "claude"
    assert len(fake.requests) == 1
    [exact] = match_error(records(), EXACT_QUERY, fake, limit=1)
    assert (exact.decided_by, exact.same) == ("exact", True)
    assert len(fake.requests) == 1  # no call for a clear match


def test_engine_can_say_no() -> None:
    fake = FakeEngine()
    fake.enqueue(RootCauseVerdict(same_root_cause=False, confidence=0.7, reason="different"))
    [judged] = match_error(records(), BAND_QUERY, fake, limit=1)
    assert not judged.same and judged.to_dict()["decided_by"] == "claude"


def test_claude_adjudicates_the_band_over_http(api: respx.MockRouter, claude: Any) -> None:
    route = api.post("/v1/messages").mock(side_effect=[verdict_reply(True)])
    engine = claude()
    [judged] = match_error(records(), BAND_QUERY, engine, limit=1)
    assert (judged.same, judged.decided_by) == (True, "claude")
    sent = body(route.calls[0])
    assert sent["tool_choice"]["name"] == "record_root_cause_verdict"
    assert "cache_control" not in sent["system"][0]  # the prefix is below the 1,024 minimum
    user = sent["messages"][0]["content"]
    user_text = user if isinstance(user, str) else user[0]["text"]
    assert BAND_QUERY in user_text and FIX in user_text
    usage = engine.meter.as_dict(engine.name)
    assert usage["calls"] == 1 and usage["input_tokens"] == 400


def test_api_failure_falls_back_to_the_offline_rule(
    api: respx.MockRouter, claude: Any, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(return_value=error_reply(500))
    engine = claude("auto")
    [judged] = match_error(records(), BAND_QUERY, engine, limit=1)
    assert (judged.decided_by, judged.same) == ("offline", True)  # the offline rule's verdict
    assert route.call_count >= 2  # retried before giving up
    assert len(collected.messages) == 1 and "offline" in collected.messages[0]
    calls = route.call_count
    match_error(records(), BAND_QUERY, engine, limit=1)
    assert route.call_count == calls  # Claude stays off for the rest of the run


def test_store_dedupe_uses_the_same_decision(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True)
    paths.errors.write_text(ERRORS_TEXT)
    fake = FakeEngine()
    fake.enqueue(RootCauseVerdict(same_root_cause=True, confidence=0.9, reason="same"))
    values = {"error_signature": BAND_QUERY, "fix": "other", "agent": "dev"}
    stored = add_knowledge(
        paths, ERRORS, values, today=date(2026, 4, 1), branch="main", decide=engine_decider(fake)
    )
    assert (stored.action, stored.record.id, stored.decided_by) == ("existing", "E-001", "claude")
    fake.enqueue(RootCauseVerdict(same_root_cause=False, confidence=0.9, reason="different"))
    again = add_knowledge(
        paths, ERRORS, values, today=date(2026, 4, 1), branch="main", decide=engine_decider(fake)
    )
    assert (again.action, again.record.id) == ("added", "E-003")
    assert len(read_knowledge(ERRORS, paths.errors).records) == 3


def test_cli_errors_match_json_and_stdin(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    empty = cli("errors", "match", "anything", "--json", "--engine", "offline", "--root", project)
    assert empty.exit_code == 0 and empty.json["data"]["matches"] == []
    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "ERRORS.md").write_text(ERRORS_TEXT)
    result = cli("errors", "match", BAND_QUERY, "--json", "--engine", "offline", "--root", project)
    [hit] = result.json["data"]["matches"]
    assert list(hit) == ["id", "signature", "fix", "resolved", "score", "decided_by"]
    assert (hit["id"], hit["decided_by"], hit["fix"]) == ("E-001", "offline", FIX)
    assert result.json["data"]["usage"]["engine"] == "offline"
    monkeypatch.setattr("sys.stdin", io.StringIO("ModuleNotFoundError: No module named 'yaml'\n"))
    piped = cli("errors", "match", "--stdin", "--json", "--engine", "offline", "--root", project)
    assert [m["id"] for m in piped.json["data"]["matches"]] == ["E-002"]
    assert cli("errors", "match", "--root", project).exit_code == 2


def test_a_cost_cap_below_one_call_lets_the_offline_rule_decide(
    api: respx.MockRouter, claude: Any, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(side_effect=[verdict_reply(False)])
    engine = claude(max_cost_usd=0.0)
    [judged] = match_error(records(), BAND_QUERY, engine, limit=1)
    assert (judged.decided_by, judged.same) == ("offline", True)
    assert route.call_count == 0
    assert any("offline rule decides the close calls" in m for m in collected.messages)
