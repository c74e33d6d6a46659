"""The compaction eval through the real SDK against a stand-in that answers like a careless model.

Every call gets a schema-valid, lazy PhaseDigest built from the prompt it was sent (plan ids and
must-keep ids copied, every text `x`, every verdict PASS): the eval's grounding gates must still
pass, because such answers are re-asked once and then replaced by the offline engine's text.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.evals.compaction import run_compaction_eval
from legion_llm.llm.engine import Engine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.pipeline.compact.offline import PROMPT, compact_offline
from tests.conftest import FIXTURES
from tests.llm.conftest import message, stream_reply

CASES = ("missing-plan-summary", "prose-status-requirements", "brace-lists-and-bare-names",
         "partial-and-failed-plans")  # fmt: skip


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, compact_offline)
    return reg


def careless_answer(request: httpx.Request) -> httpx.Response:
    prompt = json.dumps(json.loads(request.content)["messages"])
    plans = re.findall(r"\\n- (\d+(?:\.\d+)?-\d+[a-z]?): ", prompt)
    lists = prompt.split("Requirement ids that must appear")[1].split("Target length")[0]
    listed = re.findall(r"\\n- ([^:\\]+): (?:pass|partial|fail|not verified)", lists)
    digest = {
        "deliverables": [{"plan_id": p, "summary": "x", "follow_ups": []} for p in plans],
        "decisions": [{"plan_id": "x", "decision": "None recorded", "rationale": "",
                       "rejected_alternatives": []}],
        "files": [{"path": "x", "change": "x"}],
        "verification": [{"requirement_id": i, "verdict": "pass", "evidence": "x"} for i in listed],
        "checks": [{"plan_id": "Plan x", "result": "x"}],
        "agents": [],
    }  # fmt: skip
    block = {"type": "tool_use", "id": "toolu_1", "name": "record_phase_digest", "input": digest}
    return stream_reply(message([block]))


def test_the_grounding_gates_hold_against_a_careless_model(
    tmp_path: Path, api: respx.MockRouter, claude: Callable[..., Engine]
) -> None:
    for name in CASES:
        shutil.copytree(FIXTURES / "phases" / name, tmp_path / name)
    route = api.post("/v1/messages").mock(side_effect=careless_answer)
    engine = claude(fallback_offline=False)
    run = run_compaction_eval(engine, tmp_path, today=date(2026, 11, 30))
    assert route.call_count == 2 * len(CASES)  # one re-ask each, never more
    assert [c.error for c in run.cases] == [None] * len(CASES)
    assert run.passed, [(c.name, c.failed_gates) for c in run.cases]
    for case in run.cases:
        scores: dict[str, Any] = case.scores
        assert (scores["ungrounded_verdicts"], scores["placeholder_cells"], scores["unknown_plans"],
                scores["deliverables_without_overlap"]) == (0, 0, 0, 0)  # fmt: skip
        assert "verification" in scores["sections_from_offline"]
        assert case.engine == "offline"  # nothing of the careless answer survived
