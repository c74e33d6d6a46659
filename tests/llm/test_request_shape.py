"""What each request sends: stable prefix first, cache markers where they pay, effort and thinking
per model, exact counts, a cap that cuts max_tokens; and that the fake's cache is really read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from legion_llm.llm.claude_api.request import build_request, without_titles
from legion_llm.llm.engine import Engine
from legion_llm.llm.pricing import model_info
from legion_llm.llm.prompts import RenderedPrompt, load_prompt
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from tests.fakes import FakeMessagesAPI, RecordedRequest, Reply
from tests.fakes.replies import STATUS_TYPES

Make = Callable[..., Engine]
GOOD = {"echo": "legion", "length": 6}
LONG = "The ledger service settles invoices nightly and reconciles them against the bank. " * 120
DOC_PROMPT = """A test prompt with a stable context part.

# system
You answer questions about the document in the context block. Answer only with the fields asked.

# context
{{document}}

# user
{{question}}
"""


def prompt(system: str = "Short.", context: str = "", user: str = "Go.") -> RenderedPrompt:
    return RenderedPrompt("test", "0" * 64, system, user, context)


def marked(block: dict[str, Any]) -> bool:
    return block.get("cache_control") == {"type": "ephemeral"}


def test_markers_only_where_the_prefix_reaches_the_minimum() -> None:
    sonnet = model_info("claude-sonnet-5-5")  # minimum 1,024
    short = build_request(SelfTestReply, prompt(), info=sonnet, max_tokens=100, mode="json_schema")
    assert not marked(short["system"][0])
    assert short["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Go."}]}]

    long_context = build_request(SelfTestReply, prompt(context=LONG, user="Which bank?"),
                                 info=sonnet, max_tokens=100, mode="json_schema")  # fmt: skip
    system, (context, question) = long_context["system"][0], long_context["messages"][0]["content"]
    assert not marked(system) and marked(context) and not marked(question)
    assert (context["text"], question["text"]) == (LONG, "Which bank?")  # stable part first

    both = build_request(SelfTestReply, prompt(system=LONG, context=LONG), info=sonnet,
                         max_tokens=100, mode="json_schema")  # fmt: skip
    assert marked(both["system"][0]) and marked(both["messages"][0]["content"][0])

    haiku = model_info("claude-haiku-5-5")  # minimum 4,096: the same context does not reach it
    assert not any(marked(b) for b in build_request(
        SelfTestReply, prompt(context=LONG), info=haiku, max_tokens=100, mode="json_schema"
    )["messages"][0]["content"])  # fmt: skip


@pytest.mark.parametrize(
    ("model", "thinking", "effort", "room"),
    [("claude-haiku-5-5", {"type": "disabled"}, "low", 0),
     ("claude-sonnet-5-5", {"type": "between_tools"}, "low", 0),
     ("claude-opus-5-5", {"type": "adaptive", "display": "summarized"}, "low", 2048),
     ("claude-sonnet-4-6", None, "low", 0),
     ("claude-haiku-4-5", None, None, 0)],
)  # fmt: skip
def test_effort_and_thinking_per_model(
    model: str, thinking: dict[str, str] | None, effort: str | None, room: int
) -> None:
    info = model_info(model)
    sent = build_request(SelfTestReply, prompt(), info=info, max_tokens=500, mode=info.structured)
    assert sent.get("thinking") == thinking
    assert sent.get("output_config", {}).get("effort") == effort
    assert sent["max_tokens"] == 500 + room
    assert ("tools" in sent) == (info.structured == "tool")


def test_effort_setting_overrides_the_step_choice() -> None:
    info = model_info("claude-sonnet-5-5")
    sent = build_request(SelfTestReply, prompt(), info=info, max_tokens=10, mode="json_schema",
                         effort="high")  # fmt: skip
    assert sent["output_config"]["effort"] == "high"


class Titled(BaseModel):
    """A schema with a field called title."""

    title: str = Field(description="The heading.")
    items: list[str] = Field(default_factory=list, title="Explicit title")


def test_schema_titles_are_dropped_but_a_title_property_stays() -> None:
    info = model_info("claude-sonnet-5-5")
    schema = build_request(Titled, prompt(), info=info, max_tokens=10,
                           mode="json_schema")["output_config"]["format"]["schema"]  # fmt: skip
    assert set(schema["properties"]) == {"title", "items"} and "title" in schema["required"]
    assert "Explicit title" not in json.dumps(schema) and '"title": "Titled"' not in json.dumps(
        schema
    )
    assert without_titles({"default": {"title": "kept"}, "title": "x"}) == {
        "default": {"title": "kept"}
    }


@pytest.fixture
def doc_prompts(tmp_path: Path) -> Path:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "doc-question.md").write_text(DOC_PROMPT, encoding="utf-8")
    return folder


def ask_doc(engine: Engine, question: str) -> Any:
    return engine.ask(SelfTestReply, "doc-question", {"document": LONG, "question": question})


def test_a_reask_and_a_second_request_read_the_cache_on_the_fake(
    fake_api: FakeMessagesAPI, on_fake: Make, doc_prompts: Path
) -> None:
    assert load_prompt("doc-question", doc_prompts).context_template == "{{document}}"
    fake_api.enqueue(Reply.answer({"echo": "legion"}), Reply.answer(GOOD), Reply.answer(GOOD))
    engine = on_fake(model="claude-sonnet-5-5", prompts_dir=doc_prompts, fallback_offline=False)

    first = ask_doc(engine, "Repeat the word legion.")  # invalid, then the re-ask
    second = ask_doc(engine, "Repeat the word legion, again.")

    calls = [r.usage for r in fake_api.calls()]
    assert first.usage.calls == 2 and second.usage.calls == 1
    assert (
        calls[0]["cache_creation_input_tokens"] > 1500 and calls[0]["cache_read_input_tokens"] == 0
    )  # type: ignore[index]
    for later in calls[1:]:  # the re-ask, then a new question on the same document
        assert later["cache_read_input_tokens"] == calls[0]["cache_creation_input_tokens"]  # type: ignore[index]
        assert later["input_tokens"] < 200  # type: ignore[index]
    reask = fake_api.calls()[1].body["messages"]
    assert reask[0] == fake_api.calls()[0].body["messages"][0]  # the cached prefix, unchanged
    assert engine.meter.total.avoided_by_cache_usd > 0


def test_exact_counts_are_used_cached_and_reported_with_the_estimate(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    fake_api.enqueue(Reply.answer(GOOD), Reply.answer(GOOD))
    engine = on_fake(fallback_offline=False)
    engine.ask(SelfTestReply, PROMPT, {"word": "legion"})
    engine.ask(SelfTestReply, PROMPT, {"word": "legion"})
    counts = fake_api.calls("/v1/messages/count_tokens")
    assert len(counts) == 1  # the same request text is counted once
    usage = engine.meter.as_dict()
    assert usage["input_tokens_counted"] == 2 * counts[0].usage["input_tokens"]  # type: ignore[index]
    assert usage["input_tokens_estimated"] > 0
    assert counts[0].body["messages"] == fake_api.calls()[0].body["messages"]


def test_when_counting_is_refused_estimates_are_used_for_the_run(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    def refuse_counts(request: RecordedRequest) -> Reply | None:
        return Reply.error(404) if request.path.endswith("count_tokens") else None

    fake_api.responder = refuse_counts
    fake_api.enqueue(Reply.answer(GOOD), Reply.answer(GOOD))
    engine = on_fake(fallback_offline=False)
    for word in ("legion", "legion"):
        assert engine.ask(SelfTestReply, PROMPT, {"word": word}).engine == "anthropic"
    assert len(fake_api.calls("/v1/messages/count_tokens")) == 1
    assert engine.meter.as_dict()["input_tokens_counted"] is None
    assert STATUS_TYPES[404] == "not_found_error"


def test_the_cap_cuts_max_tokens_to_what_the_money_left_pays_for(
    fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    fake_api.enqueue(Reply.answer(GOOD))
    # Sonnet 5.5 at $10/MTok output: $0.02 pays well over the expected answer, not 16,000 tokens
    engine = on_fake(model="claude-sonnet-5-5", max_tokens=16_000, max_cost_usd=0.02,
                     fallback_offline=False)  # fmt: skip
    engine.ask(SelfTestReply, PROMPT, {"word": "legion"})
    sent = fake_api.calls()[0].body["max_tokens"]
    assert 1000 < sent < 2000
    assert engine.meter.spent_usd <= 0.02  # type: ignore[attr-defined]
