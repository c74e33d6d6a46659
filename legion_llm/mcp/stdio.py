"""Serving on stdio with an answer to every line. The SDK's stdio transport turns a line it cannot
read into an exception on its read stream, and the server drops that without a reply: a client
waits for nothing. Here such a line is answered with a JSON-RPC error and the server goes on:
not JSON -> -32700 parse error (id null); JSON that is no JSON-RPC message -> -32600 invalid
request (its id when it has a usable one, else null). And a client that sends its requests and
closes stdin still gets every answer: at the end of input the server waits (up to DRAIN_S) for
the requests it is still answering instead of cancelling them, unless the client is gone (no
one reads stdout any more): then every child process a call started (the `claude` CLI) is
stopped and the server ends at once, so nothing goes on spending for nobody.
"""

from __future__ import annotations

import contextvars
import os
import select
import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared._stream_protocols import ReadStream, WriteStream


class Handshake(Protocol):
    """What the transport tells the front desk's record (mcp/frontdesk.py `Handshake`): each
    request as it is read, and each reply before it is written (False: the desk sent it)."""

    def request(
        self, request_id: str | int, method: str, params: dict[str, Any] | None
    ) -> None: ...

    def keep_reply(self, request_id: str | int | None, line: str) -> bool: ...

    def wants(self, request_id: str | int | None) -> bool: ...


DRAIN_S = 900.0  # at the end of input, how long the answers still being worked out may take


async def serve_stdio(
    app: MCPServer[Any],
    stdin: anyio.AsyncFile[str] | None = None,
    handshake: Handshake | None = None,
) -> None:
    """What `MCPServer.run_stdio_async` does, with unreadable lines answered instead of dropped.
    `stdin`: the lines to serve (default: the process's stdin); `handshake`: the front desk's
    record (mcp/frontdesk.py): replies it sent already are not sent again, and the handshake
    answers are noted for the next start."""
    server = app._lowlevel_server  # as run_stdio_async does; no public way to pass the streams
    watch = _watch_stdout()  # the transport moves the wire off fd 1: a copy to look at it
    try:
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            answering = Answering(read_stream, write_stream, handshake, watch)
            replies = Replies(write_stream, answering.pending, handshake)
            await server.run(answering, replies, server.create_initialization_options())
    finally:
        if watch is not None:
            os.close(watch)


def _watch_stdout() -> int | None:
    try:
        return os.dup(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def error_reply(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message."""
    if isinstance(exc, ValidationError) and exc.errors()[0]["type"] != "json_invalid":
        message = "Invalid Request: not a JSON-RPC 2.0 message"
        return JSONRPCError(
            jsonrpc="2.0",
            id=_request_id(exc),
            error=ErrorData(code=INVALID_REQUEST, message=message),
        )
    message = "Parse error: the line is not JSON"
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message=message))


def _request_id(exc: ValidationError) -> str | int | None:
    for error in exc.errors():
        found = error.get("input")
        if isinstance(found, dict):
            value = found.get("id")
            if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
                return value
    return None


class _Closable(Protocol):
    async def aclose(self) -> None: ...


S = TypeVar("S", bound=_Closable)


class _Wrapper(Generic[S]):
    """A stream around the transport's: closing it, or leaving its `async with`, closes that."""

    _inner: S

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class Answering(_Wrapper["ReadStream[SessionMessage | Exception]"]):
    """The transport's read stream, minus the lines it could not read: each of those is answered
    on the write stream at once. Everything else passes through, sender context included. The
    ids of the requests read and not yet answered are in `pending` (Replies removes them); at
    the end of input it ends only once they are answered (or after DRAIN_S)."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        write: WriteStream[SessionMessage],
        handshake: Handshake | None = None,
        watch: int | None = None,
    ) -> None:
        self._inner = inner
        self._write = write
        self._handshake = handshake
        self._watch = watch  # the client's end of stdout, to tell whether it is gone
        self.pending: set[str | int] = set()

    @property
    def last_context(self) -> contextvars.Context | None:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._drain()
                raise
            if not isinstance(item, Exception):
                if isinstance(item.message, JSONRPCRequest):
                    self.pending.add(item.message.id)
                    if self._handshake is not None:
                        message = item.message
                        self._handshake.request(message.id, message.method, message.params)
                return item
            await self._write.send(SessionMessage(error_reply(item)))

    async def _drain(self) -> None:
        with anyio.move_on_after(DRAIN_S):
            while self.pending:
                if self._watch is not None and client_gone(self._watch):
                    end_for_nobody()
                await anyio.sleep(0.01)

    def __aiter__(self) -> Answering:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def client_gone(fd: int) -> bool:
    """Whether nobody reads `fd`, the server's stdout, any more (a pipe or socket whose other
    end has closed: the client ended). False when it cannot tell."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (AttributeError, OSError, ValueError):
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def end_for_nobody() -> None:
    """The client is gone with calls still running: stop their child processes and end now (a
    call's thread cannot be cancelled, and its answer has no reader)."""
    from legion_llm.llm.claude_code.cli import stop_children

    stop_children()
    print("legion-llm mcp: the client is gone; the calls still running were stopped",
          file=sys.stderr, flush=True)  # fmt: skip
    os._exit(0)


class Replies(_Wrapper["WriteStream[SessionMessage]"]):
    """The transport's write stream, noting each request answered (its id leaves `pending`);
    a reply the front desk sent already is noted and not sent again."""

    def __init__(
        self,
        inner: WriteStream[SessionMessage],
        pending: set[str | int],
        handshake: Handshake | None = None,
    ) -> None:
        self._inner = inner
        self._pending = pending
        self._handshake = handshake

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        answer = isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None
        request_id = message.id if isinstance(message, JSONRPCResponse | JSONRPCError) else None
        desk = self._handshake
        if desk is None or not answer or not desk.wants(request_id):
            await self._inner.send(item)
        else:  # the line the transport would write, as it writes it
            line = message.model_dump_json(by_alias=True, exclude_unset=True)
            if desk.keep_reply(request_id, line):
                await self._inner.send(item)
        if answer and request_id is not None:
            self._pending.discard(request_id)
