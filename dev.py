#!/usr/bin/env python3
"""Set-up and task runner that needs nothing but Python and pip.

    python3 dev.py demo            # the whole flow on the bundled demo project, offline
    python3 dev.py test            # ruff, ruff format --check, mypy and the whole suite (CI runs this)
    python3 dev.py test --quick    # the same checks on the tests that start no program, read no
                                   # corpus and are not slow: the inner loop (under a minute)
    python3 dev.py test --latest   # the whole suite on the newest releases pyproject.toml allows
    python3 dev.py lock            # refresh requirements-dev.lock from pyproject.toml
    python3 dev.py handshake       # regenerate the plugin's first-start MCP answers from the
                                   # live server (after a change to the tools or the SDK)

`demo` and `test` run in .venv, installed from requirements-dev.lock: every dependency and dev
tool at an exact version with its hashes, so a release upstream cannot change a run. .venv is
made again from the lock whenever the lock or pyproject.toml changed. `--latest` uses
.venv-latest, upgraded to the newest allowed versions at every run, so a breaking release shows
up there before a user meets it. Arguments after the task's own go to pytest.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LOCK = ROOT / "requirements-dev.lock"
LINT_PATHS = ["legion_llm", "tests", "benchmarks", "dev.py"]
QUICK_MARKERS = "not subprocess and not corpus and not slow and not real_claude_cli"
# The lock's resolver, pinned: `uv pip compile` writes the requirements format that pip itself
# installs with --require-hashes, so a fresh machine needs only Python and pip; uv is needed only
# to refresh the lock, in a venv of its own.
UV = "uv==0.13.9"
LOCK_COMMAND = [
    "pip", "compile", "pyproject.toml", "--extra", "dev", "--universal", "--generate-hashes",
    "--python-version", "3.11", "--quiet", "--output-file", LOCK.name,
]  # fmt: skip


class Venv:
    def __init__(self, name: str) -> None:
        self.path = ROOT / name
        self.bin = self.path / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")
        self.stamp = self.path / ".legion-llm-installed"

    def create(self, *, clear: bool = False) -> None:
        if clear or not self.python.exists():
            print(f"creating virtual environment in {self.path}", flush=True)
            venv.EnvBuilder(with_pip=True, clear=True).create(self.path)

    def pip(self, *args: str) -> None:
        _run(self.python, "-m", "pip", "--disable-pip-version-check", "install", *args)


def _run(*args: str | Path, env: dict[str, str] | None = None) -> None:
    print("+ " + " ".join(str(a) for a in args), flush=True)
    done = subprocess.run([str(a) for a in args], cwd=ROOT, env=env)
    if done.returncode != 0:
        sys.exit(done.returncode)


def _locked_stamp() -> str:
    """What .venv was installed from: the lock, and the parts of pyproject.toml an install reads
    (a change to the tool settings, ruff's or pytest's, needs no new venv)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    installed = {k: v for k, v in project.items() if k in ("project", "build-system")}
    installed["tool"] = {"hatch": project.get("tool", {}).get("hatch")}
    digest = hashlib.sha256(LOCK.read_bytes())
    digest.update(json.dumps(installed, sort_keys=True).encode())
    return digest.hexdigest()


def locked_venv() -> Venv:
    """.venv holding exactly the lock (and this checkout, editable); rebuilt when either changed."""
    env = Venv(".venv")
    if env.stamp.exists() and env.stamp.read_text() == _locked_stamp():
        return env
    print("installing the locked dependencies into .venv (once; about a minute)", flush=True)
    env.create(clear=True)  # from scratch: nothing the lock no longer names stays behind
    env.pip("--require-hashes", "--no-deps", "-r", str(LOCK))
    env.pip("--no-deps", "--no-build-isolation", "-e", ".")  # hatchling comes from the lock
    env.stamp.write_text(_locked_stamp())
    return env


def latest_venv() -> Venv:
    """.venv-latest upgraded to the newest releases pyproject.toml's ranges allow."""
    env = Venv(".venv-latest")
    env.create()
    env.pip("--upgrade", "--upgrade-strategy", "eager", "pip")
    env.pip("--upgrade", "--upgrade-strategy", "eager", "-e", ".[dev]")
    _run(env.python, "-m", "pip", "list", "--disable-pip-version-check", "--format", "freeze")
    return env


def _test_env(tier: str, versions: str) -> dict[str, str]:
    # no key reaches a test; the bytecode cache stays on (pytest keeps its rewritten test modules
    # there, and every subprocess of the suite imports the package from it)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ANTHROPIC_") and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
    env["LEGION_LLM_TEST_TIER"] = tier  # quick: tests/conftest.py refuses an unmarked subprocess
    env["LEGION_LLM_TEST_VERSIONS"] = versions  # latest: tests/test_lock.py skips the locked check
    return env


def _workers() -> str:
    """One pytest worker per core (at least two: the suite waits on subprocesses as much as on CPU)."""
    return str(max(2, os.cpu_count() or 1))


def test(args: list[str]) -> None:
    quick, latest = "--quick" in args, "--latest" in args
    rest = [a for a in args if a not in ("--quick", "--latest")]
    env = latest_venv() if latest else locked_venv()
    run_env = _test_env("quick" if quick else "full", "latest" if latest else "locked")
    _run(env.bin / "ruff", "check", *LINT_PATHS, env=run_env)
    _run(env.bin / "ruff", "format", "--check", *LINT_PATHS, env=run_env)
    _run(env.bin / "mypy", env=run_env)
    selection = ["-m", QUICK_MARKERS] if quick else []
    _run(env.python, "-m", "pytest", "-n", _workers(), *selection, *rest, env=run_env)


def demo(args: list[str]) -> None:
    _run(locked_venv().bin / "legion-llm", "demo", *args)


def lock(args: list[str]) -> None:
    tools = Venv(".venv-tools")
    tools.create()
    tools.pip("--quiet", UV)
    env = {**os.environ, "UV_CUSTOM_COMPILE_COMMAND": "python3 dev.py lock"}  # the lock's header
    _run(tools.python, "-m", "uv", *LOCK_COMMAND, *args, env=env)
    print(f"wrote {LOCK.name}; the next `python3 dev.py test` installs it", flush=True)


HANDSHAKE = ROOT / "integrations" / "claude-code" / "mcp-handshake.json"


def handshake(_: list[str]) -> None:
    """The plugin's first-start answers (legion_llm/mcp/firststart.py), from the live server in
    .venv; tests/mcp/test_firststart.py fails while the file differs from what this writes."""
    code = (
        "import sys; from legion_llm.mcp.firststart import generate; "
        "sys.stdout.write(generate([sys.executable, '-m', 'legion_llm', 'mcp']))"
    )
    print(f"+ generating {HANDSHAKE.relative_to(ROOT)} from the live server", flush=True)
    done = subprocess.run([str(locked_venv().python), "-c", code], cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8")  # fmt: skip
    if done.returncode != 0:
        sys.exit(done.stderr)
    HANDSHAKE.write_text(done.stdout, encoding="utf-8")
    print(f"wrote {HANDSHAKE.relative_to(ROOT)}", flush=True)


def main() -> None:
    tasks = {"test": test, "demo": demo, "lock": lock, "handshake": handshake}
    if len(sys.argv) < 2 or sys.argv[1] not in tasks:
        print(
            "usage: python3 dev.py {test [--quick|--latest]|demo|lock|handshake} [args...]",
            file=sys.stderr,
        )
        sys.exit(2)
    tasks[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
