"""Typed tool parameters shared by the tools (pydantic turns them into each tool's input schema)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

F = TypeVar("F", bound=Callable[..., Any])
# No argument of any tool needs more (a pasted log is matched on its first and last 32,000
# characters); past it a call is refused before it runs. A stored field has a lower bound of its
# own (app.context.MAX_STORED_CHARS), like the CLI's.
MAX_ARGUMENT_CHARS = 1_000_000

Today = Annotated[str | None, Field(description="YYYY-MM-DD; default: today.")]
Tags = Annotated[
    tuple[str, ...] | None, Field(description="Tags; a record matches when any matches.")
]
TaskTypes = Annotated[
    tuple[str, ...] | None, Field(description="Task types, e.g. backend, frontend.")
]
Branch = Annotated[str | None, Field(description="all (default), current or a branch name.")]
Limit = Annotated[int, Field(ge=1, le=1000, description="At most this many records.")]
Detail = Annotated[
    Literal["concise", "detailed"],
    Field(description="concise (default): each record without its ranking and filing fields."),
]
Apply = Annotated[bool, Field(description="Write; without it, a preview that writes nothing.")]
ENGINES = ("auto", "anthropic", "sampling", "claude-code", "offline")
Engine = Annotated[
    Literal["auto", "anthropic", "sampling", "claude-code", "offline"] | None,
    Field(description="Default auto: API key, else your sampling, else offline."),
]
RouteEngine = Annotated[
    Literal["auto", "anthropic", "sampling", "claude-code", "offline", "host"] | None,
    Field(description="Default auto: API key, else your sampling, else offline; host: a "
          "request for you to answer."),
]  # fmt: skip
Model = Annotated[str | None, Field(description="Claude model; default: settings.")]
MaxCost = Annotated[
    float | None,
    Field(ge=0, le=1000, description="USD cap for the run."),
]
Ticket = Annotated[
    str | None, Field(min_length=1, description="The ticket of an engine=host request.")
]
Proposal = Annotated[
    dict[str, Any] | list[dict[str, Any]] | str | None,
    Field(description="Your JSON answer to that request (a list when its inputs is a list)."),
]  # fmt: skip
Final = Annotated[bool, Field(description="Last round: keep what verifies, repair the rest.")]
PhaseSpec = Annotated[
    str | int | float,
    Field(description="Phase number (3, 03, 6.1), folder name (03-fx-rates) or folder path."),
]
Outcome = Literal["success", "partial", "failed"]


def phase_text(value: str | int | float) -> str:
    """A phase given as a number or a string, as the string the CLI would get: 4 -> "4",
    6.1 -> "6.1", 4.0 -> "4"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


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
