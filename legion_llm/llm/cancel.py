"""A call its caller has stopped waiting for.

A front end that can be told to stop one call (the MCP server, on `notifications/cancelled`)
runs that call under `stoppable(event)` and sets the event. Where the work waits on a model it
asks: every engine's ask before it sends (`raise_if_cancelled`), the Claude Code CLI's read loop
while it waits (which then ends the CLI's session as on a timeout) and the API stream's watchdog
(which closes the stream). `CallCancelled` is no engine failure, so no fallback, retry or write
follows it; the caller is no longer listening for the answer it would have carried.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_STOP: ContextVar[threading.Event | None] = ContextVar("legion_llm_stop", default=None)


class CallCancelled(Exception):
    """The caller cancelled this call."""

    def __init__(self, message: str = "the call was cancelled by its client") -> None:
        super().__init__(message)


@contextmanager
def stoppable(event: threading.Event) -> Iterator[None]:
    """Run the block as a call that `event` stops (in this thread and what it copies)."""
    token = _STOP.set(event)
    try:
        yield
    finally:
        _STOP.reset(token)


def current_stop() -> threading.Event | None:
    """This call's stop event, for a thread of its own that watches it (a stream's watchdog)."""
    return _STOP.get()


def stop_requested() -> bool:
    event = _STOP.get()
    return event is not None and event.is_set()


def raise_if_cancelled() -> None:
    if stop_requested():
        raise CallCancelled
