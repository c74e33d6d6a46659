"""Typed tool parameters shared by the tools (pydantic turns them into each tool's input schema)."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar, get_type_hints

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

F = TypeVar("F", bound=Callable[..., Any])
# No argument of any tool needs more (a pasted log is matched on its first and last 32,000
# characters); past it a call is refused before it runs. A stored field has a lower bound of its
# own (app.context.MAX_STORED_CHARS), like the CLI's.
MAX_ARGUMENT_CHARS = 1_000_000

Today = Annotated[
    str | None,
    Field(description="Use this date (YYYY-MM-DD) as today (reproducible runs); default: today."),
]
Tags = Annotated[
    tuple[str, ...], Field(description="Tags; a record matches when any of its tags matches.")
]
TaskTypes = Annotated[
    tuple[str, ...], Field(description="Task types, e.g. backend, frontend, quality-review.")
]
Branch = Annotated[
    str, Field(description="all (default), current (the git branch) or a branch name.")
]
Limit = Annotated[int, Field(ge=1, description="At most this many records.")]
Agent = Annotated[str | None, Field(description="Only records of this agent id.")]
Engine = Annotated[
    Literal["auto", "anthropic", "sampling", "claude-code", "offline"] | None,
    Field(
        description="auto (Claude when an API key is set, else your own model through MCP "
        "sampling when you offer it, else the offline engine), anthropic, sampling, claude-code "
        "(the user's logged-in claude CLI) or offline; default: settings.json memory.llm, else auto. "
        "To write the answer yourself, use the *_prepare and *_submit tools (the host route)."
    ),
]
Model = Annotated[str | None, Field(description="Claude model; default: settings, else built in.")]
MaxCost = Annotated[
    float | None,
    Field(ge=0, description="Stop before a call that could take the run past this many USD."),
]
PhaseSpec = Annotated[
    str | int | float,
    Field(
        description="Phase number (3, 03, 6.1, as a number or a string), phase folder name "
        "(03-fx-rates) or a folder path inside the project.",
    ),
]
PhaseNumber = Annotated[
    str | int | float, Field(description="Phase number, e.g. 4 or 6.1 (a number or a string).")
]
Outcome = Literal["success", "partial", "failed"]


def phase_text(value: str | int | float) -> str:
    """A phase given as a number or a string, as the string the CLI would get: 4 -> "4",
    6.1 -> "6.1", 4.0 -> "4"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def flat_fields(
    kind: type,
    descriptions: Mapping[str, str],
    types: Mapping[str, Any] | None = None,
    **extra: Any,
) -> Callable[[F], F]:
    """Give a `(self, **values)` tool method the fields of dataclass `kind` as its own flat
    keyword parameters (each field's type and default; `types` replaces a field's type, e.g. an
    enum where the CLI has a fixed choice; `extra` adds more, e.g. today=Today), so its input
    schema comes from the same type as the CLI's without nesting it under one name."""
    hints = {**get_type_hints(kind), **(types or {})}
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for item in dataclasses.fields(kind):
        default: Any = item.default
        if item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        elif default is dataclasses.MISSING:
            default = inspect.Parameter.empty
        hint = hints[item.name]
        if item.name in descriptions:
            hint = Annotated[hint, Field(description=descriptions[item.name])]
        params.append(inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=default, annotation=hint))  # fmt: skip
    for name, hint in extra.items():
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None,
                                        annotation=hint))  # fmt: skip

    def apply(method: F) -> F:
        method.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
        return method

    return apply


def bounded(method: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`method` as a tool that refuses, with one clear tool error, any string argument (a list's
    strings together) past MAX_ARGUMENT_CHARS. Its signature, and so its schema, is the method's."""

    def call(**arguments: Any) -> dict[str, Any]:
        for name, value in arguments.items():
            items = value if isinstance(value, list | tuple) else [value]
            size = sum(len(item) for item in items if isinstance(item, str))
            if size > MAX_ARGUMENT_CHARS:
                raise ToolError(
                    f"argument {name!r} is {size:,} characters; a tool argument holds at most "
                    f"{MAX_ARGUMENT_CHARS:,} characters"
                )
        return method(**arguments)

    functools.update_wrapper(call, method)
    call.__signature__ = inspect.signature(method, eval_str=True)  # type: ignore[attr-defined]
    return call
