"""RecordingEngine (prepare) and ReplayEngine (submit): the two halves of the host engine.

A question is identified by its key: the sha256 of the prompt file's identity, the rendered
system and user text, and the answer's JSON schema. Prepare and submit render the same
questions from the same inputs, so the keys match; a question at submit whose key was not
prepared is the step asking again about the previous answer (a re-ask): what it adds to the
question (its feedback) becomes the `problems` handed back to the agent, unless the agent said
its proposal is final.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from legion_llm.llm.budget import Usage
from legion_llm.llm.claude_api.structured import describe
from legion_llm.llm.engine import Answer, EngineBase, OfflineEngine, Request
from legion_llm.llm.errors import LLMError

T = TypeVar("T", bound=BaseModel)
HOST_INPUT_BUDGET = 150_000  # what one question may carry; steps split larger inputs
DEFAULT_ANSWER_TOKENS = 4_096


@dataclass(frozen=True)
class Question:
    """What a model would have been sent for one ask."""

    prompt_name: str
    prompt_sha256: str
    system: str
    user: str
    schema: dict[str, Any]
    max_tokens: int | None

    @property
    def key(self) -> str:
        text = json.dumps([self.prompt_name, self.prompt_sha256, self.system, self.user,
                           self.schema], sort_keys=True, ensure_ascii=False)  # fmt: skip
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def budget_tokens(self) -> int:
        return self.max_tokens or DEFAULT_ANSWER_TOKENS


def question_of(request: Request[Any]) -> Question:
    prompt = request.prompt
    schema = request.schema.model_json_schema()
    return Question(prompt.name, prompt.sha256, prompt.system, prompt.full_user, schema,
                    request.max_tokens)  # fmt: skip


class ProposalProblems(LLMError):
    """The proposal cannot be used as it is; `problems` says why, one line each."""

    exit_code = 1

    def __init__(self, problems: Sequence[str], details: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__("the proposal has problems: " + "; ".join(problems))
        self.problems = list(problems)
        self.details = list(details)  # the step's own problem records, when it gives them


class RecordingEngine(OfflineEngine):
    """Prepare: the offline step answers every ask, and each ask is recorded as a Question."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.questions: list[Question] = []
        self.offline_answers: list[BaseModel] = []

    def answer(self, request: Request[T]) -> Answer[T]:
        self.questions.append(question_of(request))
        answer = super().answer(request)
        self.offline_answers.append(answer.output)
        return answer

    def input_budget(self, max_tokens: int | None = None) -> int:
        return HOST_INPUT_BUDGET


class ReplayEngine(EngineBase):
    """Submit: each prepared question is answered with the agent's proposal for it."""

    name = "host"

    def __init__(
        self, keys: Sequence[str], proposals: Sequence[object], *, final: bool, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if len(proposals) != len(keys):
            raise ProposalProblems(
                [f"the ticket asks for {len(keys)} answer(s), the proposal has {len(proposals)}"]
            )
        self.keys = list(keys)
        self.proposals = list(proposals)
        self.final = final
        self._last: dict[str, tuple[object, str]] = {}  # prompt -> (proposal, its question text)

    def input_budget(self, max_tokens: int | None = None) -> int:
        return HOST_INPUT_BUDGET

    def answer(self, request: Request[T]) -> Answer[T]:
        question = question_of(request)
        if question.key in self.keys:
            index = self.keys.index(question.key)
            proposal, where = self.proposals[index], _where(index, len(self.keys))
        elif self.final and question.prompt_name in self._last:
            proposal, where = self._last[question.prompt_name][0], "the final proposal"
        else:
            earlier = self._last.get(question.prompt_name, (None, ""))[1]
            details = getattr(request.context, "problems", ())  # compaction: Problem.as_dict()s
            raise ProposalProblems(reask_problems(question, earlier), tuple(details or ()))
        try:
            output = request.schema.model_validate(proposal)
        except ValidationError as exc:
            raise ProposalProblems(
                [f"{where} does not match the schema: {describe(exc)}"]
            ) from None
        self._last[question.prompt_name] = (proposal, question.user)
        self.meter.record(Usage(), self.name)
        return Answer(output, Usage(), request.prompt.name, request.prompt.sha256, self.name, None)


def _where(index: int, total: int) -> str:
    return "the proposal" if total == 1 else f"answer {index + 1} of {total}"


def reask_problems(question: Question, earlier: str) -> list[str]:
    """What the step's re-ask adds to the question it asked before (its feedback), one problem
    per bullet line; whatever the prompt calls the variable that carries it."""
    seen = set(earlier.splitlines())
    added = [
        line.strip() for line in question.user.splitlines() if line.strip() and line not in seen
    ]
    bullets = [line[2:].strip() for line in added if line.startswith("- ")]
    if bullets or added:
        return bullets or added[:20]
    return [f"the step asked again (prompt {question.prompt_name!r}); revise the proposal"]
