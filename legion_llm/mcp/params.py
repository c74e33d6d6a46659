"""Typed tool parameters shared by the tools (pydantic turns them into each tool's input schema)."""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from legion_llm.llm.cancel import stoppable

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")
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


def bounded(method: Callable[..., dict[str, Any]]) -> Callable[..., Awaitable[dict[str, Any]]]:
    """`method` as a tool that refuses, with one clear tool error, any string argument (a list's
    strings together) past MAX_ARGUMENT_CHARS, and that its client can cancel (`stoppable_call`).
    Its signature, and so its schema, is the method's."""

    async def call(**arguments: Any) -> dict[str, Any]:
        for name, value in arguments.items():
            items = value if isinstance(value, list | tuple) else [value]
            size = sum(len(item) for item in items if isinstance(item, str))
            if size > MAX_ARGUMENT_CHARS:
                raise ToolError(
                    f"argument {name!r} is {size:,} characters; a tool argument holds at most "
                    f"{MAX_ARGUMENT_CHARS:,} characters"
                )
        return await stoppable_call(method, arguments)

    functools.update_wrapper(call, method)
    call.__signature__ = inspect.signature(method, eval_str=True)  # type: ignore[attr-defined]
    return call


async def stoppable_call(method: Callable[..., R], arguments: dict[str, Any]) -> R:
    """`method(**arguments)` on a worker thread, as a call its client can cancel: when the
    request's scope is cancelled (`notifications/cancelled`), the call's stop event is set, the
    work ends at its next check (llm/cancel.py: before any engine call, and in the Claude Code
    CLI's read loop, which stops the CLI), and only then does the cancellation go on, so
    nothing the call started outlives it and nothing it would write after is written."""
    stop = threading.Event()

    def work() -> R:
        with stoppable(stop):
            return method(**arguments)

    async def watch() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stop.set()  # cancelled: by the client, or by this call having ended

    outcome: list[tuple[R | None, Exception | None]] = []
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        with anyio.CancelScope(shield=True):
            try:
                outcome.append((await anyio.to_thread.run_sync(work), None))
            except Exception as exc:  # raised below, outside the group (never as a group)
                outcome.append((None, exc))
        group.cancel_scope.cancel()
    result, error = outcome[0]
    if error is not None:
        raise error
    return result  # type: ignore[return-value]
