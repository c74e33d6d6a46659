"""The compaction chunker and the engine measure a request the same way: every part the chunker
plans passes the engine's own size check, whatever the model's tokenizer factor and whether or
not the API's count_tokens answers (LEGION_LLM_MAX_INPUT_TOKENS made small on purpose)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from legion_llm.llm.claude_api.request import request_text
from legion_llm.llm.engine import Engine
from legion_llm.llm.errors import TokenBudgetError
from legion_llm.llm.pricing import model_info
from legion_llm.llm.tokens import count_tokens
from legion_llm.pipeline.compact.run import compact_phase
from tests.fakes import FakeMessagesAPI, Reply
from tests.fakes.compaction_models import PhaseModel
from tests.fakes.messages_api import RecordedRequest
from tests.pipeline.compaction_cases import TODAY, phase_of

Make = Callable[..., Engine]


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-sonnet-4-6"])
@pytest.mark.parametrize("cap", [5000, 6000])
def test_every_planned_part_passes_the_engines_size_check(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make, model: str, cap: int
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    fake_api.responder = _without_count_tokens(PhaseModel(phase))
    engine = on_fake(model=model, max_input_tokens=cap)
    result = compact_phase(phase, engine, today=TODAY)
    calls = fake_api.calls()
    assert result.written and result.report.ok and result.chunks == len(calls) > 1
    info = model_info(model)
    for call in calls:
        assert info.scale(count_tokens(request_text(call.body))) <= cap
    assert {a["engine"] for a in result.answers} == {"anthropic"}


def test_a_budget_the_prompt_alone_fills_is_one_clear_error(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    fake_api.responder = _without_count_tokens(PhaseModel(phase))
    with pytest.raises(TokenBudgetError, match="leaves no room for any summary"):
        compact_phase(phase, on_fake(model="claude-sonnet-5-5", max_input_tokens=3000), today=TODAY)
    assert fake_api.calls() == [] and not phase.compacted_path.exists()


def _without_count_tokens(answer: PhaseModel) -> Callable[[RecordedRequest], Reply | None]:
    """The stand-in model, behind a proxy that does not offer count_tokens: the offline estimate
    decides every size check."""

    def responder(request: RecordedRequest) -> Reply | None:
        if request.path.endswith("/count_tokens"):
            return Reply.error(404)
        return answer(request)

    return responder
