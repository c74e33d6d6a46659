"""The sampling engine without an MCP session: a Sampler stand-in answers (the stdio round trip
is tests/mcp/test_sampling.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import FallbackEngine, Notices
from legion_llm.llm.sampling import (
    Sampler,
    SampleReply,
    SampleRequest,
    SamplingUnavailableError,
    parse_reply,
    select_mcp_engine,
)
from legion_llm.llm.selftest import PROMPT, SelfTestReply

GOOD: dict[str, Any] = {"echo": "legion", "length": 6}


def sampler(*texts: str) -> tuple[list[SampleRequest], Sampler]:
    seen: list[SampleRequest] = []

    def sample(request: SampleRequest) -> SampleReply:
        seen.append(request)
        return SampleReply(texts[min(len(seen), len(texts)) - 1], "client-model")

    return seen, sample


def test_explicit_sampling_answers_an_unusable_answer_offline() -> None:
    seen, sample = sampler("I'd rather not.", "still no JSON")
    config = resolve_llm_config({}, env={})
    chosen = select_mcp_engine("sampling", config, sampler=sample, env={},
                               notices=Notices(sink=None))  # fmt: skip
    assert isinstance(chosen, FallbackEngine) and chosen.explicit
    answer = chosen.ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert answer.engine == "offline" and "holds no JSON object" in str(answer.fallback_reason)
    assert len(seen) == 1 and "was unusable" in chosen.notices.messages[0]


def test_explicit_sampling_that_the_client_refuses_ends_the_command() -> None:
    def refuse(request: SampleRequest) -> SampleReply:
        raise SamplingUnavailableError("the MCP client refused the sampling request: no")

    config = resolve_llm_config({}, env={})
    chosen = select_mcp_engine("sampling", config, sampler=refuse, env={},
                               notices=Notices(sink=None))  # fmt: skip
    with pytest.raises(SamplingUnavailableError, match="refused the sampling request"):
        chosen.ask(SelfTestReply, PROMPT, {"word": "legion"})


@pytest.mark.parametrize(
    "text",
    [json.dumps(GOOD), f"```json\n{json.dumps(GOOD)}\n```",
     f"Here it is: {json.dumps(GOOD)} Hope that helps {{:)}}",
     f"{json.dumps(GOOD)}\n\nNote: `length` counts characters, e.g. {{'a': 1}}."],
)  # fmt: skip
def test_a_reply_with_text_around_the_object_parses(text: str) -> None:
    assert parse_reply(text, SelfTestReply, PROMPT) == (SelfTestReply(**GOOD), "")
