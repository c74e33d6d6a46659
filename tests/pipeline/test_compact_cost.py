"""Compaction at close to minimum cost, against the loopback fake that bills and caches like the
API: no re-ask for what repair fixes, a re-ask that reads the summaries from the cache, a second
part that reads the prompt from it, command output cut before sending, and a cost cap reached
mid-run that finishes offline without throwing paid work away."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from legion_llm.llm.budget import UsageMeter
from legion_llm.llm.engine import Engine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.pricing import call_cost_bound, estimate_cost, model_info
from legion_llm.pipeline.compact.logs import marker, reduce_output
from legion_llm.pipeline.compact.offline import PROMPT, compact_offline
from legion_llm.pipeline.compact.run import compact_phase
from tests.fakes import FakeMessagesAPI
from tests.fakes.compaction_models import PhaseModel, request_text
from tests.pipeline.compaction_cases import TODAY, phase_of

Make = Callable[..., Engine]
SONNET = "claude-sonnet-5-5"  # cache minimum 1,024: the prompt and the summaries both reach it


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, compact_offline)
    return reg


def test_a_careless_answer_is_repaired_without_a_re_ask(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    fake_api.responder = PhaseModel(phase, careless=True)
    result = compact_phase(phase, on_fake(model=SONNET), today=TODAY)
    assert len(fake_api.calls()) == 1 and result.report.ok and not result.fell_back
    assert any("removed src/billing/export_helpers.py" in r for r in result.repaired)
    assert "export_helpers" not in result.text
    assert any("added to Files Modified" in r for r in result.repaired)


def test_a_re_ask_reads_the_summaries_from_the_cache(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    fake_api.responder = PhaseModel(phase, lazy_first=True)
    engine = on_fake(model=SONNET)
    result = compact_phase(phase, engine, today=TODAY)
    first, second = fake_api.calls()
    assert first.usage["cache_creation_input_tokens"] > 3000  # type: ignore[index]
    assert second.usage["cache_read_input_tokens"] == first.usage["cache_creation_input_tokens"]  # type: ignore[index]
    assert second.usage["input_tokens"] < 400  # type: ignore[index]  # the problems, nothing more
    reask = second.body["messages"][0]["content"][-1]["text"]
    assert "Redo only these sections: deliverables, decisions." in reask
    assert [a["reask"] for a in result.answers] == [False, True] and result.report.ok
    assert result.settled.sections["deliverables"]["proposal"] == 1 and not result.fell_back
    assert engine.meter.total.avoided_by_cache_usd > 0  # the read saved more than the write cost


def test_a_second_part_of_the_phase_reads_the_prompt_from_the_cache(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("very-large-phase", tmp_path, "7")
    fake_api.responder = PhaseModel(phase)
    result = compact_phase(phase, on_fake(model=SONNET), today=TODAY)
    calls = fake_api.calls()
    assert result.chunks == len(calls) == 3 and result.report.ok
    prefix = calls[0].usage["cache_creation_input_tokens"]  # type: ignore[index]
    assert prefix > 1000
    for later in calls[1:]:
        assert later.usage["cache_read_input_tokens"] >= 1000  # type: ignore[index]
    # the 119k tokens of mostly logs went out as far fewer
    billed = sum(
        c.usage["input_tokens"]
        + c.usage["cache_creation_input_tokens"]  # type: ignore[index]
        + c.usage["cache_read_input_tokens"]
        for c in calls
    )  # type: ignore[index]
    assert billed < 0.35 * result.report.tokens_original


def _reservations(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    seen: list[tuple[int, int, int]] = []
    original = UsageMeter.reserve

    def spy(self: UsageMeter, info: Any, *, input_tokens: int, expected_output: int,
            max_tokens: int) -> int:  # fmt: skip
        seen.append((input_tokens, expected_output, max_tokens))
        return original(self, info, input_tokens=input_tokens, expected_output=expected_output,
                        max_tokens=max_tokens)  # fmt: skip

    monkeypatch.setattr(UsageMeter, "reserve", spy)
    return seen


def test_the_cap_reached_mid_run_finishes_offline_and_writes_a_marked_file(
    tmp_path: Path, on_fake: Make, fake_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = model_info(SONNET)
    seen = _reservations(monkeypatch)
    uncapped = phase_of("very-large-phase", tmp_path / "a", "7")
    fake_api.responder = PhaseModel(uncapped)
    compact_phase(uncapped, on_fake(model=SONNET), today=TODAY, write=False)
    costs = [estimate_cost(info, **{k: c.usage[k] for k in ("input_tokens", "output_tokens",  # type: ignore[index]
             "cache_read_input_tokens", "cache_creation_input_tokens")}) for c in fake_api.calls()]  # fmt: skip
    needs = [call_cost_bound(info, input_tokens=i, output_tokens=min(e, m)) for i, e, m in seen]
    cap = costs[0] + needs[1] * 0.5  # enough for the first call, not for the second
    assert cap >= needs[0] and cap - costs[0] < needs[1]

    phase = phase_of("very-large-phase", tmp_path / "b", "7")
    fake_api.requests.clear()
    fake_api.cache.clear()  # the same first call again, billed the same
    fake_api.responder = PhaseModel(phase)
    engine = on_fake(model=SONNET, max_cost_usd=cap)
    result = compact_phase(phase, engine, today=TODAY)
    paid = fake_api.calls()
    assert len(paid) == 1 and result.written and result.report.ok
    assert engine.meter.spent_usd <= cap  # type: ignore[attr-defined]
    sources = [(a["engine"], a["fallback_reason"] or "") for a in result.answers]
    assert sources[0] == ("anthropic", "")
    assert all(e == "offline" and r.startswith("--max-cost: ") for e, r in sources[1:])
    assert len(sources) == result.chunks == 3
    # the paid answer is in the file (no section fell back to the offline engine's text)
    assert result.settled.proposals[0].source == "anthropic+offline"
    assert not any(s["fallback"] for s in result.settled.sections.values())
    text = phase.compacted_path.read_text()
    assert (
        'parts_from: "anthropic: 07-01, 07-02, 07-03, 07-04; offline (--max-cost reached):' in text
    )
    assert any("nothing paid was discarded" in w for w in result.warnings)
    usage = engine.meter.as_dict()
    assert usage["avoided"]["calls_refused_by_cap"] == 1 and usage["avoided"]["by_cap_usd"] > 0


def test_a_cap_too_small_for_one_call_stops_before_anything_is_paid(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    from legion_llm.llm.errors import BudgetExceededError

    phase = phase_of("legion-spec-billing-exports", tmp_path, "3")
    fake_api.responder = PhaseModel(phase)
    with pytest.raises(BudgetExceededError):
        compact_phase(phase, on_fake(model=SONNET, max_cost_usd=0.0001), today=TODAY)
    assert fake_api.calls() == [] and not phase.compacted_path.exists()


LOG = """Ran the suite:

```
$ pnpm vitest run
 RUN  v2.1.0 /repo
 ✓ src/ok/one.test.ts (3 tests) 12ms
 ✓ tests/a.test.ts > adds
 ✓ tests/a.test.ts > subtracts
 ✓ tests/a.test.ts > multiplies
 ✓ tests/a.test.ts > divides
 ✓ tests/a.test.ts > rounds
 ✗ tests/b.test.ts > exports CSV for BILL-02
 AssertionError: expected 3 to be 4
 Tests  6 passed | 1 failed (7)
```

```
tiny
block
```
"""


def test_long_command_output_is_cut_to_what_matters() -> None:
    cut = reduce_output(LOG, ["BILL-02"], ["src/billing/export.py"])
    assert "$ pnpm vitest run" in cut  # a command
    assert "✗ tests/b.test.ts > exports CSV for BILL-02" in cut  # an error naming an id
    assert "AssertionError: expected 3 to be 4" in cut and "6 passed | 1 failed" in cut
    assert "> divides" not in cut and marker(5) in cut  # five passing lines became one marker
    assert "```\ntiny\nblock\n```" in cut  # a short block is sent whole
    assert cut.startswith("Ran the suite:")  # prose untouched
    paths = reduce_output(LOG, [], ["tests/a.test.ts"])
    assert "> divides" in paths  # a line naming an extracted path is kept


def test_a_key_block_inside_long_output_is_kept_whole_for_redaction() -> None:
    """Cut line by line, a private key's body lines (base64 that may read like `/fail`) could be
    kept without its BEGIN line, and redaction would no longer know them as a key."""
    from legion_llm.memory.redact import Redactor

    body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC/failBKcwggSjAgEAAoIBAQC7" + "A" * 8] * 3
    dashes = "-" * 5  # built here, so that the repository holds no key block (a test scans it)
    begin, end = f"{dashes}BEGIN PRIVATE KEY{dashes}", f"{dashes}END PRIVATE KEY{dashes}"
    log = "\n".join(
        ["```", "$ cat deploy/key.pem", *[f"compiling unit {n} of the bundle" for n in range(10)],
         begin, *body, end, *[f"compiling unit {n} of the bundle" for n in range(10, 20)], "```"]
    )  # fmt: skip
    cut = reduce_output(log, [], [])
    assert "\n".join([begin, *body, end]) in cut
    assert marker(10) in cut  # the rest is still cut
    redacted = Redactor().text(cut)
    assert "MIIEvQ" not in redacted and "[REDACTED:private-key]" in redacted


def test_only_the_prompt_is_cut_the_originals_are_not(
    tmp_path: Path, fake_api: FakeMessagesAPI, on_fake: Make
) -> None:
    phase = phase_of("decimal-phase", tmp_path, "6.1")
    fake_api.responder = PhaseModel(phase)
    result = compact_phase(phase, on_fake(model=SONNET), today=TODAY, write=False)
    sent = request_text(fake_api.calls()[0])
    assert "lines of output left out]" in sent and "pinned_evicted" not in sent
    assert "pinned_evicted" in "".join(p.read_text() for _, p in phase.summaries)
    assert result.report.ok
