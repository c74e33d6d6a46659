"""`--engine anthropic` is loud: a refused key, model or request stops the command with one line
(no fragment of the key) and writes nothing; `auto` falls back with one notice. Against the loopback fake,
through the real CLI, with ANTHROPIC_BASE_URL pointing at it as a user would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FakeMessagesAPI, Reply
from tests.llm.conftest import TEST_KEY
from tests.pipeline.compaction_cases import copy_case, fingerprint

PARTS = (TEST_KEY[-4:], TEST_KEY[-8:-4])  # no fragment of the key is shown, masked or not
CASE = ("legion-spec-billing-exports", "3")


@pytest.fixture
def point_at(monkeypatch: pytest.MonkeyPatch) -> Any:
    def point(fake: FakeMessagesAPI) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)

    return point


def compacted(root: Path) -> list[Path]:
    return list(root.rglob("*-COMPACTED.md"))


@pytest.mark.parametrize(
    ("reply", "shown"),
    [(None, "Claude API refused the key in ANTHROPIC_API_KEY: HTTP 401"),
     (Reply.error(403, message="workspace disabled"), "the key in ANTHROPIC_API_KEY: HTTP 403"),
     (Reply.error(400, message="thinking.type: disabled is not supported"),
      "Claude API refused the request: HTTP 400 (invalid_request_error: thinking.type"),
     (Reply.error(404, message="model: claude-haiku-5-5"), "HTTP 404 (not_found_error: model")],
)  # fmt: skip
def test_explicit_engine_stops_with_one_line_and_writes_nothing(
    cli: Any, tmp_path: Path, point_at: Any, reply: Reply | None, shown: str
) -> None:
    root = copy_case(CASE[0], tmp_path)
    before = fingerprint(root)
    with FakeMessagesAPI(api_keys=None if reply else {"sk-ant-some-other-key-0000"}) as fake:
        if reply is not None:
            fake.enqueue(reply)
        point_at(fake)
        result = cli("compact", CASE[1], "--root", root, "--engine", "anthropic")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and shown in lines[0], lines
    assert not any(part in result.stdout + result.stderr for part in PARTS)
    assert compacted(root) == [] and fingerprint(root) == before
    assert len(fake.calls()) == 1  # not retried


def test_explicit_engine_json_envelope_says_why(cli: Any, tmp_path: Path, point_at: Any) -> None:
    root = copy_case(CASE[0], tmp_path)
    with FakeMessagesAPI(api_keys={"sk-ant-some-other-key-0000"}) as fake:
        point_at(fake)
        result = cli("compact", CASE[1], "--root", root, "--engine", "anthropic", "--json")
    assert result.exit_code == 2 and result.json["ok"] is False
    data = result.json["data"]
    assert "refused the key" in data["error"] and (data["status"], data["attempts"]) == (401, 1)
    assert TEST_KEY not in result.stdout and compacted(root) == []


def test_auto_falls_back_with_one_notice_and_writes_the_offline_result(
    cli: Any, tmp_path: Path, point_at: Any
) -> None:
    root = copy_case(CASE[0], tmp_path)
    with FakeMessagesAPI(api_keys={"sk-ant-some-other-key-0000"}) as fake:
        point_at(fake)
        result = cli("compact", CASE[1], "--root", root, "--json")
    assert result.exit_code == 0, result.stderr
    notices = [line for line in result.stderr.splitlines() if line.startswith("notice:")]
    assert len(notices) == 1 and "refused the key" in notices[0]
    assert result.json["data"]["engine"] == "offline" and result.json["data"]["fell_back"]
    assert not any(part in result.stdout + result.stderr for part in PARTS)
    assert len(compacted(root)) == 1


def test_unknown_model_is_refused_before_any_request(
    cli: Any, tmp_path: Path, point_at: Any
) -> None:
    root = copy_case(CASE[0], tmp_path)
    with FakeMessagesAPI() as fake:
        point_at(fake)
        result = cli("compact", CASE[1], "--root", root, "--model", "claude-future-9")
        assert result.exit_code == 2
        assert "model 'claude-future-9' is not in the price table" in result.stderr
        assert "--price IN/OUT" in result.stderr and fake.requests == []
        fake.enqueue(Reply.answer({"echo": "legion", "length": 6}))
        priced = cli("llm", "selftest", "--root", root, "--model", "claude-future-9",
                     "--price", "3/15", "--json")  # fmt: skip
    assert priced.exit_code == 0, priced.stderr
    data = priced.json["data"]
    assert data["engine"] == "anthropic" and data["model"] == "claude-future-9"
    usage = fake.calls()[0].usage
    expected = (usage["input_tokens"] * 3 + usage["output_tokens"] * 15) / 1e6  # type: ignore[index]
    assert data["usage"]["estimated_cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert compacted(root) == []


def test_an_explicit_engine_that_fails_after_paid_calls_reports_what_they_cost(
    cli: Any, tmp_path: Path, point_at: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_case(CASE[0], tmp_path)
    before = fingerprint(root)
    monkeypatch.setenv("LEGION_LLM_MAX_ATTEMPTS", "1")
    long = {"deliverables": [{"plan_id": "03-01", "summary": "legion " * 400}]}
    with FakeMessagesAPI() as fake:  # a proxy hangs up mid-answer: billed, never answered
        fake.responder = lambda request: Reply.answer(long, stall_after=4, then="close")
        point_at(fake)
        result = cli("compact", CASE[1], "--root", root, "--engine", "anthropic", "--json")
        paid = len(fake.calls())
    assert result.exit_code == 4 and result.json["ok"] is False and paid >= 1
    usage = result.json["data"]["usage"]
    assert usage["calls"] == paid and usage["estimated_cost_usd"] > 0
    line = result.stderr.strip().splitlines()
    assert len(line) == 1 and f"this run spent about ${usage['estimated_cost_usd']:.4f}" in line[0]
    assert compacted(root) == [] and fingerprint(root) == before
