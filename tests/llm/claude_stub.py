"""A stub `claude` executable in a test's folder (tests/llm/stub_claude_program.py is the program).

`StubClaude(folder).script(answer({...}), reply("budget"), logged_in=...)` scripts the replies of
successive `-p` runs (the last one repeats); put `stub.on_path()` in PATH; `stub.print_calls()`
lists each run's argv, stdin, the environment variables it saw and its pid.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROGRAM = Path(__file__).with_name("stub_claude_program.py")


def answer(output: dict[str, Any], *, cost: float = 0.0021, **tokens: int) -> dict[str, Any]:
    counts = {"in": 200, "out": 100, "cache_read": 0, "cache_write": 0, **tokens}
    return {"kind": "answer", "output": output, "cost": cost, "tokens": counts}


def reply(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, **fields}


@dataclass
class StubClaude:
    folder: Path

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / "claude"
        text = f"#!{sys.executable}\n" + PROGRAM.read_text(encoding="utf-8")
        self.path.write_text(text, encoding="utf-8")
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)
        self.script()

    def script(
        self,
        *replies: dict[str, Any],
        logged_in: bool = True,
        auth_method: str = "claude.ai",
        old: bool = False,
        version: str = "2.1.197",
        auth_stdout: str | None = None,
    ) -> StubClaude:
        state = {"replies": list(replies) or [reply("text", text="(nothing scripted)")],
                 "logged_in": logged_in, "auth_method": auth_method, "old": old,
                 "version": version, "auth_stdout": auth_stdout}  # fmt: skip
        (self.folder / "scenario.json").write_text(json.dumps(state), encoding="utf-8")
        return self

    def on_path(self) -> str:
        return f"{self.folder}{os.pathsep}{os.environ.get('PATH', '')}"

    def calls(self) -> list[dict[str, Any]]:
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]

    def print_calls(self) -> list[dict[str, Any]]:
        return [call for call in self.calls() if call.get("print")]


def option(argv: list[str], name: str) -> str:
    """The value after `name` in an argv."""
    return argv[argv.index(name) + 1]
