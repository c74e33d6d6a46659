"""The claude CLI stays bounded whatever it does (issue 25, points 3, 4 and 10): what it prints is
capped, a grandchild that leaves the session and holds the pipes is not waited for, JSON nested
past the limit is one line, and a cost figure no bill has is counted, not a crash."""

from __future__ import annotations

import math
import os
import resource
import time
from pathlib import Path

import pytest

from legion_llm.llm.claude_code import cli as claude_cli
from legion_llm.llm.claude_code.envelope import ClaudeCodeError
from legion_llm.llm.errors import BudgetExceededError
from tests.llm.claude_stub import StubClaude, answer, reply
from tests.llm.test_claude_code import GOOD, ask, bare, engine


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StubClaude:
    made = StubClaude(tmp_path / "bin")
    monkeypatch.setenv("PATH", made.on_path())
    return made


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.subprocess
def test_a_cli_that_keeps_printing_is_stopped_at_the_cap(
    stub: StubClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_cli, "MAX_CAPTURE_BYTES", 2 * 2**20)
    stub.script(reply("flood"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(
        ClaudeCodeError, match=r"^Claude Code printed more than 2 MB; it was stopped$"
    ):
        ask(bare(LEGION_LLM_DEADLINE="60"))
    assert time.monotonic() - started < 30  # stopped at the cap, not at the deadline
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 64 * 1024  # what was read is bounded (was gigabytes)
    assert _gone(stub.print_calls()[0]["pid"])


def test_the_default_cap_is_16_mb() -> None:
    assert claude_cli.MAX_CAPTURE_BYTES == 16 * 2**20


@pytest.mark.subprocess
def test_a_grandchild_that_leaves_the_session_does_not_hold_the_deadline(
    stub: StubClaude,
) -> None:
    """The CLI sleeps past the deadline; its child called setsid and keeps stdout open for 60 s."""
    stub.script(reply("orphan", seconds=60, parent_seconds=60))
    started = time.monotonic()
    with pytest.raises(ClaudeCodeError, match=r"no answer within 1 s \(deadline_s\)"):
        ask(bare(LEGION_LLM_DEADLINE="1"))
    assert time.monotonic() - started < 1 + claude_cli.TERM_GRACE_S + 5  # was: the child's 60 s
    orphan = next(call["orphan"] for call in stub.calls() if "orphan" in call)
    deadline = time.monotonic() + 5
    while not _gone(orphan) and time.monotonic() < deadline:  # killed as a holder of the pipes
        time.sleep(0.05)
    assert _gone(orphan)


@pytest.mark.subprocess
def test_an_answer_is_kept_when_a_grandchild_holds_the_pipes_after_the_cli_exits(
    stub: StubClaude,
) -> None:
    stub.script(reply("orphan", seconds=60, answer=GOOD))
    started = time.monotonic()
    result = ask(bare(LEGION_LLM_DEADLINE="60"))
    assert result.output.echo == "legion"
    assert time.monotonic() - started < claude_cli.PIPE_GRACE_S + claude_cli.TERM_GRACE_S + 5


@pytest.mark.subprocess
def test_stdout_nested_too_deeply_is_one_line(stub: StubClaude) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    stub.script(reply("garbage", stdout=deep + "\n"))
    with pytest.raises(
        ClaudeCodeError, match=r"^claude printed JSON that is nested deeper than 32 levels"
    ):
        ask(bare())


@pytest.mark.subprocess
def test_auth_status_nested_too_deeply_leaves_auto_offline(stub: StubClaude) -> None:
    stub.script(answer(GOOD), auth_stdout="{" + '"a":{' * 100_000 + "}" * 100_001)
    chosen = engine("auto")
    assert chosen.name == "offline"
    assert "`claude auth status` printed JSON that is nested deeper" in chosen.notices.messages[0]


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "figures",
    [{"total": math.nan, "row_cost": math.nan}, {"total": -5.0, "row_cost": -5.0}, {},
     {"total": math.inf}],
    ids=["nan", "negative", "missing", "infinite"],
)  # fmt: skip
def test_a_cost_no_bill_has_is_counted_at_the_dearest_rates(
    stub: StubClaude, figures: dict[str, float]
) -> None:
    stub.script(reply("odd_cost", output=GOOD, **figures))
    chosen = bare(LEGION_LLM_MODEL="claude-future-9", LEGION_LLM_MAX_COST="1")
    result = ask(chosen)
    cost = chosen.meter.total.estimated_cost_usd
    assert result.output.echo == "legion" and math.isfinite(cost) and cost > 0
    assert any("reported no usable cost" in n for n in chosen.notices.messages)


@pytest.mark.subprocess
def test_no_cost_and_no_tokens_counts_the_most_the_call_could_cost(stub: StubClaude) -> None:
    stub.script(reply("odd_cost", output=GOOD, no_tokens=True))
    chosen = bare(LEGION_LLM_MAX_COST="0.05")
    ask(chosen)
    assert chosen.meter.total.estimated_cost_usd > 0 and chosen.meter.total.calls == 1


@pytest.mark.subprocess
def test_a_nan_cost_under_a_cap_that_it_reaches_stops_with_a_budget_error(stub: StubClaude) -> None:
    stub.script(reply("odd_cost", output=GOOD, total=math.nan, no_tokens=True))
    chosen = bare(LEGION_LLM_MAX_COST="0.0005")
    with pytest.raises(BudgetExceededError):
        for _ in range(50):
            ask(chosen)
