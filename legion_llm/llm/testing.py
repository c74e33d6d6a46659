"""A queue fake engine for pipeline tests that need no HTTP.

    engine = FakeEngine().enqueue(PhaseDigest(...), LLMUnavailableError("down"))
    answer = engine.ask(PhaseDigest, "compact-phase", {...})   # the prompt is still rendered strictly
    assert engine.requests[0].prompt.user.startswith(...)

Each `ask` pops the next item: a model instance is returned (it must be an instance of the
schema asked for), an exception is raised. Wrap it as `FallbackEngine(fake, OfflineEngine(reg))`
to test a pipeline's fallback path.
"""

from __future__ import annotations

from collections import deque
from typing import Any, TypeVar

from pydantic import BaseModel

from legion_llm.llm.budget import Usage
from legion_llm.llm.engine import Answer, EngineBase, Request

T = TypeVar("T", bound=BaseModel)


class FakeEngine(EngineBase):
    name = "fake"

    def __init__(
        self, *, model: str = "fake-model", usage: Usage | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._model = model
        self._usage = usage or Usage(calls=1)
        self._queue: deque[BaseModel | BaseException] = deque()
        self.requests: list[Request[Any]] = []

    @property
    def model(self) -> str:
        return self._model

    def enqueue(self, *items: BaseModel | BaseException) -> FakeEngine:
        self._queue.extend(items)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    def answer(self, request: Request[T]) -> Answer[T]:
        self.requests.append(request)
        if not self._queue:
            raise AssertionError(
                f"FakeEngine: ask({request.schema.__name__}, {request.prompt.name!r}) "
                "with nothing queued"
            )
        item = self._queue.popleft()
        if isinstance(item, BaseException):
            raise item
        if not isinstance(item, request.schema):
            raise AssertionError(
                f"FakeEngine: queued {type(item).__name__}, but ask() wanted {request.schema.__name__}"
            )
        self.meter.record(self._usage.copy(), self.name)
        prompt = request.prompt
        return Answer(item, Usage(), prompt.name, prompt.sha256, self.name, self._model)
