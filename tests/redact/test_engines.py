"""Every engine's request is redacted at the one seam (EngineBase.request): the Anthropic SDK's
HTTP body (respx), the queue fake, the offline engine, MCP sampling, and the claude-code engine
(issue 13), whose stdin and argv are checked through its stub `claude` (tests/llm/claude_stub.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import respx

from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import Engine, Notices, OfflineEngine
from legion_llm.llm.factory import select_engine
from legion_llm.llm.offline import OfflineCall, OfflineRegistry
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.redact import Redactor
from legion_llm.pipeline.compact.render import DecisionItem
from legion_llm.pipeline.compact.run import compact_phase
from tests.conftest import trust_project
from tests.llm.claude_stub import StubClaude, answer
from tests.llm.conftest import body, stream_reply, tool_reply
from tests.pipeline.compaction_cases import TODAY, good_digest, phase_of
from tests.redact.samples import KINDS, SAMPLES, everything, sample
from tests.redact.test_write_paths import leaked, markers

Make = Callable[..., Engine]
SECRETS = everything()


def test_the_anthropic_request_body_holds_no_secret(
    api: respx.MockRouter, claude: Make, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(return_value=tool_reply({"echo": "x", "length": 1}))
    engine = claude(fallback_offline=False)

    engine.ask(SelfTestReply, PROMPT, {"word": SECRETS})

    sent = route.calls[0].request.content.decode("utf-8")
    assert leaked(sent) == [] and leaked(json.dumps(body(route.calls[0]))) == []
    content = json.loads(sent)["messages"][0]["content"]
    assert markers(content if isinstance(content, str) else json.dumps(content)) == set(KINDS)
    (notice,) = [n for n in collected.messages if "redacted" in n]
    assert notice.startswith("notice: redacted secrets (github-token, ") and leaked(notice) == []


def test_compaction_through_claude_sends_and_writes_no_secret(
    tmp_path: Path, api: respx.MockRouter, claude: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    summary = phase.summaries[0][1]
    summary.write_text(summary.read_text(encoding="utf-8") + "\n## Notes\n" + SECRETS + "\n")
    careless = good_digest(phase)  # a model that echoes secrets it was never sent
    careless.decisions.append(DecisionItem(plan_id="03-01", decision=sample("jwt").text,
                                           rationale=sample("npm-token").text,
                                           rejected_alternatives=[]))  # fmt: skip
    block = {"type": "tool_use", "id": "t1", "name": "record_phase_digest",
             "input": json.loads(careless.model_dump_json())}  # fmt: skip
    reply = {"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
             "content": [block], "stop_reason": "tool_use", "stop_sequence": None,
             "usage": {"input_tokens": 5000, "output_tokens": 1500}}  # fmt: skip
    route = api.post("/v1/messages").mock(return_value=stream_reply(reply))

    result = compact_phase(phase, claude(fallback_offline=False), today=TODAY)

    assert route.call_count >= 1
    for call in route.calls:
        assert leaked(call.request.content.decode("utf-8")) == []
    written = phase.compacted_path.read_text(encoding="utf-8")
    assert leaked(written) == [] and "[REDACTED:jwt]" in written
    assert any("before writing 03-COMPACTED.md" in w for w in result.warnings)


def test_the_fake_engine_sees_only_redacted_prompts_and_variables() -> None:
    engine = FakeEngine(notices=Notices(sink=None)).enqueue(SelfTestReply(echo="x", length=1))
    engine.ask(SelfTestReply, PROMPT, {"word": SECRETS})
    (request,) = engine.requests
    assert leaked(request.prompt.user + request.prompt.system) == []
    assert leaked(json.dumps(dict(request.variables))) == []
    assert markers(request.variables["word"]) == set(KINDS)


def test_the_offline_engine_is_redacted_too_and_says_nothing() -> None:
    seen: list[str] = []

    def step(call: OfflineCall) -> SelfTestReply:
        seen.append(str(call.variables["word"]))
        return SelfTestReply(echo="x", length=1)

    registry = OfflineRegistry()
    registry.register(PROMPT, step)
    notices = Notices(sink=None)
    OfflineEngine(registry, notices=notices).ask(SelfTestReply, PROMPT, {"word": SECRETS})
    assert leaked(seen[0]) == [] and markers(seen[0]) == set(KINDS)
    assert notices.messages == []  # it sends nothing, so it has nothing to report


@pytest.mark.subprocess
def test_the_claude_code_cli_gets_no_secret_on_stdin_or_in_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = StubClaude(tmp_path / "bin").script(answer({"echo": "x", "length": 1}))
    monkeypatch.setenv("PATH", stub.on_path())
    allowed = next(s for s in SAMPLES if "_test_" in s.secret)
    config = resolve_llm_config({}, env=dict(os.environ))
    chosen = select_engine("claude-code", config, env=dict(os.environ), notices=Notices(sink=None),
                           redactor=Redactor(["sk_" + "test_\\w+"]))  # fmt: skip
    chosen.ask(SelfTestReply, PROMPT, {"word": SECRETS})
    (call,) = stub.print_calls()
    assert leaked(call["stdin"]) == [allowed.kind]  # the project's allow list reaches it too
    assert allowed.secret in call["stdin"] and "[REDACTED:pypi-token]" in call["stdin"]
    assert leaked(json.dumps(call["argv"])) == []


def test_a_batch_builds_its_requests_at_the_same_seam() -> None:
    engine = FakeEngine(notices=Notices(sink=None))
    requests = [engine.request(SelfTestReply, PROMPT, {"word": s.text}) for s in SAMPLES]
    assert all(leaked(r.prompt.user) == [] for r in requests)


def test_the_project_allow_list_reaches_the_engine(tmp_path: Path) -> None:
    kept = next(s for s in SAMPLES if "_test_" in s.secret)
    (tmp_path / ".planning").mkdir()
    (tmp_path / "settings.json").write_text(
        json.dumps({"memory": {"redact": {"allow": ["sk_" + "test_\\w+"]}}}), encoding="utf-8"
    )
    from legion_llm.app.session import open_session
    from legion_llm.cli.render import common

    def sent() -> str:
        session = open_session(common(tmp_path, None, True), "offline")
        request = session.engine.request(SelfTestReply, PROMPT, {"word": SECRETS})  # type: ignore[attr-defined]
        return str(request.prompt.user)

    assert leaked(sent()) == []  # a cloned repository's allow list is not honoured
    trust_project(tmp_path)
    user = sent()
    assert kept.secret in user  # the allowed one survives, alone
    assert leaked(user) == [kept.kind]


def test_redaction_switched_off_by_the_project_sends_as_given_with_a_notice() -> None:
    notices = Notices(sink=None)
    engine = FakeEngine(notices=notices, redactor=Redactor(enabled=False))
    engine.enqueue(SelfTestReply(echo="x", length=1))
    engine.ask(SelfTestReply, PROMPT, {"word": sample("github-token").text})
    assert sample("github-token").secret in engine.requests[0].prompt.user
    (notice,) = notices.messages
    assert "sent as given" in notice and "enabled is false" in notice


def test_the_mcp_sampling_request_holds_no_secret() -> None:
    from legion_llm.llm.sampling import SampleReply, SampleRequest, select_mcp_engine

    sent: list[SampleRequest] = []

    def sampler(request: SampleRequest) -> SampleReply:
        sent.append(request)
        return SampleReply('{"echo": "x", "length": 1}', model="client-model")

    allowed = next(s for s in SAMPLES if "_test_" in s.secret)
    config = resolve_llm_config({}, env={})
    chosen = select_mcp_engine("sampling", config, sampler=sampler, env={},
                               notices=Notices(sink=None),
                               redactor=Redactor(["sk_" + "test_\\w+"]))  # fmt: skip
    chosen.ask(SelfTestReply, PROMPT, {"word": SECRETS})
    (request,) = sent
    text = request.system + json.dumps(request.messages)
    assert leaked(text) == [allowed.kind] and "[REDACTED:gitlab-token]" in text
