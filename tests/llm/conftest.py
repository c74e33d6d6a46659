"""HTTP-level fixtures for the LLM layer: respx intercepting the SDK's httpx2/httpcore2 transport.

anthropic 2.x sends through httpx2 -> httpcore2, which plain respx does not patch. The small
mocker below registers "httpcore2" with respx (see shared/design/sdk-notes.md, option B); routes
still return plain `httpx.Response` objects. Every call is streamed, so a reply is the event
stream the API sends for a message (built by tests/fakes/replies.py, the loopback fake's own
encoder). The `api` router answers count_tokens with a fixed count unless a test overrides it.
No test here reaches the network or needs a real key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import httpcore2
import httpx
import pytest
import respx
from respx.mocks import HTTPCoreMocker

from legion_llm.llm.config import LLMConfig, resolve_llm_config
from legion_llm.llm.engine import Engine, Notices
from legion_llm.llm.factory import select_engine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.selftest import PROMPT, selftest_offline
from tests.fakes import FakeMessagesAPI
from tests.fakes.replies import sse, stream_events

API = "https://api.anthropic.com"
TEST_KEY = "sk-ant-test-0123456789-DO-NOT-LEAK"
TOOL_MODEL = "claude-sonnet-4-6"  # a forced-tool model; the `claude` fixture's default
COUNTED = 100  # what the `api` router's count_tokens answers


class HTTPCore2Mocker(HTTPCoreMocker):
    name = "httpcore2"
    targets: ClassVar[list[str]] = [
        f"httpcore2._{kind}.{cls}"
        for kind, classes in {
            "sync": [
                "connection.HTTPConnection",
                "connection_pool.ConnectionPool",
                "http_proxy.HTTPProxy",
            ],
            "async": [
                "connection.AsyncHTTPConnection",
                "connection_pool.AsyncConnectionPool",
                "http_proxy.AsyncHTTPProxy",
            ],
        }.items()
        for cls in classes
    ]

    @classmethod
    def from_sync_httpx_response(cls, httpx_response: Any, target: Any, **kwargs: Any) -> Any:
        return httpcore2.Response(
            status=httpx_response.status_code,
            headers=httpx_response.headers.raw,
            content=httpx_response.stream,
            extensions=httpx_response.extensions,
        )


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "tool_use",
    model: str = TOOL_MODEL,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 100, "output_tokens": 20},
    }


def stream_reply(reply: dict[str, Any], chunk_chars: int = 40) -> httpx.Response:
    """The event stream the API sends for the message `reply`."""
    reply = {**reply, "usage": {"cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
                                **reply["usage"]}}  # fmt: skip
    events = b"".join(sse(name, data) for name, data in stream_events(reply, chunk_chars))
    return httpx.Response(200, content=events, headers={"content-type": "text/event-stream"})


def tool_reply(tool_input: dict[str, Any], **kwargs: Any) -> httpx.Response:
    block = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "record_self_test_reply",
        "input": tool_input,
    }
    return stream_reply(message([block], **kwargs))


def text_reply(text: str, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("stop_reason", "end_turn")
    return stream_reply(message([{"type": "text", "text": text}], **kwargs))


def error_reply(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    kind = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}
    body = {"type": "error", "error": {"type": kind.get(status, "api_error"), "message": "nope"}}
    return httpx.Response(status, json=body, headers=headers or {})


def body(call: Any) -> Any:
    return json.loads(call.request.content)


@dataclass
class FakeTime:
    """An injected clock and sleep: waits are recorded, never slept."""

    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class _TimeWithoutSleep:
    """The `time` module, except that `sleep` fails the test."""

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        raise AssertionError(f"a test tried to sleep {seconds} s for real")


@pytest.fixture(autouse=True)
def _no_real_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry waits go through FakeTime; a real wait, in our retry layer or in the SDK's own
    (which must stay off), fails at once instead of slowing the suite down."""
    import anthropic._base_client

    import legion_llm.llm.claude_api.client
    import legion_llm.llm.claude_api.http

    monkeypatch.setattr(anthropic._base_client, "time", _TimeWithoutSleep())
    monkeypatch.setattr(legion_llm.llm.claude_api.client, "time", _TimeWithoutSleep())
    monkeypatch.setattr(legion_llm.llm.claude_api.http, "time", _TimeWithoutSleep())


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    with respx.mock(
        using="httpcore2", base_url=API, assert_all_called=False, assert_all_mocked=True
    ) as router:
        router.post("/v1/messages/count_tokens").mock(
            return_value=httpx.Response(200, json={"input_tokens": COUNTED})
        )
        yield router


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, selftest_offline)
    return reg


@pytest.fixture
def collected() -> Notices:
    return Notices(sink=None)


@pytest.fixture
def claude(
    fake_time: FakeTime, registry: OfflineRegistry, collected: Notices
) -> Callable[..., Engine]:
    """make(**settings) -> an engine selected as `--engine anthropic` with a test key (model
    TOOL_MODEL unless `model=` says otherwise)."""

    def make(
        engine: str = "anthropic", env: dict[str, str] | None = None, **settings: Any
    ) -> Engine:
        env = {"ANTHROPIC_API_KEY": TEST_KEY} if env is None else env
        settings.setdefault("model", TOOL_MODEL)
        config: LLMConfig = resolve_llm_config(settings, env=env)
        return select_engine(
            engine,
            config,
            env=env,
            registry=registry,
            notices=collected,
            claude_options={"sleep": fake_time.sleep, "clock": fake_time.clock},
        )

    return make


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """The loopback fake of the Messages API (tests/fakes), started for one test."""
    with FakeMessagesAPI() as fake:
        yield fake


@pytest.fixture
def on_fake(
    fake_api: FakeMessagesAPI, fake_time: FakeTime, registry: OfflineRegistry, collected: Notices
) -> Callable[..., Engine]:
    """make(engine="anthropic", **settings) -> an engine whose base URL is the loopback fake
    (default model, waits between retries recorded in fake_time instead of slept)."""

    def make(engine: str = "anthropic", prompts_dir: Path | None = None, **settings: Any) -> Engine:
        env = {"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": fake_api.base_url}
        config = resolve_llm_config(settings, env=env)
        return select_engine(engine, config, env=env, registry=registry, notices=collected,
                             prompts_dir=prompts_dir,
                             claude_options={"sleep": fake_time.sleep, "clock": fake_time.clock})  # fmt: skip

    return make
