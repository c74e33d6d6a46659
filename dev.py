#!/usr/bin/env python3
"""Set-up and task runner that needs nothing but Python and pip.

    python3 dev.py demo   # create/update .venv, run the whole flow on the bundled demo project
    python3 dev.py test   # create/update .venv, run ruff, ruff format --check, mypy and pytest

Each command creates the virtual environment in .venv when it is missing and reinstalls the
project only when pyproject.toml changed since the last install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".legion-llm-installed"
LINT_PATHS = ["legion_llm", "tests", "benchmarks", "dev.py"]


def _run(*args: str | Path, env: dict[str, str] | None = None) -> None:
    print("+ " + " ".join(str(a) for a in args), flush=True)
    done = subprocess.run([str(a) for a in args], cwd=ROOT, env=env)
    if done.returncode != 0:
        sys.exit(done.returncode)


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> None:
    if not PYTHON.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    if STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return
    print(
        "installing legion-llm and its dependencies into .venv (once; about a minute)", flush=True
    )
    _run(
        PYTHON,
        "-m",
        "pip",
        "install",
        "--progress-bar",
        "on",
        "--disable-pip-version-check",
        "-e",
        ".[dev]",
    )
    STAMP.write_text(_wanted_stamp())


def _test_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _workers() -> str:
    """One pytest worker per core (at least two: the suite waits on subprocesses as much as on CPU)."""
    return str(max(2, os.cpu_count() or 1))


def test() -> None:
    env = _test_env()
    _run(BIN / "ruff", "check", *LINT_PATHS, env=env)
    _run(BIN / "ruff", "format", "--check", *LINT_PATHS, env=env)
    _run(BIN / "mypy", env=env)
    _run(PYTHON, "-m", "pytest", "-n", _workers(), env=env)


def demo() -> None:
    _run(BIN / "legion-llm", "demo", *sys.argv[2:])


def main() -> None:
    tasks = {"test": test, "demo": demo}
    if len(sys.argv) < 2 or sys.argv[1] not in tasks:
        print("usage: python3 dev.py {test|demo}", file=sys.stderr)
        sys.exit(2)
    ensure_venv()
    tasks[sys.argv[1]]()


if __name__ == "__main__":
    main()
