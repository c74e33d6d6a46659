"""`legion-llm demo`: every step of the whole flow really happens on a copy of the demo project."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.knowledge.read import ERRORS, PATTERNS, read_knowledge
from legion_llm.memory.learnings.read import read_learnings
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.run import check_compacted
from tests.conftest import FIXTURES

BUNDLED = FIXTURES / "demo-project"
MISSION = "mission-2026-06-12-audit-export"


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run_demo(tmp_path: Path) -> tuple[Path, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    env |= {"TMPDIR": str(tmp_path), "COLUMNS": "120", "LEGION_LLM_ENGINE": "offline"}
    script = Path(sys.executable).with_name("legion-llm")
    done = subprocess.run([script, "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    [copy] = list(tmp_path.glob("legion-llm-demo-*"))
    return copy, done.stdout


@pytest.mark.subprocess
def test_demo_runs_every_step_offline_on_a_copy(tmp_path: Path) -> None:
    before = digest(BUNDLED)
    copy, out = run_demo(tmp_path)
    memory = copy / ".planning/memory"
    assert digest(BUNDLED) == before  # the bundled project is never changed

    # 1-3 store, recall, briefing
    stored = {r.id for r in read_outcomes(memory / "OUTCOMES.md").records}
    archived = {r.id for r in read_outcomes(memory / "ARCHIVE.md").records}
    assert {"O-014", "O-015"} <= stored
    assert "stored O-014" in out and "stored O-015" in out and "Session briefing" in out
    assert "15 records" in out

    # 4 compaction written and verified (checked again here, independently)
    compacted = copy / ".planning/phases/03-fx-rates/03-COMPACTED.md"
    assert compacted.is_file() and f"wrote {compacted.relative_to(copy)}" in out
    _, report = check_compacted(find_phase(copy, "3"))
    assert report.ok and "verify-compaction: OK" in out
    assert all(rid in compacted.read_text() for rid in ("FX-01", "FX-02", "FX-03"))

    # 5 patterns distilled (from the outcomes and from the plan summaries they name), each
    # citing its sources, each announced
    patterns = read_knowledge(PATTERNS, memory / "PATTERNS.md").records
    assert len(patterns) >= 3 and [p.id for p in patterns] == [
        f"P-{n:03d}" for n in range(1, len(patterns) + 1)
    ]
    assert all("O-0" in p.values["source"] for p in patterns)
    assert any("03-01" in p.values["source"] for p in patterns)  # a plan summary was read
    assert all(f"wrote {p.id}" in out for p in patterns)

    # 6 the new error matched the known fix, and nothing was written for it
    assert "fix: E-001 applies (confidence " in out  # the sure answer, with its confidence
    assert len(read_knowledge(ERRORS, memory / "ERRORS.md").records) == 3

    # 7 learnings extracted from the mission and loaded for the next goal
    found = read_learnings(copy / ".mission-control/memory").learnings
    extracted = [item for item in found if MISSION in item.source]
    assert len(extracted) >= 2 and len(found) == len(extracted) + 2
    assert all(f".mission-control/memory/{item.file}" in out for item in extracted)
    assert "into its Project Learnings section" in out and "[gotcha]" in out

    # 8 prune moved old low-importance outcomes, and the end lists where the files are
    assert archived and not archived & stored and "Pruned" in out
    assert f"{memory}/OUTCOMES.md" in out and str(compacted) in out
    assert "LLM steps: 3 offline calls" in out


@pytest.mark.subprocess
def test_the_demo_is_offline_by_default_even_with_a_login_or_a_key(tmp_path: Path) -> None:
    """`python3 dev.py demo` must never spend a key or a subscription by surprise: with a
    logged-in `claude` on PATH, or an API key set, it answers every LLM step offline and asks
    neither (the CLI is not even probed; Claude is never tried, so no fallback notice)."""
    from tests.llm.claude_stub import StubClaude

    stub = StubClaude(tmp_path / "bin")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    key = {"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    script = Path(sys.executable).with_name("legion-llm")
    for extra in ({"PATH": stub.on_path()}, key):
        env = base | {"TMPDIR": str(tmp_path)} | extra
        done = subprocess.run(
            [script, "demo", "--json"], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 0, done.stderr
        data = __import__("json").loads(done.stdout)["data"]
        assert data["engine"] == "offline" and data["usage"]["calls"] == 0
        assert "unavailable" not in done.stderr and "claude-code" not in done.stderr
    assert stub.calls() == []  # the logged-in CLI was never run, not even `auth status`


def test_a_demo_root_that_is_a_file_is_one_line_and_the_file_is_kept(
    cli: Any, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text('{"memory": {}}', encoding="utf-8")
    result = cli("demo", "--root", settings)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: {settings} is a file; the demo copies its project into a new or empty folder"
    )
    assert settings.read_text(encoding="utf-8") == '{"memory": {}}'


def test_a_failed_demo_removes_the_folders_it_made(cli: Any, tmp_path: Path) -> None:
    """No key for `--engine anthropic`: the run fails, and the copy is gone, so the same command
    can be run again once the key is set (no "is not empty")."""
    root = tmp_path / "new" / "demo"
    for _ in range(2):
        failed = cli("demo", "--engine", "anthropic", "--root", root)
        assert failed.exit_code != 0 and "ANTHROPIC_API_KEY" in failed.stderr
        assert failed.stderr.count("\n") == 1, failed.stderr
        assert list(tmp_path.iterdir()) == []  # `new/` was made by the run: removed too


def test_a_failed_demo_empties_the_folder_it_was_given_and_keeps_it(
    cli: Any, tmp_path: Path
) -> None:
    root = tmp_path / "mine"
    root.mkdir()
    failed = cli("demo", "--engine", "anthropic", "--root", root)
    assert failed.exit_code != 0 and "is not empty" not in failed.stderr
    assert root.is_dir() and list(root.iterdir()) == []


def test_the_command_to_use_is_the_running_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from legion_llm.cli.demo import command_here

    script = tmp_path / "venv" / "bin" / "legion-llm"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["venv/bin/legion-llm", "demo"])
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert command_here() == str(script)  # absolute: it runs from the demo's folder too
    monkeypatch.setenv("PATH", str(script.parent))
    assert command_here() == "legion-llm"  # on PATH, and the same program
    monkeypatch.setattr(sys, "argv", [str(Path(sys.executable).parent / "x" / "__main__.py")])
    assert command_here() == f"{Path(sys.executable).absolute()} -m legion_llm"


@pytest.mark.subprocess
@pytest.mark.parametrize("how", ["script", "module"])
def test_the_commands_the_demo_prints_run_from_the_demo_folder(tmp_path: Path, how: str) -> None:
    """The README's tour: `cd` into the copy, then the command the demo printed, as printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    env |= {"COLUMNS": "200"}
    start = (
        [str(Path(sys.executable).with_name("legion-llm"))]
        if how == "script"
        else [sys.executable, "-m", "legion_llm"]
    )
    root = tmp_path / "copy"
    done = subprocess.run([*start, "demo", "--root", str(root)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    tail = done.stdout[done.stdout.index("Try the commands yourself") :].splitlines()[1:]
    assert tail[0].strip() == f"cd {root}"
    for line in tail[1:]:
        ran = subprocess.run(["/bin/sh", "-c", f"{tail[0].strip()} && {line.strip()}"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)  # fmt: skip
        assert ran.returncode == 0, (line, ran.stderr)
        assert "O-0" in ran.stdout


@pytest.mark.subprocess
def test_the_readme_tour_runs_as_written_with_the_command_the_demo_printed(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    tour = readme[readme.index("## A five-minute tour") :]
    block = tour[tour.index("```\n") + 4 :]
    lines = block[: block.index("```")].splitlines()
    assert lines[0].startswith("cd ") and all(line.startswith("legion-llm ") for line in lines[1:])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    env |= {"COLUMNS": "200", "PATH": "/usr/bin:/bin"}  # no legion-llm on PATH
    script = str(Path(sys.executable).with_name("legion-llm"))
    done = subprocess.run([script, "demo"], capture_output=True, text=True,
                          env=env | {"TMPDIR": str(tmp_path)}, cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = done.stdout[done.stdout.index("Try the commands yourself") :].splitlines()
    cd, command = printed[1].strip(), printed[2].strip().split(" outcomes ")[0]
    for line in lines[1:]:
        shell = f"{cd} && {command}{line.removeprefix('legion-llm')}"
        ran = subprocess.run(["/bin/sh", "-c", shell], capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=120)  # fmt: skip
        assert ran.returncode == 0, (line, ran.stdout[-500:], ran.stderr)
