"""Finding, probing and running the user's `claude` CLI: the only code here that starts it.

Where it is: `memory.llm.claude_cli` / LEGION_LLM_CLAUDE (a path or a name on PATH), else
`claude` on PATH. Whether it can answer, without a model call: `claude --version`, `claude
--help` (does it know `--json-schema`, and an `auth` command?) and, only when it has one,
`claude auth status`. The help check matters: a CLI without the `auth` command reads `auth status`
as a prompt and answers it, billed. Of `auth status` only `loggedIn`, `authMethod` and
`apiProvider` are kept; Claude Code's credentials and settings are never read here.

Every run gets the caller's environment plus QUIET_ENV (no title call, no auto-updater, no
telemetry), stdin from us, a timeout, a cap on what it may print (MAX_CAPTURE_BYTES: a CLI that
keeps printing is stopped, not buffered), and a session of its own, stopped whole on timeout or
overflow (SIGTERM, so the CLI cleans up after itself, then SIGKILL to its group, its session and
whatever still holds its pipes); a grandchild that keeps the pipes open is never waited for.

No CLI outlives the run that started it: each one is registered while it runs; an exception that
ends the run (Ctrl-C, a signal the front end turned into one) stops its session before it
propagates, and `stop_children` stops every CLI still running (the front ends call it on
SIGTERM, SIGHUP and SIGINT, and the MCP server when its client is gone), whatever thread runs it.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from legion_llm.llm.cancel import CallCancelled, stop_requested
from legion_llm.llm.config import LLMConfig
from legion_llm.memory.untrusted import UntrustedInputError, load_json

QUIET_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
PROBE_TIMEOUT_S = 20.0
TERM_GRACE_S = 3.0  # after SIGTERM on a timeout, before SIGKILL
MAX_CAPTURE_BYTES = 16 * 2**20  # stdout and stderr together; an envelope is a few kB
PIPE_GRACE_S = 2.0  # after the CLI exits, before whatever still holds its pipes is killed
POLL_S = 0.05  # how often the loop looks whether the CLI has exited
CHUNK = 65536
_RUNNING: set[subprocess.Popen[bytes]] = set()  # every CLI started here and not yet ended
_AUTH_COMMAND = re.compile(r"^\s+auth\b", re.MULTILINE)


@dataclass(frozen=True)
class CliRun:
    returncode: int
    stdout: str
    stderr: str


class CliStopped(Exception):
    """The CLI was stopped before it finished (its process group and session were killed)."""


class CliTimeout(CliStopped):
    """The CLI did not finish within the timeout."""


class CliOverflow(CliStopped):
    """The CLI printed more than MAX_CAPTURE_BYTES."""


class CliCancelled(CliStopped, CallCancelled):
    """The caller cancelled the call the CLI was answering (llm/cancel.py)."""


def run_cli(
    argv: list[str],
    *,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
    timeout: float,
    limit: int | None = None,
) -> CliRun:
    """Run `argv` to the end, reading at most `limit` bytes of its stdout and stderr together;
    OSError when it cannot start, CliTimeout when it runs too long, CliOverflow when it prints
    more (MAX_CAPTURE_BYTES by default). It runs in a session of its own; on either stop the session is killed whole, and
    no process that kept the pipes open (a grandchild that left the session, say) is waited for."""
    environment = {**(os.environ if env is None else env), **QUIET_ENV}
    limit = MAX_CAPTURE_BYTES if limit is None else limit
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
        start_new_session=True,
    )
    _RUNNING.add(process)
    try:
        out, err = _exchange(process, stdin.encode("utf-8"), time.monotonic() + timeout, limit)
    except CliTimeout:
        raise CliTimeout(f"no answer within {timeout:g} s") from None
    except CliOverflow:
        raise CliOverflow(f"printed more than {limit // 2**20} MB; it was stopped") from None
    except CliCancelled:
        raise  # its session is stopped already
    except BaseException:  # interrupted: the CLI would go on spending the user's plan
        _stop_session(process)
        raise
    finally:
        _RUNNING.discard(process)
        _close_pipes(process)
    return CliRun(process.returncode, _text(out), _text(err))


def stop_children() -> None:
    """Stop every CLI still running (its session whole, as on a timeout): legion-llm is ending."""
    for process in list(_RUNNING):
        if process.poll() is None:
            _stop_session(process)
        _RUNNING.discard(process)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _exchange(
    process: subprocess.Popen[bytes], data: bytes, deadline: float, limit: int
) -> tuple[bytes, bytes]:
    """Feed stdin and read stdout and stderr until both close, the CLI has exited and its pipes
    stayed open PIPE_GRACE_S longer (then whatever holds them is killed), or a limit is hit."""
    assert process.stdin and process.stdout and process.stderr
    chunks: dict[int, list[bytes]] = {process.stdout.fileno(): [], process.stderr.fileno(): []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        writer = _Writer(process.stdin, data, selector)
        total, exited_at = 0, None
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if now >= deadline and exited_at is None:
                _stop_session(process)
                raise CliTimeout
            if stop_requested():
                _stop_session(process)
                raise CliCancelled("the call was cancelled by its client; Claude Code was stopped")
            if exited_at is not None and now >= min(deadline, exited_at + PIPE_GRACE_S):
                _stop_session(process)  # exited, but something it started holds the pipes
                break
            for key, _ in selector.select(POLL_S):
                if key.fd == writer.fd:
                    writer.write()
                    continue
                chunk = os.read(key.fd, CHUNK)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                total += len(chunk)
                if total > limit:
                    _stop_session(process)
                    raise CliOverflow
                chunks[key.fd].append(chunk)
    try:  # the pipes are closed; the CLI itself may still be finishing
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _stop_session(process)
        raise CliTimeout from None
    out, err = (b"".join(chunks[f.fileno()]) for f in (process.stdout, process.stderr))
    return out, err


class _Writer:
    """stdin, written as the CLI reads it (never blocking), then closed."""

    def __init__(self, pipe: IO[bytes], data: bytes, selector: selectors.BaseSelector) -> None:
        self.pipe, self.fd = pipe, pipe.fileno()
        self.view, self.selector = memoryview(data), selector
        if data:
            os.set_blocking(self.fd, False)
            selector.register(self.fd, selectors.EVENT_WRITE)
        else:
            self.done()

    def write(self) -> None:
        try:
            written = os.write(self.fd, self.view[:CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the CLI closed its stdin (EPIPE): it will say why on stderr
            written = len(self.view)
        self.view = self.view[written:]
        if not self.view:
            self.done()

    def done(self) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.fd)
        with contextlib.suppress(OSError):
            self.pipe.close()


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Wait for the CLI itself (it has exited or was killed): no zombie is left."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(TERM_GRACE_S)
    if process.poll() is None:
        process.kill()
        process.wait()


def _stop_session(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the CLI's process group, then SIGKILL after TERM_GRACE_S to the group, to
    every process still in the CLI's session, and to any process that holds its pipes (one that
    called setsid). Claude Code removes its ~/.claude/sessions/<pid>.json on SIGTERM (in
    milliseconds); SIGKILL leaves it."""
    if not hasattr(os, "killpg"):  # pragma: no cover - Windows
        process.kill()
        return
    pipes = []
    for pipe in (process.stdout, process.stderr):
        if pipe is not None and not pipe.closed:  # closed: the thread that ran it is done
            with contextlib.suppress(ValueError, OSError):
                pipes.append(pipe.fileno())
    _signal_group(process, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(TERM_GRACE_S)
    _signal_group(process, signal.SIGKILL)  # children that outlived the CLI too
    for pid in _session_members(process.pid) | _pipe_holders(pipes):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    _reap(process)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def _processes() -> list[str]:
    """The process ids under /proc (Linux); none elsewhere."""
    try:
        return [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _session_members(session: int) -> set[int]:
    """Processes whose session is `session` (those that changed only their process group)."""
    found = set()
    for pid in _processes():
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 4 and fields[4] == str(session).encode():
            found.add(int(pid))
    return found - {os.getpid()}


def _pipe_holders(fds: list[int]) -> set[int]:
    """Processes other than this one that hold an end of the pipes `fds` read from."""
    try:
        wanted = {f"pipe:[{os.fstat(fd).st_ino}]" for fd in fds}
    except OSError:
        return set()
    found = set()
    for pid in _processes():
        if int(pid) == os.getpid():
            continue
        try:
            links = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for link in links:
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{link}") in wanted:
                    found.add(int(pid))
                    break
    return found


def locate(config: LLMConfig, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(the executable, "") or (None, why it was not found), looked up on `env`'s PATH."""
    path = (os.environ if env is None else env).get("PATH")
    if config.claude_cli:
        found = shutil.which(os.path.expanduser(config.claude_cli), path=path)
        where = config.sources.get("claude_cli", "the claude_cli setting")
        if found is None:
            return None, f"{where} names {config.claude_cli!r}, which is not an executable"
        return found, ""
    found = shutil.which("claude", path=path)
    return (found, "") if found else (None, "no `claude` on PATH (set LEGION_LLM_CLAUDE)")


@dataclass(frozen=True)
class ClaudeCodeStatus:
    """What `llm check` shows and `auto` decides on; `problem` is None when the CLI can answer."""

    path: str | None
    version: str | None = None
    json_schema: bool = False
    logged_in: bool | None = None
    auth_method: str | None = None
    api_provider: str | None = None
    problem: str | None = None

    @property
    def available(self) -> bool:
        return self.problem is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "version": self.version,
            "json_schema": self.json_schema,
            "logged_in": self.logged_in,
            "auth_method": self.auth_method,
            "api_provider": self.api_provider,
            "available": self.available,
            "problem": self.problem,
        }


def probe(config: LLMConfig, env: Mapping[str, str] | None = None) -> ClaudeCodeStatus:
    """Locate the CLI and ask it (never a model) whether it can answer structured prompts."""
    path, why = locate(config, env)
    if path is None:
        return ClaudeCodeStatus(None, problem=why)
    try:
        version = _version(_ask(path, ["--version"], env))
        help_text = _ask(path, ["--help"], env).stdout
        if "--json-schema" not in help_text:
            too_old = f"claude {version} is too old for --json-schema; update it (`claude update`)"
            return ClaudeCodeStatus(path, version, problem=too_old)
        if not _AUTH_COMMAND.search(help_text):
            unknown = f"claude {version} has no `auth status` to tell whether it is logged in"
            return ClaudeCodeStatus(path, version, True, problem=unknown)
        auth = _auth_status(_ask(path, ["auth", "status"], env))
    except (OSError, CliStopped, ValueError) as exc:
        return ClaudeCodeStatus(path, problem=f"{path} could not be asked: {exc}")
    logged_in = auth.get("loggedIn") is True
    status = ClaudeCodeStatus(
        path,
        version,
        True,
        logged_in,
        _text_or_none(auth.get("authMethod")),
        _text_or_none(auth.get("apiProvider")),
        None if logged_in else "Claude Code is not logged in (run `claude auth login`)",
    )
    return status


def _ask(path: str, args: list[str], env: Mapping[str, str] | None) -> CliRun:
    return run_cli([path, *args], env=env, timeout=PROBE_TIMEOUT_S)


def _version(run: CliRun) -> str:
    words = run.stdout.split()
    if run.returncode != 0 or not words or not re.match(r"^\d+\.\d+", words[0]):
        raise ValueError("`claude --version` did not print a version")
    return words[0]


def _auth_status(run: CliRun) -> dict[str, Any]:
    """The JSON of `claude auth status` (exit 1 when logged out, the JSON still printed)."""
    try:
        data = load_json(run.stdout)
    except UntrustedInputError as exc:
        raise ValueError(f"`claude auth status` printed JSON that {exc}") from None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ValueError("`claude auth status` did not print a JSON object")
    return data


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
