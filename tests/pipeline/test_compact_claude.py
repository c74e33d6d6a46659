"""The Claude path of compaction over HTTP (respx on the SDK's httpcore2 transport).

Replies are recorded-style Messages API bodies: a `record_phase_digest` tool call whose input is
a PhaseDigest, with realistic usage. One reply drops a requirement id, one invents a path; the
tests show the re-ask that lists the problem and, when the second reply is no better, the repair.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.engine import Engine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.pipeline.compact.offline import PROMPT, compact_offline
from legion_llm.pipeline.compact.render import FileItem, PhaseDigest
from legion_llm.pipeline.compact.run import compact_phase
from tests.llm.conftest import body, message
from tests.pipeline.compaction_cases import TODAY, good_digest, phase_of, without_requirement

Make = Callable[..., Engine]
INVENTED = "src/harbor/search/fuzzy.py"


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, compact_offline)
    return reg


def reply(
    digest: PhaseDigest, input_tokens: int = 5_210, output_tokens: int = 1_480
) -> httpx.Response:
    block = {"type": "tool_use", "id": "toolu_01", "name": "record_phase_digest",
             "input": json.loads(digest.model_dump_json())}  # fmt: skip
    usage = {"input_tokens": input_tokens, "output_tokens": output_tokens,
             "cache_creation_input_tokens": 412, "cache_read_input_tokens": 0}  # fmt: skip
    return httpx.Response(200, json=message([block], usage=usage))


def user_text(call: Any) -> str:
    content = body(call)["messages"][0]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_dropped_id_is_re_asked_then_repaired(
    tmp_path: Path, api: respx.MockRouter, claude: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    dropped = without_requirement(good_digest(phase), "BILL-03")
    route = api.post("/v1/messages").mock(
        side_effect=[reply(dropped), reply(dropped, 6_020, 1_390)]
    )
    engine = claude(fallback_offline=False)

    result = compact_phase(phase, engine, today=TODAY)

    assert route.call_count == 2
    first, second = (body(c) for c in route.calls)
    assert first["tool_choice"] == {"type": "tool", "name": "record_phase_digest",
                                    "disable_parallel_tool_use": True}  # fmt: skip
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "BILL-01, BILL-02, BILL-03, BILL-04" in user_text(route.calls[0])  # the must-keep list
    assert "None: this is the first proposal." in user_text(route.calls[0])
    target = math.ceil(result.report.tokens_original * 0.40)  # Claude is asked for about 0.40
    assert f"about {target} tokens" in user_text(route.calls[0])
    assert "- missing requirement ids: BILL-03" in user_text(route.calls[1])
    assert first["max_tokens"] == second["max_tokens"] > 4_096
    assert result.repaired == [
        "requirement BILL-03 added to Verification (the proposal left it out)"
    ]
    assert result.engine == "anthropic" and not result.fell_back
    text = phase.compacted_path.read_text()
    assert "- BILL-03: PASS — Only finance and owner roles can export" in text
    usage = engine.meter.as_dict(engine.name)
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (2, 11_230, 2_870)


def test_dropped_id_fixed_by_the_re_ask_needs_no_repair(
    tmp_path: Path, api: respx.MockRouter, claude: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    good = good_digest(phase)
    route = api.post("/v1/messages").mock(
        side_effect=[reply(without_requirement(good, "BILL-03")), reply(good)]
    )
    result = compact_phase(phase, claude(fallback_offline=False), today=TODAY)
    assert route.call_count == 2 and result.repaired == [] and result.report.ok
    assert [a["reask"] for a in result.answers] == [False, True]
    assert all(a["model"] == "claude-sonnet-4-6" for a in result.answers)


def test_invented_path_is_re_asked_and_struck(
    tmp_path: Path, api: respx.MockRouter, claude: Make
) -> None:
    phase = phase_of("partial-and-failed-plans", tmp_path, "4")
    good = good_digest(phase)
    invented = good.model_copy(
        update={"files": [*good.files, FileItem(path=INVENTED, change="fuzzy clause builder")]}
    )
    route = api.post("/v1/messages").mock(side_effect=[reply(invented), reply(invented)])
    result = compact_phase(phase, claude(fallback_offline=False), today=TODAY)
    assert f"- paths not in the originals: {INVENTED}" in user_text(route.calls[1])
    assert result.repaired == [f"removed {INVENTED}: the originals never name it"]
    assert INVENTED not in phase.compacted_path.read_text()
    assert f"warning: repaired: removed {INVENTED}: the originals never name it" in result.warnings


def test_unusable_answer_falls_back_to_the_offline_step(
    tmp_path: Path, api: respx.MockRouter, claude: Make
) -> None:
    phase = phase_of("partial-and-failed-plans", tmp_path, "4")
    bad = httpx.Response(200, json=message([{"type": "tool_use", "id": "t", "name": "record_phase_digest",
                                              "input": {"deliverables": "nope"}}]))  # fmt: skip
    api.post("/v1/messages").mock(side_effect=[bad, bad])
    result = compact_phase(phase, claude(), today=TODAY, write=False)
    assert result.fell_back and result.engine == "offline" and result.report.ok
