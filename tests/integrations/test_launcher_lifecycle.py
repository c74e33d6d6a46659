"""The plugin launcher's life cycle (issue 34, point 7), with a fake Python whose `-m venv` and
`-m pip install` take no network and log every build: an update never deletes a venv that a
running server uses (it goes at a later start, once unused and its plugin copy is gone), two
installed versions build once each instead of in turn, a stale install lock (dead pid, zombie,
reused pid, older than the install timeout) is taken over, and the install stops its step and
cleans up on a signal. The desk's view of the lock (mcp/firststart.py) is the launcher's."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from legion_llm.mcp.firststart import install_state
from tests.conftest import REPO

pytestmark = pytest.mark.subprocess
LAUNCHER = REPO / "integrations" / "claude-code" / "bin" / "legion-llm"

FAKE_PYTHON = """#!/bin/sh
# the version check; -m venv DIR; (the venv's copy) -m pip install SOURCE
case "$1" in
-c) exit 0 ;;
-m)
    if [ "$2" = venv ]; then
        mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && echo "$3" >>"$FAKE_BUILDS"
        exit
    fi
    venv=$(dirname "$(dirname "$0")")
    version=$(sed -n 's/^__version__ = "\\(.*\\)"/\\1/p' "$6/legion_llm/__init__.py")
    printf '#!/bin/sh\\nprintf "ran %s %%s\\\\n" "$*"\\n[ "$1" = serve ] && sleep 60\\n:\\n' \\
        "$version" >"$venv/bin/legion-llm"
    chmod +x "$venv/bin/legion-llm"
    [ -n "${FAKE_PIP_S:-}" ] && exec sleep "$FAKE_PIP_S"
    exit 0
    ;;
esac
exit 1
"""


def source(tmp_path: Path, version: str) -> Path:
    """A plugin copy's source/ of `version` (what the launcher reads and pip installs)."""
    folder = tmp_path / f"plugin-{version}" / "source"
    (folder / "legion_llm").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'legion-llm'\n", "utf-8")
    (folder / "legion_llm" / "__init__.py").write_text(f'__version__ = "{version}"\n', "utf-8")
    return folder


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON, "utf-8")
    python.chmod(0o755)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "XDG_DATA"))}
    return {**keep, "HOME": str(tmp_path / "home"), "LEGION_LLM_PYTHON": str(python),
            "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
            "FAKE_BUILDS": str(tmp_path / "builds.log"),
            "COLUMNS": "40"}  # a narrow terminal must not hide a running server's long path  # fmt: skip


def launch(env: dict[str, str], src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True, timeout=60,
                          env={**env, "LEGION_LLM_SOURCE": str(src)})  # fmt: skip


def builds(tmp_path: Path) -> list[str]:
    log = tmp_path / "builds.log"
    return log.read_text("utf-8").split() if log.exists() else []


def eventually(check: object, within: float = 15) -> bool:
    deadline = time.monotonic() + within
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[bytes]]]:
    running: list[subprocess.Popen[bytes]] = []
    yield running
    for server in running:
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


def test_an_update_never_deletes_the_venv_a_running_server_uses(
    tmp_path: Path, env: dict[str, str], servers: list[subprocess.Popen[bytes]]
) -> None:
    data = tmp_path / "data"
    old, new = source(tmp_path, "1.0.0"), source(tmp_path, "1.1.0")
    assert launch(env, old, "briefing").stdout == "ran 1.0.0 briefing\n"
    server = subprocess.Popen([str(LAUNCHER), "serve"], env={**env, "LEGION_LLM_SOURCE": str(old)},
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    servers.append(server)
    assert server.stdout is not None and server.stdout.readline() == b"ran 1.0.0 serve\n"
    (old / "pyproject.toml").unlink()  # the update replaced the plugin copy
    (old / "legion_llm" / "__init__.py").unlink()
    assert launch(env, new, "briefing").stdout == "ran 1.1.0 briefing\n"
    assert (data / "venv-1.0.0" / "bin" / "legion-llm").is_file()  # the server still has it
    assert server.poll() is None
    server.kill()
    server.wait()
    assert launch(env, new, "briefing").stdout == "ran 1.1.0 briefing\n"  # a later start
    assert eventually(lambda: not (data / "venv-1.0.0").exists())  # unused now: removed
    assert (data / "venv-1.1.0" / ".installed").is_file()
    assert builds(tmp_path) == [str(data / "venv-1.0.0"), str(data / "venv-1.1.0")]


def test_two_installed_versions_build_once_each(tmp_path: Path, env: dict[str, str]) -> None:
    one, two = source(tmp_path, "2.0.0"), source(tmp_path, "2.1.0")
    for _ in range(3):
        assert launch(env, one, "stop").stdout == "ran 2.0.0 stop\n"
        assert launch(env, two, "stop").stdout == "ran 2.1.0 stop\n"
        time.sleep(0.3)  # a start's sweep runs in the background
    assert len(builds(tmp_path)) == 2
    assert {p.name for p in (tmp_path / "data").glob("venv-*")} == {"venv-2.0.0", "venv-2.1.0"}


def _dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


@pytest.fixture
def zombie() -> Iterator[int]:
    child = subprocess.Popen(["true"])  # ended and not waited for: a zombie, which kill -0 finds
    assert eventually(lambda: Path(f"/proc/{child.pid}/stat").read_text().split()[2] == "Z")
    yield child.pid
    child.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("kind", ["dead pid", "zombie", "reused pid", "older than the timeout"])
def test_a_stale_install_lock_is_taken_over(
    tmp_path: Path, env: dict[str, str], kind: str, request: pytest.FixtureRequest
) -> None:
    lock = tmp_path / "data" / "install.lock"
    lock.mkdir(parents=True)
    pid = {"dead pid": _dead_pid, "zombie": lambda: request.getfixturevalue("zombie")}.get(
        kind, os.getpid
    )()
    (lock / "pid").write_text(f"{pid}\n", "utf-8")
    if kind == "reused pid":  # the pid is alive, but not the process that took the lock
        (lock / "started").write_text("1\n", "utf-8")
    if kind == "older than the timeout":
        old = time.time() - 3 * 3600
        os.utime(lock, (old, old))
    desk = install_state(tmp_path / "data" / "venv-3.0.0", lock)
    assert desk() == "failed"  # the first-start desk sees it as the launcher does
    done = launch({**env, "LEGION_LLM_INSTALL_TIMEOUT": "600"}, source(tmp_path, "3.0.0"), "x")
    assert (done.returncode, done.stdout) == (0, "ran 3.0.0 x\n"), done.stderr
    assert "taking over a stale install lock" in done.stderr
    assert not lock.exists() and desk() == "ready"


def test_a_live_install_lock_is_respected(tmp_path: Path) -> None:
    lock = tmp_path / "data" / "install.lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{os.getpid()}\n", "utf-8")
    assert install_state(tmp_path / "data" / "venv-3.0.0", lock)() == "building"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_the_install_stops_its_step_and_cleans_up_on_a_signal(
    tmp_path: Path, env: dict[str, str], signum: signal.Signals
) -> None:
    """(SIGINT cannot reach it: it runs in a session of its own, started in the background,
    which a POSIX shell starts with SIGINT ignored.)"""
    data = tmp_path / "data"
    src = source(tmp_path, "4.0.0")
    waiting = subprocess.Popen([str(LAUNCHER), "x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**env, "LEGION_LLM_SOURCE": str(src), "FAKE_PIP_S": "60"})  # fmt: skip
    try:
        assert eventually(lambda: (data / "install.lock" / "started").is_file())
        installer = int((data / "install.lock" / "pid").read_text("utf-8"))

        def pip_runs() -> list[int]:
            found = subprocess.run(["pgrep", "-s", str(installer), "-x", "sleep"],
                                   capture_output=True, text=True).stdout.split()  # fmt: skip
            return [int(pid) for pid in found]

        assert eventually(pip_runs)
        (pip,) = pip_runs()
        os.kill(installer, signum)
        assert eventually(lambda: not (data / "install.lock").exists())
        assert eventually(lambda: not Path(f"/proc/{pip}").exists() or
                          Path(f"/proc/{pip}/stat").read_text().split()[2] == "Z")  # fmt: skip
        assert not (data / "venv-4.0.0").exists() and not (data / "tmp").exists()
        assert "stopped by a signal" in (data / "install.log").read_text("utf-8")
        _, err = waiting.communicate(timeout=30)
        assert waiting.returncode == 1 and b"the install failed" in err
    finally:
        waiting.kill()
        waiting.communicate()


def test_a_venv_named_as_a_word_is_in_use(
    tmp_path: Path, env: dict[str, str], servers: list[subprocess.Popen[bytes]]
) -> None:
    """An install building a venv, or a desk waiting for one, names it without a path under it
    (`python -m venv DIR`): that venv is in use too, and is not swept."""
    data = tmp_path / "data"
    old, new = source(tmp_path, "1.0.0"), source(tmp_path, "1.1.0")
    assert launch(env, old, "briefing").stdout == "ran 1.0.0 briefing\n"
    (old / "pyproject.toml").unlink()  # the update replaced the plugin copy
    (old / "legion_llm" / "__init__.py").unlink()
    waiting = subprocess.Popen(["sh", "-c", "sleep 30; :", str(data / "venv-1.0.0")])
    servers.append(waiting)  # type: ignore[arg-type]
    assert launch(env, new, "briefing").stdout == "ran 1.1.0 briefing\n"
    time.sleep(1)  # the sweep runs in the background
    assert (data / "venv-1.0.0" / "bin" / "legion-llm").is_file()
    waiting.kill()
    waiting.wait()
    assert launch(env, new, "briefing").stdout == "ran 1.1.0 briefing\n"
    assert eventually(lambda: not (data / "venv-1.0.0").exists())
