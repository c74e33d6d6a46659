"""`legion-llm learnings add|load|extract` and `legion-llm distill` through the real entry point."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.learnings.read import read_learnings

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "missions" / "project"
DISTILL = REPO / "fixtures" / "distill"
DAY = ["--today", "2026-04-05"]
ADD = ["learnings", "add", "--title", "Vitest needs --root", "--body",
       "Run `pnpm vitest run --root packages/api`.", "--category", "gotcha", "--tags",
       "vitest, monorepo", "--confidence", "medium"]  # fmt: skip


@pytest.fixture
def mc(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    return root


def test_add_writes_one_file_and_prints_the_envelope(cli: Any, tmp_path: Path) -> None:
    done = cli(*ADD, "--json", "--root", tmp_path, *DAY)
    assert done.exit_code == 0, done.stderr
    envelope = done.json
    assert envelope["ok"] and envelope["command"] == "learnings add" and envelope["warnings"] == []
    assert envelope["data"]["path"] == ".mission-control/memory/vitest-needs-root.md"
    learning = envelope["data"]["learning"]
    assert learning["source"] == "manual" and learning["extracted_at"] == "2026-04-05T00:00:00Z"
    assert learning["tags"] == ["vitest", "monorepo"] and learning["confidence"] == "medium"
    (item,) = read_learnings(tmp_path / ".mission-control" / "memory").learnings
    assert item.title == "Vitest needs --root" and item.category == "gotcha"


def test_add_without_today_stamps_the_current_utc_time(cli: Any, tmp_path: Path) -> None:
    done = cli(*ADD, "--source", "mission-x", "--json", "--root", tmp_path)
    stamp = done.json["data"]["learning"]["extracted_at"]
    assert stamp.endswith("Z") and len(stamp) == len("2026-04-05T10:11:12Z")
    assert done.json["data"]["learning"]["source"] == "mission-x"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--tags", "vitest", "needs 2-5 tags"), ("--tags", "Vitest, Monorepo", "not lowercase"),
     ("--category", "trap", "category must be one of"), ("--confidence", "certain", "confidence")],
)  # fmt: skip
def test_add_validates(cli: Any, tmp_path: Path, option: str, value: str, message: str) -> None:
    args = list(ADD)
    args[args.index(option) + 1] = value
    done = cli(*args, "--root", tmp_path)
    assert done.exit_code == 1 and message in done.stderr and done.stdout == ""
    assert not (tmp_path / ".mission-control").exists()


@pytest.mark.parametrize("title", ["../../x", "/tmp/evil", "..\\..\\x"])
def test_add_never_writes_outside_the_memory_folder(cli: Any, tmp_path: Path, title: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    args = list(ADD)
    args[args.index("--title") + 1] = title
    done = cli(*args, "--json", "--root", root)
    assert done.exit_code == 0
    written = [p.relative_to(tmp_path) for p in tmp_path.rglob("*.md")]
    assert len(written) == 1 and written[0].parent == Path("project/.mission-control/memory")


def test_load_prints_the_section_and_the_json_shape(cli: Any, mc: Path) -> None:
    done = cli("learnings", "load", "--goal", "Speed up the vitest run in the monorepo", "--json",
               "--root", mc)  # fmt: skip
    assert done.exit_code == 0
    data = done.json["data"]
    assert set(data) == {"learnings", "section", "tokens"}
    first = data["learnings"][0]
    assert set(first) == {"file", "title", "category", "tags", "confidence", "extracted_at"}
    categories = [item["category"] for item in data["learnings"]]
    assert categories[:5] == ["gotcha"] * 5  # every gotcha, first
    assert "vitest-root-flag.md" in [item["file"] for item in data["learnings"]]
    assert data["section"].startswith("## Project Learnings") and data["tokens"] <= 2000
    assert done.json["warnings"] == [
        "Warning: .mission-control/memory/broken-missing-fields.md is missing extractedAt, "
        "confidence, category; skipped."
    ]
    assert "broken-missing-fields.md" in done.stderr  # warned on stderr too
    human = cli("learnings", "load", "--goal", "vitest", "--max-tokens", "300", "--root", mc)
    assert human.stdout.startswith("## Project Learnings") and len(human.stdout) <= 300 * 4 + 1


def test_load_respects_max_tokens_and_limit(cli: Any, mc: Path) -> None:
    small = cli("learnings", "load", "--goal", "pnpm build", "--max-tokens", "150", "--json",
                "--root", mc).json["data"]  # fmt: skip
    assert small["tokens"] <= 150
    none = cli("learnings", "load", "--goal", "pnpm", "--limit", "0", "--json", "--root", mc)
    assert all(item["category"] == "gotcha" for item in none.json["data"]["learnings"])


def test_extract_dry_run_then_write_then_nothing_new(cli: Any, mc: Path) -> None:
    mission = mc / ".planning" / "phases" / "06-exports"
    dry = cli("learnings", "extract", mission, "--dry-run", "--engine", "offline", "--json",
              "--root", mc, *DAY)  # fmt: skip
    assert dry.exit_code == 0, dry.stderr
    data = dry.json["data"]
    assert data["dry_run"] and data["mission"] == "phase-06-exports" and data["kind"] == "phase"
    assert [r["file"] for r in data["reinforced"]] == ["date-fns-tz-exports.md"]
    assert len(data["written"]) == 1 and data["written"][0]["file"] is None
    assert data["usage"]["engine"] == "offline" and data["usage"]["offline_calls"] == 1
    assert data["usage"]["estimated_cost_usd"] == 0
    before = sorted(p.name for p in (mc / ".mission-control" / "memory").iterdir())
    assert len(before) == 9
    real = cli("learnings", "extract", mission, "--engine", "offline", "--json", "--root", mc, *DAY)
    assert len(real.json["data"]["written"]) == 1
    assert len(list((mc / ".mission-control" / "memory").iterdir())) == 10
    again = cli("learnings", "extract", mission, "--engine", "offline", "--root", mc, *DAY)
    assert again.exit_code == 0 and "skipped (already-recorded)" in again.stdout
    assert "wrote" not in again.stdout and "reinforced" not in again.stdout


def test_extract_of_a_folder_outside_the_root_is_an_input_error(
    cli: Any, mc: Path, tmp_path: Path
) -> None:
    done = cli("learnings", "extract", PROJECT / ".planning/phases/05-rate-limits", "--engine",
               "offline", "--json", "--root", mc)  # fmt: skip
    assert done.exit_code == 1 and "outside the project root" in done.stderr
    assert done.json["ok"] is False


@pytest.mark.parametrize("where", ["outside", "not-a-mission"])
def test_a_wrong_extract_folder_is_the_only_line(
    cli: Any, mc: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no claude CLI: auto would say it falls back
    folder = PROJECT / ".planning" if where == "outside" else mc / ".mission-control"
    done = cli("learnings", "extract", folder, "--root", mc)
    lines = done.stderr.strip().splitlines()
    assert done.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert ("outside the project root" if where == "outside" else "neither a mission") in lines[0]


@pytest.mark.subprocess
def test_distill_json_dry_run_and_idempotent_writes(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "h"
    shutil.copytree(DISTILL / "13-same-agent-two-topics", root)
    catalog = ["--catalog", DISTILL / "CATALOG.md"]
    dry = cli(
        "distill", "--dry-run", "--engine", "offline", "--json", "--root", root, *catalog, *DAY
    )
    assert dry.exit_code == 0, dry.stderr
    data = dry.json["data"]
    assert dry.json["command"] == "distill" and data["dry_run"] is True
    assert [w["source"] for w in data["written"]] == ["O-001", "O-004"] and data["skipped"] == []
    assert data["usage"]["offline_calls"] == 1 and data["usage"]["calls"] == 0
    assert not (root / ".planning" / "memory" / "PATTERNS.md").exists()
    real = cli("distill", "--engine", "offline", "--json", "--root", root, *catalog, *DAY)
    assert [w["id"] for w in real.json["data"]["written"]] == ["P-001", "P-002"]
    again = cli("distill", "--engine", "offline", "--root", root, *catalog, *DAY)
    assert again.exit_code == 0 and "wrote 0 pattern(s)" in again.stdout
    assert "0 candidate outcome(s)" in again.stdout


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "command",
    [["learnings", "load", "--goal", "vitest"], ADD, ["distill", "--help"]],
)
def test_learnings_commands_import_no_llm_library(mc: Path, command: list[str]) -> None:
    code = (
        "import sys; from legion_llm.entry import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n"
        "    heavy = [m for m in ('anthropic', 'tiktoken', 'tenacity', 'httpx2') if m in sys.modules]\n"
        "    print('HEAVY', heavy, file=sys.stderr); raise\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *command, "--root", str(mc)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stderr
