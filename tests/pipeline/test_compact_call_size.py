"""The compaction chunker and the engine measure a request the same way: every part the chunker
plans passes the engine's own size check, whatever the model's tokenizer factor and whether or
not the API's count_tokens answers (LEGION_LLM_MAX_INPUT_TOKENS made small on purpose)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from legion_llm.llm.claude_api.request import request_text
from legion_llm.llm.engine import Engine, Notices
from legion_llm.llm.errors import TokenBudgetError
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.pricing import model_info
from legion_llm.llm.tokens import count_tokens
from legion_llm.pipeline.compact.offline import PROMPT, compact_offline
from legion_llm.pipeline.compact.render import PhaseDigest
from legion_llm.pipeline.compact.run import compact_phase
from tests.fakes import FakeMessagesAPI, Reply
from tests.fakes.compaction_models import PhaseModel
from tests.fakes.messages_api import RecordedRequest
from tests.pipeline.compaction_cases import TODAY, phase_of

Make = Callable[..., Engine]


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, compact_offline)
    return reg


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


class Unfounded(PhaseModel):
    """Answers every text in another language: every item a problem, a long list of feedback."""

    def digest(self, text: str, careless: bool | None = None) -> PhaseDigest:
        digest = super().digest(text, careless)
        said = "Dieser Plan hat die Funktion vollständig umgesetzt."
        return digest.model_copy(update={
            "deliverables": [d.model_copy(update={"summary": said}) for d in digest.deliverables],
            "files": [f.model_copy(update={"change": "geändert und getestet"}) for f in digest.files],
        })  # fmt: skip


def test_a_re_ask_too_large_for_the_budget_is_not_made_and_nothing_paid_is_lost(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("ten-plan-phase", tmp_path, "5")
    fake_api.responder = _without_count_tokens(Unfounded(phase))
    engine = on_fake(model="claude-sonnet-5-5", max_input_tokens=8000)
    result = compact_phase(phase, engine, today=TODAY)
    assert result.written and result.report.ok and result.fell_back
    assert result.chunks <= len(fake_api.calls()) < 2 * result.chunks  # not every re-ask fit
    assert any("re-ask" in w and "input budget" in w for w in result.warnings)
    assert "Dieser Plan" not in result.text and result.settled.sections["files"]["fallback"]


def test_a_schema_retry_too_large_for_the_budget_is_an_unusable_answer(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make, collected: Notices
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    broken = {"deliverables": [{"plan_id": "03-01", "summary": "x " * 3000}], "files": "none"}
    fake_api.responder = lambda request: (
        Reply.error(404) if request.path.endswith("/count_tokens") else Reply.answer(broken)
    )
    result = compact_phase(phase, on_fake(model="claude-sonnet-5-5", max_input_tokens=8000),
                           today=TODAY)  # fmt: skip
    assert len(fake_api.calls()) == result.chunks  # the retry, with the answer, would not fit
    assert result.written and result.engine == "offline" and result.fell_back
    assert any("did not match PhaseDigest" in n and "input budget" in n for n in collected.messages)


def _without_count_tokens(answer: PhaseModel) -> Callable[[RecordedRequest], Reply | None]:
    """The stand-in model, behind a proxy that does not offer count_tokens: the offline estimate
    decides every size check."""

    def responder(request: RecordedRequest) -> Reply | None:
        if request.path.endswith("/count_tokens"):
            return Reply.error(404)
        return answer(request)

    return responder
