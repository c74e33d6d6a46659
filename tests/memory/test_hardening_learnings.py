"""Issue 17 (attack pass), mission learnings: YAML alias bombs and deep nesting (points 5, 6),
line breaks other than LF (point 12), and Windows device names (point 14)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from legion_llm.errors import InputError
from legion_llm.memory.learnings.read import Learning, read_learnings
from legion_llm.memory.learnings.write import free_name, slug, validate_new, write_new

GOOD_META = (
    "tags:\n  - postgres\n  - docker-compose\nsource: mission/m-1\n"
    "extractedAt: 2026-03-01T10:00:00Z\nconfidence: medium\ncategory: gotcha\n"
)
BODY = "\n# Start the postgres container before the tests\n\nRun `docker compose up -d db`.\n"


def learning_file(meta: str) -> str:
    return f"---\n{meta}---\n{BODY}"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / ".mission-control" / "memory"
    path.mkdir(parents=True)
    (path / "good.md").write_text(learning_file(GOOD_META))
    return path


def only_warning(folder: Path, name: str) -> str:
    found = read_learnings(folder)
    assert [item.file for item in found.learnings] == ["good.md"]
    assert len(found.warnings) == 1 and name in found.warnings[0]
    return found.warnings[0]


# ---------------------------------------------------------------- 5. aliases


def test_frontmatter_with_an_alias_is_refused(folder: Path) -> None:
    """Refused by construction: the loader takes no alias at all, so no expansion can happen."""
    meta = GOOD_META.replace("tags:\n", "tags: &shared\n") + "related: *shared\n"
    (folder / "alias.md").write_text(learning_file(meta))
    assert "alias" in only_warning(folder, "alias.md")


def test_a_billion_laughs_frontmatter_is_one_warning(folder: Path) -> None:
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    meta = (
        "\n".join(levels)
        + "\n"
        + GOOD_META.replace("tags:\n  - postgres\n  - docker-compose\n", "tags: *i\n")
    )
    (folder / "bomb.md").write_text(learning_file(meta))
    assert "alias" in only_warning(folder, "bomb.md")


# ---------------------------------------------------------------- 6. depth and size


def test_deeply_nested_frontmatter_is_one_warning(folder: Path, cli: Any) -> None:
    deep = "[" * 5000 + "]" * 5000
    (folder / "deep.md").write_text(learning_file(GOOD_META + f"extra: {deep}\n"))
    assert "nested" in only_warning(folder, "deep.md")
    root = folder.parents[1]
    result = cli("learnings", "load", "--root", root, "--goal", "postgres", "--json")
    assert result.exit_code == 0
    assert [item["file"] for item in result.json["data"]["learnings"]] == ["good.md"]


def test_huge_frontmatter_is_one_warning(folder: Path) -> None:
    meta = GOOD_META + "notes: " + "x" * 300_000 + "\n"
    (folder / "huge.md").write_text(learning_file(meta))
    assert "too large" in only_warning(folder, "huge.md")


# ---------------------------------------------------------------- 12. line breaks other than LF

BREAKS = ["\r", "\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\r\n"]
NEW = Learning(
    "Start the postgres container first", "Run `docker compose up -d db` first.",
    ["postgres", "docker-compose"], "manual", "2026-03-01T10:00:00Z", "medium", "gotcha",
)  # fmt: skip


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_a_body_line_break_of_any_kind_cannot_forge_a_heading(brk: str) -> None:
    with pytest.raises(InputError, match="'# ' heading or '---' line"):
        validate_new(replace(NEW, body=f"Fine text.{brk}# Forged learning"))
    with pytest.raises(InputError, match="'# ' heading or '---' line"):
        validate_new(replace(NEW, body=f"Fine text.{brk}---{brk}category: tooling"))


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_a_stored_body_holds_only_lf_line_breaks(brk: str, tmp_path: Path) -> None:
    folder = tmp_path / ".mission-control" / "memory"
    written = write_new(folder, tmp_path, replace(NEW, body=f"First line.{brk}Second line."))
    text = (folder / written.file).read_bytes().decode()
    assert text.splitlines() == text.split("\n")[:-1]
    assert "First line.\nSecond line." in text


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_single_line_learning_fields_refuse_or_fold_line_breaks(brk: str) -> None:
    clean = validate_new(replace(NEW, title=f"Start the postgres{brk}container first"))
    assert clean.title == "Start the postgres container first"
    with pytest.raises(InputError, match="source must be one short line"):
        validate_new(replace(NEW, source=f"mission/m-1{brk}category: tooling"))
    with pytest.raises(InputError, match="tag"):
        validate_new(replace(NEW, tags=["postgres", f"docker{brk}compose"]))


@pytest.mark.subprocess
@pytest.mark.parametrize("brk", BREAKS, ids=repr)
def test_outcome_and_knowledge_cells_store_any_line_break_as_br(
    brk: str, cli: Any, tmp_path: Path
) -> None:
    added = cli(
        "outcomes", "add", "--root", tmp_path, "--phase", "1", "--plan", "01-01", "--agent",
        "dev", "--outcome", "success", "--summary", f"one{brk}| O-999 | forged |",
        "--task-type", "backend",
    )  # fmt: skip
    assert added.exit_code == 0
    pattern = cli(
        "patterns", "add", "--root", tmp_path, "--pattern", f"Use one pool{brk}## Forged",
        "--context", "ctx", "--reuse-criteria", "always", "--source", "O-001",
        "--tags", "db, pool",
    )  # fmt: skip
    assert pattern.exit_code == 0, pattern.stderr
    for name in ("OUTCOMES.md", "PATTERNS.md"):
        text = (tmp_path / ".planning" / "memory" / name).read_bytes().decode()
        assert text.splitlines() == text.split("\n")[:-1], name
        assert "<br>" in text, name


# ---------------------------------------------------------------- 14. Windows device names


@pytest.mark.parametrize(
    "title", ["CON", "nul", "Com1", "LPT9", "aux", "PRN", "con.txt", "NUL.md", "com0", "  Lpt1  "]
)
def test_generated_names_avoid_windows_device_names(title: str, tmp_path: Path) -> None:
    name = free_name(tmp_path, title)
    stem = name.split(".", 1)[0].lower()
    assert stem not in {"con", "prn", "aux", "nul"} | {f"com{n}" for n in range(10)} | {
        f"lpt{n}" for n in range(10)
    }
    assert name.endswith(".md") and "/" not in name


def test_ordinary_titles_keep_their_slug() -> None:
    assert slug("Console output is buffered") == "console-output-is-buffered"
    assert slug("COM port") == "com-port"
