"""Shared test set-up: no API keys, no network, a CLI runner through the real entry point."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from legion_llm.cache import cache_folder
from legion_llm.entry import main

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED = REPO.parent / "shared"
REALWORLD = SHARED / "realworld"  # the first corpus (tests that name one of its files)
# Every corpus of real projects: ../shared/realworld, realworld-c and any realworld* folder added
# later, read with no change here. Each holds owner__repo folders with their `.planning/`.
CORPORA = tuple(sorted(p for p in SHARED.glob("realworld*") if p.is_dir()))
NO_CORPUS = "no ../shared/realworld* corpus"


def corpus_projects() -> list[Path]:
    """Every project folder (holding `.planning/`) of every corpus, in a stable order."""
    return [p for corpus in CORPORA for p in sorted(corpus.iterdir()) if (p / ".planning").is_dir()]


def corpus_name(project: Path) -> str:
    """`realworld-c/owner__repo`: unique across corpora."""
    return f"{project.parent.name}/{project.name}"


def corpus_files(pattern: str = "*.md") -> list[Path]:
    """Every file of every corpus matching `pattern` (hidden folders such as .planning included)."""
    return [p for corpus in CORPORA for p in sorted(corpus.rglob(pattern)) if p.is_file()]


def copy_corpus(target: Path) -> Path:
    """The `.planning/` of every corpus project copied under `target/<corpus>/<project>/` (one
    folder that `eval compaction --corpus` reads whole); the originals are never written."""
    for project in corpus_projects():
        shutil.copytree(project / ".planning", target / corpus_name(project) / ".planning")
    return target


# The user's cache folder (legion_llm/cache.py: token ranks, the MCP handshake): one temporary
# folder for the session, inherited by every subprocess, never the real one; the session fails
# when the real one changed while it ran (a subprocess given HOME but not XDG_CACHE_HOME).
_REAL_CACHE = cache_folder()


def _cache_state(folder: Path | None) -> list[tuple[str, int, int]] | None:
    if folder is None or not folder.is_dir():
        return None
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir())


_REAL_CACHE_BEFORE = _cache_state(_REAL_CACHE)
_CACHE_HOME = tempfile.mkdtemp(prefix="legion-llm-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
atexit.register(shutil.rmtree, _CACHE_HOME, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _cache_state(_REAL_CACHE) != _REAL_CACHE_BEFORE:
        print(f"\nERROR: the tests wrote into the real cache folder {_REAL_CACHE}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# `python3 dev.py test --quick` leaves out the tests marked subprocess, corpus, slow and
# real_claude_cli. So that the quick tier stays what it says, a test it runs that starts a program
# anyway fails there, naming the marker it lacks (the full suite runs it as usual).
QUICK_TIER = os.environ.get("LEGION_LLM_TEST_TIER") == "quick"


@pytest.fixture(autouse=True)
def _quick_tier_starts_no_program(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not QUICK_TIER or request.node.get_closest_marker("subprocess"):
        return
    import subprocess

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(
            "this test starts a program: mark it @pytest.mark.subprocess (dev.py test --quick "
            "runs only tests that start none)"
        )

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("ANTHROPIC_", "LEGION_", "CLAUDE_CODE_")):
            monkeypatch.delenv(name, raising=False)
    # A developer's own logged-in `claude` must never answer a test: hide it from PATH.
    folders = os.environ.get("PATH", "").split(os.pathsep)
    kept = [f for f in folders if not (f and shutil.which("claude", path=f))]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))


@pytest.fixture(autouse=True)
def _user_folders(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The user's own settings, trust list and ticket key (legion_llm/userdirs.py) live in a
    temporary folder: no test reads or writes the real ~/.config or ~/.local/share."""
    base = tmp_path_factory.mktemp("user")
    for variable, folder in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"),
                             ("XDG_CACHE_HOME", "cache")):  # fmt: skip
        monkeypatch.setenv(variable, str(base / folder))
    return base


def trust_project(root: Path) -> None:
    """`legion-llm trust` for `root` as its settings.json (and the program it names) is now."""
    from legion_llm.config import project_sensitive
    from legion_llm.trust import record_trust

    _, digest, program = project_sensitive(root / "settings.json")
    record_trust(root, digest, program)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """Run `legion-llm ARGS` in this process through legion_llm.entry.main; returns a CliResult."""

    def run(*args: str | Path) -> CliResult:
        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    yield run


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder with a .planning directory."""
    (tmp_path / ".planning").mkdir()
    return tmp_path


@pytest.fixture
def demo_project(tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", target)
    return target
