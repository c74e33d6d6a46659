"""MCP sampling: a client that implements `sampling/createMessage` (the SDK's stdio client with a
sampling callback, in this process) answers the server's LLM steps with its own model; a client
without sampling gets the offline engine and the pointer to the host tools."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientRequestContext
from mcp.types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent

from legion_llm.app.commands.phases import compact_maker
from legion_llm.llm.pricing import DEFAULT_MODEL
from legion_llm.llm.prompts import load_prompt
from legion_llm.llm.sampling import HOST_NOTICE
from legion_llm.memory.phases.find import find_phase
from tests.cli.test_host_cli import TODAY, lazy, offline_answers
from tests.mcp.stdio import Calls, with_server
from tests.mcp.test_host_tools import demo

pytestmark = pytest.mark.subprocess

AUTO = {"LEGION_LLM_ENGINE": "auto"}
COMPACTED = ".planning/phases/03-fx-rates/03-COMPACTED.md"


class Client:
    """A sampling callback that answers from a script and keeps every request it was sent."""

    def __init__(self, *answers: str | ErrorData) -> None:
        self.answers = list(answers)
        self.seen: list[CreateMessageRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        self.seen.append(params)
        answer = self.answers[min(len(self.seen), len(self.answers)) - 1]
        if isinstance(answer, ErrorData):
            return answer
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=answer),
                                   model="client-model-1", stop_reason="endTurn")  # fmt: skip


def compact(root: Path, cwd: Path, client: Client | None, **arguments: Any) -> dict[str, Any]:
    async def scenario(calls: Calls) -> dict[str, Any]:
        return await calls.ok("phase_compact", phase="3", apply=True, today=TODAY, **arguments)

    return with_server(root, cwd, scenario, env=AUTO, sampling_callback=client)


def test_the_clients_model_answers_through_sampling(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    (good,) = offline_answers(root, compact_maker(find_phase(root, "3"), False))
    client = Client("```json\n" + json.dumps(good) + "\n```")  # a fenced answer is fine
    result = compact(root, cwd, client)
    data = result["data"]
    assert data["engine"] == "sampling" and data["written"] is True and not data["fell_back"]
    assert data["usage"]["engine"] == "sampling" and data["usage"]["calls"] == 1
    assert data["usage"]["estimated_cost_usd"] == 0  # the client's model, the client's bill
    assert data["answers"][0]["model"] == "client-model-1"
    (params,) = client.seen
    system = load_prompt("compact-phase").system
    assert params.system_prompt.startswith(system) and "JSON Schema" in params.system_prompt
    assert '"deliverables"' in params.system_prompt  # the schema is in the prompt
    (message,) = params.messages
    assert message.role == "user" and "FX-01" in message.content.text  # type: ignore[union-attr]
    assert params.model_preferences is not None
    assert params.model_preferences.hints[0].name == DEFAULT_MODEL  # type: ignore[index]
    assert params.max_tokens > 0 and params.include_context == "none"
    assert (root / COMPACTED).is_file()


def test_a_lazy_sampled_answer_is_asked_again_with_the_problems(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    (good,) = offline_answers(root, compact_maker(find_phase(root, "3"), False))
    client = Client(json.dumps(lazy(good)), json.dumps(good))
    data = compact(root, cwd, client)["data"]
    assert len(client.seen) == 2 and data["written"]
    # the re-ask redoes only what needed the model; the first answer's verdicts (ids all "x")
    # are rebuilt by repair, so that section is the offline engine's
    assert data["engine"] == "sampling+offline"
    assert data["sections"]["verification"]["source"] == "offline"
    feedback = client.seen[1].messages[-1].content.text  # type: ignore[union-attr]
    assert "problems" in feedback and "FX-01" in feedback  # the step's re-ask, verified again


def test_unusable_answers_fall_back_to_offline_with_a_notice(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    client = Client("I would rather not.", '{"deliverables": 3}')
    result = compact(root, cwd, client)
    data = result["data"]
    assert data["engine"] == "offline" and data["fell_back"] is True and data["written"]
    unusable = [w for w in result["warnings"] if "was unusable" in w]
    assert unusable and all(
        w.startswith("notice: the MCP client's model's answer") for w in unusable
    )
    assert not any("Claude" in w for w in result["warnings"])  # the client's model, not Claude


def test_a_refused_sampling_request_falls_back(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    client = Client(ErrorData(code=-1, message="User rejected sampling request"))
    result = compact(root, cwd, client)
    assert result["data"]["engine"] == "offline" and result["data"]["fell_back"] is True
    assert any("refused the sampling request" in w for w in result["warnings"])


def test_a_client_without_sampling_gets_offline_and_the_host_tools(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    result = compact(root, cwd, None)
    assert result["data"]["engine"] == "offline"
    assert HOST_NOTICE in result["warnings"]

    async def forced(calls: Calls) -> str:
        return await calls.error("phase_compact", phase="3", engine="sampling")

    message = with_server(root, cwd, forced, env=AUTO)
    assert message.endswith("this MCP client does not declare the sampling capability")


def test_a_sampled_answer_nested_past_the_decoders_limit_is_unusable(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    result = compact(root, cwd, Client(deep, deep))
    assert result["data"]["engine"] == "offline" and result["data"]["fell_back"] is True
    assert any("was unusable" in w for w in result["warnings"])


def test_a_sampling_reply_with_null_text_falls_back_to_offline_with_a_notice(
    tmp_path: Path,
) -> None:
    """`"text": null` (which the SDK's client would not send: a raw client does) is the client's
    model unavailable: the offline engine answers, with a notice, never an internal error."""
    from tests.mcp.test_raw_jsonrpc import INITIALIZE, Raw

    root, _ = demo(tmp_path)
    server = Raw(root)
    try:
        hello = json.loads(json.dumps(INITIALIZE))
        hello["params"]["capabilities"] = {"sampling": {}}
        server.send(hello)
        assert server.reply()["id"] == 1
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "phase_compact",
                                "arguments": {"phase": "3", "engine": "auto", "today": TODAY}}})  # fmt: skip
        asked = 0
        while (message := server.reply()).get("method") == "sampling/createMessage":
            asked += 1
            server.send({"jsonrpc": "2.0", "id": message["id"],
                         "result": {"role": "assistant", "model": "m",
                                    "content": {"type": "text", "text": None}}})  # fmt: skip
        assert asked and message["id"] == 2 and not message["result"].get("isError")
        result = json.loads(message["result"]["content"][0]["text"])
        assert result["data"]["engine"] == "offline" and result["data"]["fell_back"] is True
        assert any("sampling reply could not be read" in w for w in result["warnings"])
    finally:
        server.close()


class Stalling:
    """A sampling callback that never answers (it waits until the test ends)."""

    def __init__(self) -> None:
        self.entered = anyio.Event()

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        self.entered.set()
        await anyio.sleep(600)
        raise AssertionError("never answered")


def test_a_cancelled_call_stops_waiting_for_the_clients_model_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """The client cancels a call whose sampling request it never answers: the server stops
    waiting at once (not at the 300 s deadline), writes nothing, and answers the next call."""
    root, cwd = demo(tmp_path)
    client = Stalling()

    async def scenario(calls: Calls) -> tuple[float, dict[str, Any]]:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(calls.session.call_tool, "phase_compact",
                                     {"phase": "3", "apply": True, "engine": "sampling"}))  # fmt: skip
            with anyio.fail_after(60):
                await client.entered.wait()
            group.cancel_scope.cancel()  # the client SDK sends notifications/cancelled
        started = time.monotonic()
        with anyio.fail_after(60):
            summary = await calls.ok("memory_summary")
        return time.monotonic() - started, summary

    env = {**AUTO, "LEGION_LLM_DEADLINE": "300"}
    took, summary = with_server(root, cwd, scenario, env=env, sampling_callback=client)
    assert took < 20 and summary["ok"]
    assert not (root / COMPACTED).exists()
