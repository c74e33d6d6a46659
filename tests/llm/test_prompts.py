"""Prompt files: the format, strict placeholders, and the sha256 identity."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from legion_llm.llm.errors import PromptError
from legion_llm.llm.prompts import load_prompt, parse_prompt
from legion_llm.resources import prompts_dir

GOOD = "A note for people.\n\n# system\nYou judge.\n# user\nPhase {{phase}}:\n{{ text }}\n"


def write(folder: Path, text: str, name: str = "p") -> Path:
    path = folder / f"{name}.md"
    path.write_bytes(text.encode("utf-8"))
    return path


def test_parts_placeholders_and_render(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    prompt = load_prompt("p", tmp_path)
    assert prompt.system == "You judge."
    assert prompt.variables == {"phase", "text"}
    rendered = prompt.render({"phase": "3", "text": "did {{phase}} work"})
    assert rendered.user == "Phase 3:\ndid {{phase}} work"  # one pass: values are not re-expanded
    assert rendered.sha256 == hashlib.sha256(GOOD.encode()).hexdigest()


@pytest.mark.parametrize(
    ("variables", "message"),
    [({"phase": "3"}, "missing text"), ({"phase": "3", "text": "t", "extra": "x"}, "unused extra"),
     ({}, "missing phase, text"), ({"text": "t", "other": "o"}, "missing phase; unused other")],
)  # fmt: skip
def test_missing_or_unused_variables_are_errors(
    tmp_path: Path, variables: dict[str, str], message: str
) -> None:
    write(tmp_path, GOOD)
    with pytest.raises(PromptError, match=message):
        load_prompt("p", tmp_path).render(variables)


def test_values_must_be_strings(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    with pytest.raises(PromptError, match="'phase' must be a string, not int"):
        load_prompt("p", tmp_path).render({"phase": 3, "text": "t"})


@pytest.mark.parametrize(
    ("text", "message"),
    [("# user\nx\n", "no '# system' line"), ("# system\nx\n", "no '# user' line"),
     ("# system\n\n# user\nx\n", "must both have text"),
     ("# system\nYou are {{who}}\n# user\nx\n", "must not hold placeholders"),
     ("# system\nS\n# user\n{{Not-OK}}\n", "malformed placeholder"),
     ("# system\nS\n# user\n{{}}\n", "malformed placeholder")],
)  # fmt: skip
def test_malformed_files(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, text)
    with pytest.raises(PromptError, match=message):
        load_prompt("p", tmp_path)


def test_other_headings_are_text(tmp_path: Path) -> None:
    write(tmp_path, "# system\n## Rules\n# systems\n# user\n# user notes\n{{a}}\n")
    prompt = load_prompt("p", tmp_path)
    assert prompt.system == "## Rules\n# systems"
    assert prompt.render({"a": "b"}).user == "# user notes\nb"


def test_hash_ignores_line_endings_but_not_text(tmp_path: Path) -> None:
    lf = parse_prompt("p", GOOD, tmp_path / "p.md")
    crlf = parse_prompt("p", GOOD.replace("\n", "\r\n"), tmp_path / "p.md")
    changed = parse_prompt("p", GOOD.replace("judge", "decide"), tmp_path / "p.md")
    assert lf.sha256 == crlf.sha256 != changed.sha256
    assert crlf.system == "You judge."


@pytest.mark.parametrize("name", ["../etc/passwd", "README", "a/b", "", "x.md"])
def test_names_cannot_escape_the_folder(name: str) -> None:
    with pytest.raises(PromptError, match="must be lower-case"):
        load_prompt(name)


def test_missing_prompt(tmp_path: Path) -> None:
    with pytest.raises(PromptError, match="prompt 'nope' not found"):
        load_prompt("nope", tmp_path)


def test_every_shipped_prompt_is_valid() -> None:
    names = [p.stem for p in prompts_dir().glob("*.md") if p.stem != "README"]
    assert "selftest" in names
    for name in names:
        load_prompt(name)
        readme = (prompts_dir() / "README.md").read_text(encoding="utf-8")
        assert f"`{name}.md`" in readme, f"{name}.md is not listed in prompts/README.md"
