"""`legion-llm mcp` answering the handshake at once, while the SDK loads behind it.

Importing the mcp SDK (pydantic models for two protocol eras) and building the server's tool
schemas take about a second on a 2-core machine, and every Claude Code session waits for the
server's answer to `initialize`. What the server answers to `initialize` and `tools/list`
depends only on the code and the installed libraries (and the project root, which the
instructions name), so it is kept: the first time the SDK answers them, the exact lines it
writes are stored in the user's cache folder (legion_llm/cache.py) under a fingerprint of
every legion-llm source file, the SDK's and pydantic's installed versions and the interpreter.

On start, a thread imports the SDK and builds the server while this front desk reads stdin:
an `initialize` (well-formed, for a protocol version the cache holds) and then a plain
`tools/list` are answered with the stored lines at once; notifications wait. The first line
the desk cannot answer (a tool call, anything else, the end of input) hands every line read so
far, in order, and the rest of stdin to the SDK, which then serves exactly as without the desk.
The SDK answers the handshake again; those answers are not sent (the client has them) but
compared with the desk's: a difference replaces the stored lines. No cache, or a fingerprint
that does not match, and the SDK answers everything itself, as before.

Started by the plugin's first-start desk (mcp/firststart.py: it answered the handshake from the
plugin while this environment was being built, then exec'd this server), the lines it read come
first (LEGION_LLM_MCP_HANDOVER) and its answers count as the desk's: not sent again, compared.

SIGTERM, SIGHUP and SIGINT end the server at once, after stopping every child process a call
started (the `claude` CLI runs in a session of its own, so no signal to this process reaches
it): the usual unwinding would wait for the call's thread, which waits for its child.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from importlib.util import find_spec
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import legion_llm
from legion_llm import cache
from legion_llm.mcp.firststart import HANDOVER, read_json
from legion_llm.mcp.server import instructions_for

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

HANDSHAKE = ("initialize", "tools/list")
LIBRARIES = ("mcp", "mcp_types", "pydantic", "pydantic_core")  # what shapes the answers
_INSTRUCTIONS = "\x00"  # stands for the instructions in a stored line: JSON text never holds it


def fingerprint() -> str:
    """What the handshake answers are made from: every source file of the package, the
    installed versions of the libraries that build them, the interpreter."""
    digest = hashlib.sha256(sys.version.encode())
    package = Path(legion_llm.__file__).parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    spec = find_spec("mcp")  # located, not imported
    if spec is None or spec.origin is None:
        return ""
    site = Path(spec.origin).parent.parent
    wanted = tuple(f"{name}-" for name in LIBRARIES)
    installed = sorted(
        n for n in os.listdir(site) if n.endswith(".dist-info") and n.startswith(wanted)
    )
    digest.update("\n".join(installed).encode())
    return digest.hexdigest()


def cache_name(print_: str) -> str:
    return f"mcp-handshake-{print_[:24]}.json"


def response_line(request_id: str | int, result: str) -> str:
    """A JSON-RPC response as the SDK writes it (compact, these keys in this order)."""
    return (
        f'{{"jsonrpc":"2.0","id":{json.dumps(request_id, ensure_ascii=False)},"result":{result}}}'
    )


@dataclass
class Handshake:
    """The stored answers for this code (by protocol version asked: {method: result JSON}),
    what the desk answered on this connection, and what the SDK answered, to keep."""

    root: Path
    print_: str
    stored: dict[str, dict[str, str]] = field(default_factory=dict)
    version: str | None = None  # the protocol version this connection's initialize asked
    sent: dict[str | int, str] = field(default_factory=dict)  # id -> the line the desk sent
    asked: dict[str | int, str] = field(default_factory=dict)  # id -> method, for the SDK's answer
    seen: dict[str, str] = field(default_factory=dict)  # method -> the SDK's result JSON

    @classmethod
    def load(cls, root: Path) -> Handshake:
        print_ = fingerprint()
        found = cache.read(cache_name(print_)) if print_ else None
        try:
            stored = json.loads(found) if found else {}
        except ValueError:
            stored = {}
        valid = isinstance(stored, dict) and stored.get("fingerprint") == print_
        return cls(root, print_, stored.get("versions", {}) if valid else {})

    # ---------------------------------------------------------------- the desk

    def answer(self, line: bytes) -> str | None:
        """The desk's reply to one line read before the SDK is ready: a response line, "" for a
        notification (nothing to say; it waits for the SDK), None when the SDK must answer."""
        try:
            message = read_json(line)  # bounded: a deep or odd line goes to the SDK's reader
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params = message.get("method"), message.get("params")
        if not isinstance(method, str):
            return None
        if "id" not in message:
            return ""
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return None
        if request_id in self.sent:
            return None
        result = self._result(method, params)
        if result is None:
            return None
        reply = response_line(request_id, result)
        self.sent[request_id] = reply
        return reply

    def _result(self, method: str, params: Any) -> str | None:
        if method == "initialize" and self.version is None and _plain_initialize(params):
            version = params["protocolVersion"]
            stored = self.stored.get(version, {}).get("initialize")
            if stored is None or "tools/list" not in self.stored[version]:
                return None
            self.version = version
            return stored.replace(_INSTRUCTIONS, self._instructions_json())
        if method == "tools/list" and self.version is not None and params in (None, {}):
            return self.stored[self.version]["tools/list"]
        return None

    def _instructions_json(self) -> str:
        return json.dumps(instructions_for(self.root), ensure_ascii=False)

    # ---------------------------------------------------------------- the SDK's side

    def request(self, request_id: str | int, method: str, params: dict[str, Any] | None) -> None:
        """A request the SDK is about to answer (each one, as it reads it)."""
        if method == "initialize" and isinstance(params, dict):
            version = params.get("protocolVersion")
            if isinstance(version, str):
                self.version = self.version or version
                self.asked[request_id] = method
        elif method == "tools/list" and not params:
            self.asked[request_id] = method

    def keep_reply(self, request_id: str | int | None, line: str) -> bool:
        """The SDK's reply `line`: False when the desk has sent this one already (not again).
        A handshake answer is kept for the next start."""
        method = self.asked.pop(request_id, None) if request_id is not None else None
        if method is not None:
            self._note(method, request_id, line)
        sent = self.sent.get(request_id) if request_id is not None else None
        if sent is not None and sent != line:  # what the desk sent no longer holds
            print("legion-llm mcp: a stored handshake answer was out of date; it is replaced",
                  file=sys.stderr, flush=True)  # fmt: skip
            if method is not None and method not in self.seen and self.version in self.stored:
                del self.stored[self.version]  # the SDK refused it: nothing to keep
                self._store()
        return sent is None

    def wants(self, request_id: str | int | None) -> bool:
        """Whether the SDK's reply to this request matters here (serialising it costs)."""
        return request_id in self.asked or request_id in self.sent

    def _note(self, method: str, request_id: str | int | None, line: str) -> None:
        if request_id is None:
            return
        prefix = response_line(request_id, "")[:-1]
        if not line.startswith(prefix) or not line.endswith("}"):
            return  # an error, or written otherwise than we would: not kept
        result = line[len(prefix) : -1]
        if method == "initialize":
            instructions = self._instructions_json()
            if result.count(instructions) != 1:
                return
            result = result.replace(instructions, _INSTRUCTIONS)
        self.seen[method] = result
        complete = self.version is not None and set(self.seen) == set(HANDSHAKE)
        if complete and self.stored.get(self.version or "") != self.seen:
            self._store()

    def _store(self) -> None:
        if self.version is not None and set(self.seen) == set(HANDSHAKE):
            self.stored[self.version] = dict(self.seen)
        if self.print_:
            body = {"fingerprint": self.print_, "versions": self.stored}
            data = json.dumps(body, ensure_ascii=False).encode()
            cache.keep(cache_name(self.print_), data, family="mcp-handshake-")


def _plain_initialize(params: Any) -> bool:
    """An initialize the SDK accepts as it is: a protocol version, capabilities, client info."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


class Loader(threading.Thread):
    """Imports the SDK and builds the server, beside the desk."""

    def __init__(self, root: Path, today: date | None, root_given: bool = True) -> None:
        super().__init__(name="legion-llm-mcp-loader", daemon=True)
        self.root, self.today, self.root_given = root, today, root_given
        self.app: MCPServer[Any] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from legion_llm.mcp.server import build_server
            from legion_llm.mcp.stdio import serve_stdio  # noqa: F401  (imported here, not later)

            self.app = build_server(self.root, today=self.today, root_given=self.root_given)
        except BaseException as exc:  # raised again by the main thread
            self.error = exc

    def server(self) -> MCPServer[Any]:
        self.join()
        if self.error is not None:
            raise self.error
        assert self.app is not None
        return self.app


class Feed:
    """The SDK's stdin: the lines the desk read, then the rest of the wire (text, as the SDK's
    own stdio reader decodes it)."""

    def __init__(self, backlog: list[bytes], wire: IO[bytes]) -> None:
        self._backlog = iter(backlog)
        self._wire = wire

    def readline(self) -> str:
        line = next(self._backlog, None)
        if line is None:
            line = self._wire.readline()
        return line.decode("utf-8", "replace")

    def __iter__(self) -> Iterator[str]:  # pragma: no cover - anyio reads with readline
        return iter(self.readline, "")


def serve_with_front_desk(root: Path, today: date | None, *, root_given: bool = True) -> None:
    """`legion-llm mcp`: the desk until the SDK is needed, then the SDK on the same wire.
    `root_given`: --root named the project (else it was found from the folder the client
    started the server in, and a store there asks for a project first)."""
    import anyio

    end_on_signals()
    handshake = Handshake.load(root)  # before the loader takes the interpreter's lock
    backlog, sent = take_handover()  # the first-start desk's lines: the SDK reads them first
    handshake.sent.update(sent)
    handed = bool(backlog)
    wire = _claim_stdin()
    loader = Loader(root, today, root_given)
    loader.start()
    out = sys.stdout.buffer
    while wire is not None and handshake.stored and not handed and loader.is_alive():
        line = wire.readline()
        if not line:
            break
        backlog.append(line)
        reply = handshake.answer(line)
        if reply is None:
            break
        if reply:
            out.write(reply.encode() + b"\n")
            out.flush()
    app = loader.server()
    from legion_llm.mcp.stdio import serve_stdio

    os.chdir(root)  # a relative path means the same thing to every layer: under the root
    if wire is None:  # no descriptor to claim: the SDK's own transport, as before
        anyio.run(serve_stdio, app, None, handshake)
        return
    feed = cast("IO[str]", Feed(backlog, wire))  # what anyio.wrap_file reads: readline
    anyio.run(serve_stdio, app, anyio.wrap_file(feed), handshake)


def end_on_signals() -> None:
    """SIGTERM, SIGHUP, SIGINT (unless ignored): stop the child processes, then exit 128+signal."""
    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _end)


def _end(signum: int, frame: object) -> None:
    claude_cli = sys.modules.get("legion_llm.llm.claude_code.cli")  # loaded once a call ran it
    if claude_cli is not None:
        claude_cli.stop_children()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(128 + signum)


def take_handover() -> tuple[list[bytes], dict[str | int, str]]:
    """What the plugin's first-start desk (mcp/firststart.py) read and answered before it
    became this server: the lines to read first, and {id: the line it answered}. Taken out of
    the environment, so no child process sees it; ([], {}) when there is none."""
    raw = os.environ.pop(HANDOVER, "")
    if not raw:
        return [], {}
    try:
        body = json.loads(raw)
        lines = [line.rstrip("\n").encode() + b"\n" for line in body["lines"]]
        sent = {_key(request_id): str(line) for request_id, line in body["sent"]}
    except (ValueError, KeyError, TypeError, AttributeError):
        print("legion-llm mcp: the first start's handover is unreadable; it is ignored",
              file=sys.stderr, flush=True)  # fmt: skip
        return [], {}
    return lines, sent


def _key(request_id: Any) -> str | int:
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        raise TypeError(request_id)
    return request_id


def _claim_stdin() -> IO[bytes] | None:
    """The wire on a private descriptor; stdin itself then reads the null device (as the SDK's
    own transport does), so nothing else in the process can take a client's line. None when
    stdin has no descriptor to claim."""
    try:
        fd = sys.stdin.fileno()
        private = os.dup(fd)
    except (AttributeError, OSError, ValueError):
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass  # stdin stays the wire too: nothing in this process reads it
    return os.fdopen(private, "rb")
