"""A result with nothing in it says so in one sentence, not an empty bordered table; learnings
that exist but do not fit the budget are said to exist; --json is unchanged. prune's note that it
ran below the threshold is one of the result's warnings (stderr and the envelope alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

TODAY = ["--today", "2026-06-15"]
BORDERS = set("┏━┃┡│└─┌┐┘")

EMPTY = [
    (["outcomes", "recall", "--tags", "nosuch"], "No outcome matches (OUTCOMES.md holds "),
    (["patterns", "recall", "--tags", "nosuch"], "No entry matches (PATTERNS.md holds "),
    (["errors", "recall", "--tags", "nosuch"], "No entry matches (ERRORS.md holds "),
    (["preferences", "recall", "--tags", "nosuch"], "No entry matches (PREFERENCES.md holds "),
    (["recall", "zzzqqq"], "Nothing in the memory files matches 'zzzqqq'."),
]


@pytest.mark.parametrize(("words", "sentence"), EMPTY, ids=[" ".join(w[:2]) for w, _ in EMPTY])
def test_a_recall_with_no_match_says_so_in_one_sentence(
    cli: Any, demo_project: Path, words: list[str], sentence: str
) -> None:
    human = cli(*words, "--root", demo_project, *TODAY)
    assert human.exit_code == 0
    assert human.stdout.startswith(sentence) and human.stdout.count("\n") == 1
    assert not BORDERS & set(human.stdout)
    data = cli(*words, "--json", "--root", demo_project, *TODAY).json["data"]
    assert data["records"] == [] and data["total"] == 0


def test_a_recall_of_an_empty_project_says_there_is_nothing_yet(cli: Any, project: Path) -> None:
    result = cli("outcomes", "recall", "--root", project)
    assert result.stdout == "No outcomes recorded yet (OUTCOMES.md holds none).\n"


def test_a_recall_that_matches_still_draws_its_table(
    cli: Any, demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # a narrow terminal lists records one field a line
    assert BORDERS & set(cli("outcomes", "recall", "--root", demo_project, *TODAY).stdout)


def test_learnings_that_do_not_fit_the_budget_are_said_to_exist(
    cli: Any, demo_project: Path
) -> None:
    goal = ["learnings", "load", "--goal", "fix the fx rates import", "--root", demo_project]
    fits = cli(*goal, "--json").json["data"]["learnings"]
    assert fits  # learnings exist for this goal
    small = cli(*goal, "--max-tokens", "10")
    assert small.exit_code == 0
    assert "No learnings for this goal" not in small.stdout
    assert small.stdout.startswith(f"{len(fits)} learning(s) apply to this goal, but none fits")
    assert "--max-tokens 10" in small.stdout
    assert cli(*goal, "--max-tokens", "10", "--json").json["data"]["learnings"] == []


def test_no_learnings_at_all_is_said_plainly(cli: Any, project: Path) -> None:
    result = cli("learnings", "load", "--goal", "anything", "--root", project)
    assert result.stdout == "No learnings for this goal.\n"


def test_prunes_below_the_threshold_note_is_in_the_envelope(cli: Any, demo_project: Path) -> None:
    result = cli("prune", "--dry-run", "--json", "--root", demo_project, *TODAY)
    assert result.exit_code == 0 and result.json["data"]["archived"]
    notes = [w for w in result.json["warnings"] if "not over the threshold" in w]
    assert len(notes) == 1 and notes[0] in result.stderr
