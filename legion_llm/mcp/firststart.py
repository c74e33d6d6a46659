"""`legion-llm mcp` in the Claude Code plugin before its environment is built: the standard
library alone, run from the plugin's source by the system Python.

The plugin's launcher (integrations/claude-code/bin/legion-llm) builds legion-llm's venv on the
first start, which takes about a minute; Claude Code gives an MCP server 30 s to answer
`initialize`. So while the venv builds, the launcher runs this desk instead, which:

- answers `initialize`, `tools/list`, `prompts/list`, `resources/list`,
  `resources/templates/list` and `ping` with what the real server answers: the answers are
  generated from the live server (`generate`, `python3 dev.py handshake`) and shipped in the
  plugin (integrations/claude-code/mcp-handshake.json); tests/mcp/test_firststart.py fails when
  they differ from the live server's. Only the project root, which the instructions name, is put
  in at run time;
- answers a tool call with a tool error saying the install is in progress (or failed, with its
  log): nothing is run and no data is made up;
- answers any other request with a JSON-RPC error saying the same;
- as soon as the venv is ready (and no line is half read), becomes the real server: it `exec`s
  the venv's `legion-llm mcp ...` in this same process (same pid, same pipes), passing the
  handshake lines it read and the answers it sent (LEGION_LLM_MCP_HANDOVER). That server's front
  desk (mcp/frontdesk.py) feeds those lines to the SDK first, so the SDK's session is
  initialized as the client believes, and sends none of its answers to them again (it compares
  them with the desk's, and says so on stderr when they differ).

Nothing here imports a third-party module, or legion_llm beyond the project-root finder:
tests/mcp/test_firststart.py runs it with an interpreter that has nothing installed.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

HANDOVER = "LEGION_LLM_MCP_HANDOVER"  # the env var carrying the lines to the venv's server
ROOT_MARK = "{root}"  # stands for the project root in the shipped instructions
ANY_VERSION = "*"  # the answer for a protocol version not listed (the server's own choice)
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "ping")
METHODS = ("initialize", *LISTS)  # what the shipped file answers
MAX_DEPTH = 64  # how deeply a line's JSON may nest (a JSON-RPC message needs a few levels)
POLL_S = 0.25  # how often the desk looks whether the venv is ready, while the client is quiet
ABOUT = (
    "What `legion-llm mcp` answers to the requests that depend only on the code, by the protocol "
    "version the client asked ('*': any other). Generated from the live server by "
    "`python3 dev.py handshake`; tests/mcp/test_firststart.py fails when it is stale. Do not edit."
)


# ---------------------------------------------------------------- the shipped answers


def load_answers(path: Path) -> dict[str, dict[str, Any]]:
    """{method: {protocol version or '*': result}} from the shipped file."""
    body = json.loads(path.read_text("utf-8"))
    answers: dict[str, dict[str, Any]] = body["answers"]
    if any(ANY_VERSION not in answers.get(method, {}) for method in METHODS):
        raise ValueError(f"{path} lacks an answer for every protocol version")
    return answers


def generate(server: list[str], versions: list[str] | None = None) -> str:
    """The shipped file's text, from the live server: `server` is the command that serves (it
    gets `--root ROOT`). One server per protocol version the SDK knows, and one for a version it
    does not know (its answer is '*'); an answer the same as '*' is not repeated. Needs the SDK
    (imported here, never by the desk)."""
    import subprocess
    import tempfile

    if versions is None:
        from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

        versions = list(KNOWN_PROTOCOL_VERSIONS)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch, "project-root-for-the-handshake").resolve()
        (root / ".planning").mkdir(parents=True)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch, "cache")),
               "LEGION_LLM_ENGINE": "offline"}  # fmt: skip
        env.pop(HANDOVER, None)
        probes = {version: _session(version) for version in [*versions, "0000-00-00"]}
        running = {
            version: subprocess.Popen(
                [*server, "--root", str(root)],
                cwd=root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
            for version in probes
        }
        seen: dict[str, dict[str, Any]] = {}
        for version, process in running.items():
            out, err = process.communicate(probes[version], timeout=300)
            replies = {reply["id"]: reply for reply in map(json.loads, out.splitlines())}
            if process.returncode != 0 or sorted(replies) != list(range(1, len(METHODS) + 1)):
                raise RuntimeError(f"the server did not answer the handshake ({version}): {err}")
            for number, method in enumerate(METHODS, start=1):
                result = replies[number]["result"]
                if method == "initialize":
                    result = _root_marked(result, str(root))
                seen.setdefault(method, {})[version] = result
    answers: dict[str, dict[str, Any]] = {}
    for method, by_version in seen.items():
        other = by_version.pop("0000-00-00")
        answers[method] = {v: r for v, r in by_version.items() if r != other}
        answers[method][ANY_VERSION] = other
    return json.dumps({"about": ABOUT, "answers": answers}, indent=1, ensure_ascii=False) + "\n"


def _session(version: str) -> str:
    hello = {"protocolVersion": version, "capabilities": {},
             "clientInfo": {"name": "legion-llm-handshake", "version": "1"}}  # fmt: skip
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]  # fmt: skip
    lines += [{"jsonrpc": "2.0", "id": n, "method": m} for n, m in enumerate(LISTS, start=2)]
    return "".join(json.dumps(line) + "\n" for line in lines)


def _root_marked(result: dict[str, Any], root: str) -> dict[str, Any]:
    instructions = result.get("instructions")
    if (
        not isinstance(instructions, str)
        or instructions.count(root) != 1
        or ROOT_MARK in instructions
    ):
        raise RuntimeError("the instructions do not name the project root exactly once")
    return {**result, "instructions": instructions.replace(root, ROOT_MARK)}


# ---------------------------------------------------------------- reading a line

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class Unreadable(ValueError):
    """A line that is JSON to a lenient reader, refused by a strict one (said why)."""


def read_json(raw: bytes) -> Any:
    """One line's JSON as a strict reader takes it; ValueError (with why) when it is not JSON in
    UTF-8, nests deeper than MAX_DEPTH (Python's decoder would raise RecursionError, or take
    the whole stack) or holds a lone surrogate (`"\\ud800"`: no UTF-8 text can carry it, and
    the SDK's reader refuses it)."""
    if nesting(raw) > MAX_DEPTH:
        raise Unreadable(f"nested deeper than {MAX_DEPTH} levels")
    message = json.loads(raw)
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Unreadable("a string holds a lone surrogate") from None
    return message


def nesting(raw: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings aside)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return 0  # too few to go past the limit
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub(b'""', raw)):
        depth += 1 if bracket in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


# ---------------------------------------------------------------- the desk


def _line(message: dict[str, Any]) -> bytes:
    """A message as the SDK writes it: compact, UTF-8."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


class Desk:
    """The answers to one client until the venv is ready; `state()` says what the install is
    doing: 'building', 'ready' or 'failed'."""

    def __init__(
        self, root: Path, answers: dict[str, dict[str, Any]], state: Callable[[], str], log: str
    ) -> None:
        self.root, self.answers, self.state, self.log = root, answers, state, log
        self.version: str | None = None  # the protocol version the client's initialize asked
        self.backlog: list[bytes] = []  # the lines the real server must read first
        self.sent: list[tuple[str | int, str]] = []  # (id, line) answered for those lines

    def reply(self, raw: bytes) -> bytes | None:
        """The answer to one line (None: nothing to say)."""
        try:
            message = read_json(raw)
        except ValueError as exc:
            why = f" ({exc})" if isinstance(exc, Unreadable) else ""
            return _line(_error(None, -32700, f"Parse error: the line is not JSON{why}"))
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            request_id = message.get("id") if isinstance(message, dict) else None
            invalid = "Invalid Request: not a JSON-RPC 2.0 message"
            return _line(_error(_usable(request_id), -32600, invalid))
        method = message.get("method")
        if "id" not in message:  # a notification: state the server must know (initialized)
            if isinstance(method, str) and method != "notifications/cancelled":
                self.backlog.append(raw)  # (every request is answered: nothing to cancel)
            return None
        request_id = _usable(message["id"])
        if not isinstance(method, str):
            if request_id is not None and ("result" in message or "error" in message):
                return None  # a response: this desk asks the client nothing
            return _line(_error(request_id, -32600, "Invalid Request: no method"))
        if request_id is None:
            return _line(_error(None, -32600, "Invalid Request: the id is not a string or number"))
        answer = self._answer(request_id, method, message.get("params"))
        line = _line(answer)
        if method in METHODS and "result" in answer:
            self.backlog.append(raw)
            self.sent.append((request_id, line.decode().rstrip("\n")))
        return line

    def _answer(self, request_id: str | int, method: str, params: Any) -> dict[str, Any]:
        if method == "initialize":
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            if not isinstance(version, str) or self.version is not None:
                return _error(request_id, -32602, "Invalid params: one initialize, with a version")
            self.version = version
            result = dict(self._stored(method))
            text = result["instructions"].replace(ROOT_MARK, str(self.root))
            return _result(request_id, {**result, "instructions": text})
        if method in LISTS:
            return _result(request_id, self._stored(method))
        if method == "tools/call":
            return _result(request_id, {"content": [{"type": "text", "text": self._why()}],
                                        "isError": True})  # fmt: skip
        return _error(request_id, -32603, self._why())

    def _stored(self, method: str) -> Any:
        by_version = self.answers[method]
        return by_version.get(self.version or ANY_VERSION, by_version[ANY_VERSION])

    def _why(self) -> str:
        if self.state() == "failed":
            return (
                "legion-llm could not install its Python environment, so nothing was run "
                f"(the log: {self.log}). Fix what it says, then restart the session."
            )
        return (
            "legion-llm is still installing its Python environment (the plugin's first start "
            f"takes about a minute; the log: {self.log}), so nothing was run. Call the tool "
            "again in a minute."
        )

    def handover(self) -> str:
        """What the venv's server needs: the lines to read first and the answers sent."""
        return json.dumps({"lines": [line.decode("utf-8", "replace") for line in self.backlog],
                           "sent": self.sent}, ensure_ascii=False)  # fmt: skip


def _usable(request_id: Any) -> str | int | None:
    if isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    ):
        return request_id
    return None


def _result(request_id: str | int, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def serve(desk: Desk, then: list[str], wire: int = 0, out: BinaryIO | None = None) -> int:
    """Answer the client on `wire` until the venv is ready, then exec `then` (the venv's
    `legion-llm mcp ...`) with the handover. Returns at the end of input (the client left)."""
    out = out if out is not None else sys.stdout.buffer
    pending = b""
    tried = False
    while True:
        if not pending and not tried and desk.state() == "ready":
            tried = True  # exec returns only when it failed: keep answering from the plugin
            _become(then, {HANDOVER: desk.handover()})
        readable, _, _ = select.select([wire], [], [], POLL_S)
        if not readable:
            continue
        chunk = os.read(wire, 65536)
        if not chunk:
            return 0
        *lines, pending = (pending + chunk).split(b"\n")
        for raw in lines:
            if raw.strip():
                answer = desk.reply(raw)
                if answer is not None:
                    out.write(answer)
                    out.flush()


def wait_then_become(state: Callable[[], str], then: list[str]) -> int:
    """What the launcher did before this desk: wait for the install, then be the server."""
    while (found := state()) == "building":
        time.sleep(POLL_S)
    if found == "ready":
        _become(then, {})
    return 1


def _become(then: list[str], extra: dict[str, str]) -> None:
    try:
        os.execve(then[0], then, {**os.environ, **extra})
    except OSError as exc:
        print(f"legion-llm mcp: cannot start {then[0]} ({exc})", file=sys.stderr, flush=True)


def install_state(venv: Path, lock: Path) -> Callable[[], str]:
    """The launcher's view of its install: 'ready' once the venv's stamp is written,
    'building' while its lock is held by a live install, else 'failed'. The lock is stale as the
    launcher sees it (the next start takes it over): its process gone or a zombie, another process
    under a reused pid (the start time it recorded differs), or older than the install timeout."""
    try:
        limit = float(os.environ.get("LEGION_LLM_INSTALL_TIMEOUT") or 900)
    except ValueError:
        limit = 900.0

    def state() -> str:
        _reap()  # the install is this process's child once the launcher exec'd the desk
        if (venv / ".installed").is_file() and os.access(venv / "bin" / "legion-llm", os.X_OK):
            return "ready"
        try:
            holder = int((lock / "pid").read_text("utf-8").strip() or "0")
        except FileNotFoundError:
            return "building" if lock.is_dir() else "failed"  # just taken, or gone
        except (OSError, ValueError):
            return "building"
        return "building" if _held(lock, holder, limit) else "failed"

    return state


def _held(lock: Path, holder: int, limit: float) -> bool:
    """Whether `lock` is held by its live install (as the launcher's `lock_live` decides)."""
    try:
        if time.time() - lock.stat().st_mtime > limit:
            return False
        os.kill(holder, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # alive, someone else's (or the lock just went)
    fields = _stat(holder)
    if fields and fields[0] == "Z":
        return False
    try:
        started = (lock / "started").read_text("utf-8").strip()
    except OSError:
        return True
    return not started or not fields or len(fields) < 20 or fields[19] == started


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name (state first); [] where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError, UnicodeDecodeError):
        return []


def _reap() -> None:
    """Collect the children that have ended (the install), so none stays a zombie."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except (ChildProcessError, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    """`firststart ANSWERS VENV LOCK LOG mcp [--root ROOT]` (the launcher's call). Whatever it
    cannot serve (another command line, an unreadable answers file) waits for the venv, as the
    launcher did before."""
    args = sys.argv[1:] if argv is None else argv
    answers_file, venv, lock, log, *command = args
    state = install_state(Path(venv), Path(lock))
    then = [str(Path(venv) / "bin" / "legion-llm"), *command]
    try:
        if (
            command[:1] != ["mcp"]
            or len(command) not in (1, 3)
            or command[1:2] not in ([], ["--root"])
        ):
            raise ValueError(f"the first start serves `mcp [--root ROOT]` only, not {command}")
        from legion_llm.project import resolve_root

        root = resolve_root(Path(command[2]) if len(command) == 3 else None)
        answers = load_answers(Path(answers_file))
    except Exception as exc:
        print(f"legion-llm mcp: {type(exc).__name__}: {exc}; waiting for the install",
              file=sys.stderr, flush=True)  # fmt: skip
        return wait_then_become(state, then)
    print(f"legion-llm mcp: answering from the plugin while the install runs (log: {log})",
          file=sys.stderr, flush=True)  # fmt: skip
    return serve(Desk(root, answers, state, log), then)
