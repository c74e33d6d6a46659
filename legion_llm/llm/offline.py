"""The offline engine's plumbing: each pipeline registers a deterministic step per prompt name.

A step gets an `OfflineCall` (the same variables the prompt would have been rendered with, plus
an optional `context` object the pipeline passes only to offline steps) and returns an instance
of the requested schema. It needs no network and no key, and costs nothing.

    @offline_step("compact-phase")
    def compact_offline(call: OfflineCall) -> PhaseDigest:
        return PhaseDigest(...)

Steps register at import time on the default REGISTRY; tests build their own OfflineRegistry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from legion_llm.llm.errors import OfflineStepMissingError

StepT = TypeVar("StepT", bound=Callable[..., BaseModel])


@dataclass(frozen=True)
class OfflineCall:
    prompt_name: str
    variables: Mapping[str, Any]
    context: Any
    schema: type[BaseModel]


OfflineStep = Callable[[OfflineCall], BaseModel]


class OfflineRegistry:
    def __init__(self) -> None:
        self._steps: dict[str, OfflineStep] = {}

    def register(self, prompt_name: str, step: OfflineStep, *, replace: bool = False) -> None:
        if prompt_name in self._steps and not replace and self._steps[prompt_name] is not step:
            raise ValueError(f"an offline step for prompt {prompt_name!r} is already registered")
        self._steps[prompt_name] = step

    def has(self, prompt_name: str) -> bool:
        return prompt_name in self._steps

    def get(self, prompt_name: str) -> OfflineStep:
        try:
            return self._steps[prompt_name]
        except KeyError:
            raise OfflineStepMissingError(
                f"the offline engine has no step for prompt {prompt_name!r}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._steps)


REGISTRY = OfflineRegistry()


def offline_step(
    prompt_name: str, registry: OfflineRegistry | None = None
) -> Callable[[StepT], StepT]:
    """Decorator: register the function as the offline step for `prompt_name`."""

    def decorate(step: StepT) -> StepT:
        (registry or REGISTRY).register(prompt_name, step)
        return step

    return decorate
