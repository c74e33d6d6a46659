"""Issue 22, point 5: the recorded engine (record once, replay without a key, a changed request
fails loudly) and simulated judges that show the eval harness catches a bad judge."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from legion_llm.evals.error_data import load_dataset
from legion_llm.evals.errors import answer_queries, answer_scores
from legion_llm.llm.budget import Usage
from legion_llm.llm.engine import Answer, EngineBase, Request
from legion_llm.llm.recorded import RecordedEngine, RecordingMismatchError
from legion_llm.memory.signatures.match import Match
from legion_llm.pipeline.errmatch import (
    PROMPT,
    CandidateVerdict,
    MatchVerdicts,
    judged_answer,
)

pytestmark = pytest.mark.slow

T = TypeVar("T", bound=BaseModel)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "errors"


class SimulatedJudge(EngineBase):
    """A judge that knows the labels: it picks the shown candidate of the query's own group
    (0 when none is), then flips that verdict with probability `flip`; `always_yes` picks the
    first candidate every time."""

    name = "simulated"

    def __init__(self, truth: dict[str, str | None], flip: float = 0.0, always_yes: bool = False,
                 seed: int = 22) -> None:  # fmt: skip
        super().__init__()
        self.truth, self.flip, self.always_yes = truth, flip, always_yes
        self.rng = random.Random(seed)
        self.calls = 0

    @property
    def model(self) -> str | None:
        return "simulated-judge"

    def answer(self, request: Request[T]) -> Answer[T]:
        self.calls += 1
        shown: list[Match] = request.context
        text = _new_error(request.prompt.user)
        keys = [m.candidate.key for m in shown]
        expected = self.truth.get(text)
        right = keys.index(expected) + 1 if expected is not None and expected in keys else 0
        pick = 1 if self.always_yes else right
        if not self.always_yes and self.rng.random() < self.flip:
            pick = 0 if right else 1  # a wrong verdict: refuse the right one, or take a wrong one
        verdicts = [CandidateVerdict(candidate=n, same_root_cause=n == pick, reason="sim")
                    for n in range(1, len(shown) + 1)]  # fmt: skip
        output = MatchVerdicts(verdicts=verdicts, match=pick)
        assert isinstance(output, request.schema)
        prompt = request.prompt
        return Answer(output, Usage(), prompt.name, prompt.sha256, self.name, self.model)


def _new_error(user: str) -> str:
    """The new error's text as the prompt shows it (between the first pair of fences)."""
    return user.split("```\n", 1)[1].split("\n```", 1)[0]


def _truth() -> dict[str, str | None]:
    """The clipped text of each original-set message -> its group (None for hard negatives is
    decided by the store: a judge that picks nothing shown is right for them)."""
    from legion_llm.memory.redact import Redactor
    from legion_llm.pipeline.errmatch import _clip

    dataset = load_dataset(FIXTURES)
    return {_clip(m.text, Redactor()): m.group for m in dataset.messages}


def _scores(engine: EngineBase) -> Any:
    dataset = load_dataset(FIXTURES)
    fix, hard, failures = answer_queries(
        dataset, lambda text, query, ranked: judged_answer(engine, text, query, ranked)
    )
    assert failures == []
    return answer_scores(fix, hard)


@pytest.fixture(scope="module")
def judged() -> dict[str, Any]:
    truth = _truth()
    judges = {
        "perfect": SimulatedJudge(truth),
        "flip5": SimulatedJudge(truth, flip=0.05),
        "flip10": SimulatedJudge(truth, flip=0.10),
        "yes": SimulatedJudge(truth, always_yes=True),
    }
    return {name: (_scores(judge), judge.calls) for name, judge in judges.items()}


def test_a_perfect_judge_only_helps_and_a_careless_one_is_caught(judged: dict[str, Any]) -> None:
    perfect, calls = judged["perfect"]
    assert calls > 50  # the confirms were judged
    assert perfect.fix_precision == 1.0 and perfect.hard_negative_fix <= 0.01
    flip5, flip10, yes = (judged[k][0] for k in ("flip5", "flip10", "yes"))
    assert yes.hard_negative_fix > 0.3 > perfect.hard_negative_fix + 0.2  # always-yes fails
    assert flip10.hard_negative_fix > flip5.hard_negative_fix >= perfect.hard_negative_fix
    assert flip10.fix_coverage < perfect.fix_coverage
    assert yes.fix_precision < perfect.fix_precision


def test_the_recorded_engine_replays_and_a_changed_request_fails_loudly(tmp_path: Path) -> None:
    truth = _truth()
    path = tmp_path / "judge.jsonl"
    recorder = RecordedEngine.recording(path, source=SimulatedJudge(truth))
    before = _scores(recorder)
    recorder.save()
    replay = RecordedEngine(path)
    assert replay.model == "simulated-judge"
    again = _scores(replay)
    assert again == before  # the same answers without the judge that gave them
    assert replay.meter.total.calls == 0  # the simulated judge reported no usage to replay
    with pytest.raises(RecordingMismatchError, match="request hash"):
        replay.ask(MatchVerdicts, PROMPT, {"new_error": "a new error", "candidates": "none"})
    (tmp_path / "broken.jsonl").write_text("not json\n")
    with pytest.raises(RecordingMismatchError, match="not a recording"):
        RecordedEngine(tmp_path / "broken.jsonl")
