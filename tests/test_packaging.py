"""The built wheel works outside the clone: built from this checkout with no network, installed
into a fresh virtual environment (its dependencies come from the test environment's
site-packages through a .pth file, so nothing is downloaded), then run from a folder that is not
the checkout: `--version` on both paths, `eval compaction` (the definition and its fixtures are
package data) and `demo`."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from legion_llm import __version__
from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]


def run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a fresh venv holding only the wheel (and a path to our dependencies)."""
    base = tmp_path_factory.mktemp("wheel")
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--no-index", "-w", base / "dist", REPO, cwd=base)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (base / "dist").glob("legion_llm-*.whl")
    target = base / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=base)
    ours = sysconfig.get_paths()["purelib"]  # the test environment: the dependencies, not us
    (Path(site.stdout.strip()) / "test-dependencies.pth").write_text(ours + "\n")
    done = run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps",
               "--no-index", wheel, cwd=base)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return target / "bin"


def environment(tmp: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    return {**keep, "HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / "config"),
            "XDG_DATA_HOME": str(tmp / "data"), "XDG_CACHE_HOME": str(tmp / "cache"),
            "PYTHONPATH": "", "COLUMNS": "100"}  # fmt: skip


def test_the_installed_package_is_the_wheel_not_the_checkout(
    installed: Path, tmp_path: Path
) -> None:
    where = run(installed / "python", "-c", "import legion_llm; print(legion_llm.__file__)",
                cwd=tmp_path, env=environment(tmp_path))  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.parent)
    data = Path(where.stdout.strip()).parent / "_data"
    assert (data / "evals/compaction.toml").is_file() and (data / "fixtures/phases").is_dir()


def test_version_on_both_paths(installed: Path, tmp_path: Path) -> None:
    env = environment(tmp_path)
    fast = run(installed / "legion-llm", "--version", cwd=tmp_path, env=env)
    assert fast.returncode == 0 and fast.stdout == f"legion-llm {__version__}\n"
    typer_path = run(installed / "python", "-c",
                     "from legion_llm.entry import run; raise SystemExit(run(['--version'], fast=False))",
                     cwd=tmp_path, env=env)  # fmt: skip
    assert typer_path.returncode == 0 and typer_path.stdout == fast.stdout


def test_eval_compaction_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    result = run(installed / "legion-llm", "eval", "compaction", "--engine", "offline", "--json",
                 "--out", tmp_path / "log.json", "--root", tmp_path,
                 cwd=tmp_path, env=environment(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert '"ok": true' in result.stdout and (tmp_path / "log.json").is_file()
    assert "no eval definition" not in result.stderr


def test_demo_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    result = run(installed / "legion-llm", "demo", "--root", tmp_path / "demo", "--json",
                 cwd=tmp_path, env=environment(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "demo/.planning/phases/03-fx-rates/03-COMPACTED.md").is_file()
    assert not list(REPO.glob("eval-logs")), "the run wrote into the checkout"


@pytest.mark.parametrize("suite", ["learnings", "distill"])
def test_the_other_evals_find_their_definitions_and_fixtures(
    suite: str, installed: Path, tmp_path: Path
) -> None:
    result = run(installed / "legion-llm", "eval", suite, "--engine", "offline", "--json",
                 "--root", tmp_path, cwd=tmp_path, env=environment(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert '"ok": true' in result.stdout
