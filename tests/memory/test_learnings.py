"""Mission learnings: every file variant read, safe writes, reinforcement, loading within a budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from legion_llm.errors import InputError, LegionError
from legion_llm.memory.learnings.load import (
    SECTION_HEADER,
    estimate_tokens,
    load_for_goal,
    matches_goal,
    render_entry,
)
from legion_llm.memory.learnings.read import (
    Learning,
    parse_learning_file,
    read_learnings,
    tag_problems,
)
from legion_llm.memory.learnings.write import (
    apply,
    confirmed_by,
    free_name,
    new_facts,
    reinforce,
    render_file,
    rewrite,
    slug,
    write_new,
)

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "missions" / "project"
NOW = "2026-04-05T12:00:00Z"

BLOCK = """---
tags:
  - vitest
  - monorepo
source: mission-2026-01-20-billing
extractedAt: 2026-01-20T16:05:00Z
confidence: medium
category: gotcha
---

# Vitest needs --root from the repository root

Run `pnpm vitest run --root packages/api`.
"""
FLOW = """---
tags: [Prisma, schema]
source: mission/mission-2026-02-01-x
extractedAt: 2026-02-01
confidence: high
category: tooling
---
Regenerate the client after schema edits

Run `pnpm prisma generate`.
"""
CATEGORY_FILE = """---
tags:
  - docker
  - postgres
source: mission-a
extractedAt: 2026-01-01T00:00:00Z
confidence: medium
category: gotcha
---

# Compose Postgres is on 5433

Use `localhost:5433`.

# Playwright needs browsers

Run `npx playwright install chromium`.
"""


def learning(**changes: object) -> Learning:
    values: dict[str, object] = {
        "title": "Vitest needs the --root flag",
        "body": "Run `pnpm vitest run --root packages/api`.",
        "tags": ["vitest", "monorepo"],
        "source": "manual",
        "extracted_at": NOW,
        "confidence": "medium",
        "category": "gotcha",
    }
    values.update(changes)
    return Learning(**values)  # type: ignore[arg-type]


def write(folder: Path, name: str, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- reading


def test_block_and_flow_tags_mission_source_and_date_only(tmp_path: Path) -> None:
    write(tmp_path, "a.md", BLOCK)
    write(tmp_path, "b.md", FLOW)
    found = read_learnings(tmp_path)
    assert found.warnings == []
    a, b = found.learnings
    assert (a.title, a.tags, a.category, a.confidence) == (
        "Vitest needs --root from the repository root", ["vitest", "monorepo"], "gotcha", "medium",
    )  # fmt: skip
    assert a.extracted_at == "2026-01-20T16:05:00Z"
    assert b.tags == ["Prisma", "schema"] and b.source == "mission/mission-2026-02-01-x"
    assert b.mission_id == "mission-2026-02-01-x" and b.extracted_at == "2026-02-01"
    assert b.title == "Regenerate the client after schema edits"  # no `#`: the first line
    assert b.body == "Run `pnpm prisma generate`."


def test_per_category_file_holds_several_learnings_sharing_its_frontmatter(tmp_path: Path) -> None:
    write(tmp_path, "gotchas.md", CATEGORY_FILE)
    first, second = read_learnings(tmp_path).learnings
    assert [first.title, second.title] == [
        "Compose Postgres is on 5433",
        "Playwright needs browsers",
    ]
    assert first.shares_file and second.shares_file and (first.section, second.section) == (0, 1)
    assert second.tags == ["docker", "postgres"] and second.body.startswith("Run `npx")


def test_repeated_frontmatter_blocks_and_a_horizontal_rule_in_a_body(tmp_path: Path) -> None:
    body_with_rule = BLOCK.replace("Run `pnpm", "Some text.\n\n---\n\nRun `pnpm")
    write(tmp_path, "patterns.md", body_with_rule + "\n" + FLOW)
    found = read_learnings(tmp_path).learnings
    assert [item.title for item in found] == [
        "Vitest needs --root from the repository root",
        "Regenerate the client after schema edits",
    ]
    assert "---" in found[0].body and found[1].doc == 1


def test_broken_files_warn_once_each_and_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", BLOCK)
    write(
        tmp_path, "missing.md", "---\ntags: [redis]\nsource: manual\n---\n\n# Redis prefix\n\nx\n"
    )
    write(tmp_path, "bad-values.md", BLOCK.replace("gotcha", "trap").replace("medium", "sure"))
    write(tmp_path, "no-front.md", "# Just a note\n\ntext\n")
    write(tmp_path, "bad-yaml.md", "---\ntags: [a, b\n---\n\n# T\n\nx\n")
    write(tmp_path, "binary.md", b"---\n\xff\xfe\x00bad\n")
    found = read_learnings(tmp_path)
    assert [item.file for item in found.learnings] == ["ok.md"]
    assert len(found.warnings) == 5
    missing = next(w for w in found.warnings if "missing.md" in w)
    assert "missing extractedAt, confidence, category" in missing and missing.endswith("skipped.")
    assert any(
        "unknown category 'trap'" in w and "unknown confidence 'sure'" in w for w in found.warnings
    )


def test_missing_folder_is_empty_and_silent(tmp_path: Path) -> None:
    found = read_learnings(tmp_path / "nope")
    assert found.learnings == [] and found.warnings == []


def test_the_fixture_memory_folder_reads_with_one_warning() -> None:
    found = read_learnings(PROJECT / ".mission-control" / "memory")
    assert found.warnings == [
        "Warning: .mission-control/memory/broken-missing-fields.md is missing extractedAt, "
        "confidence, category; skipped."
    ]
    assert len(found.learnings) == 10  # 8 readable files, gotchas.md holds 3
    assert {item.category for item in found.learnings} == {
        "pattern", "gotcha", "architecture", "tooling", "prompt"
    }  # fmt: skip


def test_tag_rules() -> None:
    assert tag_problems(["vitest", "monorepo"]) == []
    assert tag_problems(["vitest"]) == ["needs 2-5 tags, not 1"]
    assert "needs 2-5 tags, not 6" in tag_problems(list("abcdef"))
    assert any("not lowercase" in p for p in tag_problems(["Vitest", "x-y"]))
    assert any("too vague" in p for p in tag_problems(["code", "vitest"]))
    assert any("kebab-case" in p for p in tag_problems(["two words", "vitest"]))


# ---------------------------------------------------------------- writing


def test_write_new_generates_a_kebab_case_name_and_reads_back(tmp_path: Path) -> None:
    folder = tmp_path / ".mission-control" / "memory"
    written = write_new(folder, tmp_path, learning())
    assert written.file == "vitest-needs-the-root-flag.md"
    back = read_learnings(folder).learnings[0]
    assert (back.title, back.body, back.tags, back.source, back.extracted_at) == (
        "Vitest needs the --root flag", "Run `pnpm vitest run --root packages/api`.",
        ["vitest", "monorepo"], "manual", NOW,
    )  # fmt: skip
    text = (folder / written.file).read_text()
    assert text.startswith("---\ntags:\n  - vitest\n  - monorepo\nsource: manual\n")
    assert f"extractedAt: {NOW}\n" in text  # unquoted ISO-8601, as mission-control writes it
    again = write_new(folder, tmp_path, learning())
    assert again.file == "vitest-needs-the-root-flag-2.md"


@pytest.mark.parametrize(
    ("title", "name"),
    [("../../x", "x.md"), ("/etc/passwd", "etc-passwd.md"), ("..\\..\\win", "win.md"),
     ("Ünïcödé — façade", "unicode-facade.md"), ("...", "learning.md")],
)  # fmt: skip
def test_titles_never_become_paths(tmp_path: Path, title: str, name: str) -> None:
    folder = tmp_path / "memory"
    written = write_new(folder, tmp_path, learning(title=title))
    assert written.file == name
    assert [p.name for p in tmp_path.rglob("*.md")] == [name]
    assert (folder / name).is_file()


def test_slug_is_bounded_and_free_name_is_case_insensitive(tmp_path: Path) -> None:
    assert len(slug("word " * 40)) <= 60 and not slug("word " * 40).endswith("-")
    write(tmp_path, "Vitest.md", BLOCK)
    assert free_name(tmp_path, "vitest") == "vitest-2.md"


def test_a_memory_folder_that_leads_outside_the_root_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "elsewhere"
    (root / ".mission-control").mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside, root / ".mission-control" / "memory")
    with pytest.raises(LegionError, match="outside the project root"):
        write_new(root / ".mission-control" / "memory", root, learning())
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [({"tags": ["vitest"]}, "2-5 tags"), ({"tags": ["Vitest", "ok"]}, "lowercase"),
     ({"tags": ["code", "misc"]}, "vague"), ({"category": "trap"}, "category"),
     ({"confidence": "sure"}, "confidence"), ({"title": ""}, "title"), ({"body": " "}, "body"),
     ({"title": "x" * 121}, "title")],
)  # fmt: skip
def test_invalid_learnings_are_refused(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        write_new(tmp_path / "memory", tmp_path, learning(**change))
    assert not (tmp_path / "memory").exists() or not list((tmp_path / "memory").iterdir())


def test_unchanged_files_render_back_byte_for_byte() -> None:
    for text in (
        BLOCK,
        FLOW,
        CATEGORY_FILE,
        CATEGORY_FILE.replace("\n", "\r\n"),
        BLOCK + "\n" + FLOW,
    ):
        parsed, problem = parse_learning_file("x.md", text)
        assert problem is None
        assert render_file(parsed) == text


# ---------------------------------------------------------------- reinforcement


def test_reinforce_updates_source_time_confidence_tags_and_keeps_the_facts() -> None:
    old = learning(source="mission-a", body="Run `pnpm vitest run --root packages/api`.")
    done = reinforce(old, source="mission-b", extracted_at=NOW, tags=["vitest", "pnpm"],
                     body="Also `vitest.config.ts` at the root has no include globs.")  # fmt: skip
    assert done is not None
    new = done.learning
    assert (new.source, new.extracted_at, new.confidence) == ("mission-b", NOW, "high")
    assert new.tags == ["vitest", "monorepo", "pnpm"]
    assert new.body.startswith(old.body) and "`vitest.config.ts`" in new.body
    assert "confidence medium -> high" in done.changes
    assert reinforce(learning(confidence="low", source="a"), source="b", extracted_at=NOW, tags=[],
                     body="").learning.confidence == "medium"  # type: ignore[union-attr]  # fmt: skip
    assert reinforce(learning(confidence="high", source="a"), source="b", extracted_at=NOW, tags=[],
                     body="").learning.confidence == "high"  # type: ignore[union-attr]  # fmt: skip


def test_the_same_mission_never_reinforces_twice() -> None:
    old = learning(source="mission/mission-a")
    assert reinforce(old, source="mission-a", extracted_at=NOW, tags=[], body="x") is None
    merged = reinforce(old, source="mission-b", extracted_at=NOW, tags=list("abcdef"), body="")
    assert merged is not None and len(merged.learning.tags) == 5  # merged tags stay within 2-5


def test_new_facts_are_sentences_naming_something_new() -> None:
    old = "Run `pnpm prisma generate` after editing `schema.prisma`."
    new = "Run `pnpm prisma generate`. The error is `TS2339`. Nothing else matters here."
    assert new_facts(old, new) == ["The error is `TS2339`."]


def test_reinforcing_a_learning_in_a_category_file_rewrites_only_its_section(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "gotchas.md", CATEGORY_FILE)
    found = read_learnings(tmp_path)
    port = found.learnings[0]
    done = reinforce(port, source="mission-b", extracted_at=NOW, tags=["ports"], body="")
    assert done is not None and done.learning.tags == ["docker", "postgres"]  # shared tags kept
    apply(found.files["gotchas.md"], done.learning)
    rewrite(tmp_path, tmp_path, found.files["gotchas.md"])
    again = read_learnings(tmp_path).learnings
    assert again[0].source == "mission-a"  # the file's author is kept
    assert again[0].confidence == again[1].confidence == "medium"  # a neighbour is not raised
    assert again[0].extracted_at == NOW
    assert again[0].body.endswith("Confirmed again in mission-b.")
    assert confirmed_by(again[0], "mission-b") and not confirmed_by(again[1], "mission-b")
    assert (
        "# Playwright needs browsers\n\nRun `npx playwright install chromium`.\n"
        in path.read_text()
    )


# ---------------------------------------------------------------- loading


def pool() -> list[Learning]:
    return [
        learning(title="Old gotcha", category="gotcha", tags=["docker", "x1"], confidence="low",
                 extracted_at="2026-01-01T00:00:00Z"),
        learning(title="New gotcha", category="gotcha", tags=["docker", "x2"], confidence="high",
                 extracted_at="2026-03-01T00:00:00Z"),
        learning(title="Vitest pattern", category="pattern", tags=["Vitest", "monorepo"],
                 confidence="medium", extracted_at="2026-02-01"),
        learning(title="Vitest newer", category="tooling", tags=["vitest", "config"],
                 confidence="medium", extracted_at="2026-03-02T00:00:00Z"),
        learning(title="Vitest high", category="architecture", tags=["vitest", "layers"],
                 confidence="high", extracted_at="2025-01-01T00:00:00Z"),
        learning(title="Unrelated", category="prompt", tags=["researcher", "paths"]),
    ]  # fmt: skip


def test_gotchas_always_others_by_tag_ordered_by_confidence_then_recency() -> None:
    loaded = load_for_goal(pool(), "Speed up the VITEST suite", max_tokens=10_000, limit=None)
    assert [item.title for item in loaded.learnings] == [
        "New gotcha", "Old gotcha", "Vitest high", "Vitest newer", "Vitest pattern",
    ]  # fmt: skip
    assert loaded.section.startswith(SECTION_HEADER) and "### Vitest high\n" in loaded.section
    assert loaded.tokens == estimate_tokens(loaded.section)
    limited = load_for_goal(pool(), "vitest", max_tokens=10_000, limit=1)
    assert [item.title for item in limited.learnings] == ["New gotcha", "Old gotcha", "Vitest high"]
    assert matches_goal(learning(tags=["Vite"]), "vitest") is True  # substring, case-insensitive


def test_over_budget_the_section_never_exceeds_the_budget() -> None:
    items = pool()
    full = load_for_goal(items, "vitest", max_tokens=10_000, limit=None).tokens
    for budget in range(0, full + 20, 7):
        loaded = load_for_goal(items, "vitest", max_tokens=budget, limit=None)
        assert loaded.tokens <= budget and loaded.tokens == estimate_tokens(loaded.section)
        assert loaded.learnings == [] or loaded.section.startswith(SECTION_HEADER)
    first = load_for_goal(items, "vitest", max_tokens=10_000, limit=None).learnings[0]
    budget = estimate_tokens(SECTION_HEADER + render_entry(first))
    tight = load_for_goal(items, "vitest", max_tokens=budget, limit=None)
    assert [item.title for item in tight.learnings] == ["New gotcha"]  # the first in priority order
    assert tight.tokens == budget
    assert load_for_goal(items, "vitest", max_tokens=5).section == ""


def test_rewrite_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    """Extraction reads the folder, asks the engine, then rewrites: a concurrent edit in between
    must not be overwritten."""
    from legion_llm.errors import WriteFailedError
    from legion_llm.memory.learnings.read import read_learnings
    from legion_llm.memory.learnings.write import rewrite

    folder = tmp_path / ".mission-control" / "memory"
    folder.mkdir(parents=True)
    path = folder / "vitest-root.md"
    path.write_text(
        "---\ntags:\n  - vitest\n  - monorepo\nsource: manual\nextractedAt: 2026-01-02T00:00:00Z\n"
        "confidence: medium\ncategory: gotcha\n---\n# Vitest needs --root\n\nRun `vitest --root packages/web`.\n"
    )
    loaded = read_learnings(folder)
    parsed = loaded.files["vitest-root.md"]
    rewrite(folder, tmp_path, parsed)  # unchanged on disk: written
    path.write_text(path.read_text() + "\nEdited by a person meanwhile.\n")
    edited = path.read_text()
    with pytest.raises(WriteFailedError, match="changed while learnings were extracted"):
        rewrite(folder, tmp_path, parsed)
    assert path.read_text() == edited


@pytest.mark.parametrize(
    "body", ["Line `x.py`\n\n# Injected title\n\nmore", "---\ntags: [a]\n---", "text\n----\nmore"]
)
def test_a_body_that_would_start_another_learning_is_refused(tmp_path: Path, body: str) -> None:
    from legion_llm.memory.learnings.write import write_new

    folder = tmp_path / ".mission-control" / "memory"
    learning = Learning(
        "Body test",
        body,
        ["vitest", "monorepo"],
        "manual",
        "2026-01-02T00:00:00Z",
        "medium",
        "gotcha",
    )
    with pytest.raises(InputError, match="starts another learning"):
        write_new(folder, tmp_path, learning)
    assert not folder.exists() or not list(folder.iterdir())
