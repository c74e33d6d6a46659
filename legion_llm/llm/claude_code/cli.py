"""Finding, probing and running the user's `claude` CLI: the only code here that starts it.

Where it is: `memory.llm.claude_cli` / LEGION_LLM_CLAUDE (a path or a name on PATH), else
`claude` on PATH. Whether it can answer, without a model call: `claude --version`, `claude
--help` (does it know `--json-schema`, and an `auth` command?) and, only when it has one,
`claude auth status`. The help check matters: a CLI without the `auth` command reads `auth status`
as a prompt and answers it, billed. Of `auth status` only `loggedIn`, `authMethod` and
`apiProvider` are kept; Claude Code's credentials and settings are never read here.

Every run gets the caller's environment plus QUIET_ENV (no title call, no auto-updater, no
telemetry), stdin from us, a timeout, and its own process group, stopped whole on timeout
(SIGTERM, so the CLI cleans up after itself, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from legion_llm.llm.config import LLMConfig

QUIET_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
PROBE_TIMEOUT_S = 20.0
TERM_GRACE_S = 3.0  # after SIGTERM on a timeout, before SIGKILL
_AUTH_COMMAND = re.compile(r"^\s+auth\b", re.MULTILINE)


@dataclass(frozen=True)
class CliRun:
    returncode: int
    stdout: str
    stderr: str


class CliTimeout(Exception):
    """The CLI did not finish within the timeout (its process group was killed)."""


def run_cli(
    argv: list[str], *, stdin: str = "", env: Mapping[str, str] | None = None, timeout: float
) -> CliRun:
    """Run `argv` to the end; OSError when it cannot start, CliTimeout when it runs too long."""
    environment = {**(os.environ if env is None else env), **QUIET_ENV}
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_group(process)
        process.communicate()
        raise CliTimeout(f"no answer within {timeout:g} s") from None
    return CliRun(process.returncode, out, err)


def _stop_group(process: subprocess.Popen[str]) -> None:
    """SIGTERM to the group, then SIGKILL to whatever is left after TERM_GRACE_S. Claude Code
    removes its ~/.claude/sessions/<pid>.json on SIGTERM (in milliseconds); SIGKILL leaves it."""
    if not hasattr(os, "killpg"):  # pragma: no cover - Windows
        process.kill()
        return
    _signal_group(process, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(TERM_GRACE_S)
    _signal_group(process, signal.SIGKILL)  # children that outlived the CLI too


def _signal_group(process: subprocess.Popen[str], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


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
    except (OSError, CliTimeout, ValueError) as exc:
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
        data = json.loads(run.stdout)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise ValueError("`claude auth status` did not print a JSON object")
    return data


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
