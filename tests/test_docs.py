"""The README is for users: short, every moved section one link away, the test command the one CI
runs, and no spec section cited without the spec's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
LINK = re.compile(r"\]\(((?:\.\./|docs/)?[\w./-]+\.md)(?:#[\w-]+)?\)")


def _links(path: Path) -> list[Path]:
    text = path.read_text(encoding="utf-8")
    return [(path.parent / target).resolve() for target in LINK.findall(text)]


def test_readme_is_at_most_15_kb() -> None:
    assert README.stat().st_size <= 15 * 1024


def test_every_doc_is_linked_from_the_readme() -> None:
    linked = set(_links(README))
    assert [d.name for d in DOCS if d.resolve() not in linked] == []


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_every_markdown_link_resolves(path: Path) -> None:
    assert [str(link) for link in _links(path) if not link.is_file()] == []


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"^exec (.+)$", ci, re.MULTILINE)
    assert command is not None
    assert command.group(1).strip() in README.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_spec_sections_are_cited_with_the_spec_name(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    cited = [m.start() for m in re.finditer(r"§\s*\d|\b[Ss]ection \d+ of the\b", text)]
    named = re.compile(r"memory-manager|mission-memory")
    assert [
        text[i - 40 : i + 10] for i in cited if not named.search(text[max(0, i - 40) : i + 40])
    ] == []
