"""Human output that reads well at 80 columns: every table command keeps its ids, dates and names
whole; the engine/usage line only when it says something (or with --verbose); --help shows no
`<bool>` after a plain flag."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.pipeline.compaction_cases import copy_case

TODAY = "2026-06-15"
# The tokens a reader looks up: ids (O-012, P-003, E-001, PREF-001), dates, and agent names.
WHOLE = re.compile(r"^(?:[A-Z]+-\d+|\d{4}-\d{2}-\d{2}|[a-z]+(?:-[a-z]+)+)$")


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project after the demo ran (outcomes, patterns, errors), plus one preference."""
    from legion_llm.entry import run

    root = tmp_path_factory.mktemp("narrow") / "demo"
    assert run(["demo", "--root", str(root), "--json"]) == 0
    assert run(["preferences", "add", "--decision-point", "review-verdict",
                "--context", "phase 4 review cycle 2", "--proposed", "needs-work",
                "--user-choice", "accepted as is", "--signal", "corrective",
                "--agent", "testing-qa-verification-specialist", "--root", str(root),
                "--today", TODAY]) == 0  # fmt: skip
    return root


# command -> (its arguments, the keys of its --json data whose values its table shows)
TABLE_COMMANDS = {
    "outcomes recall": (["outcomes", "recall"], {"id", "date", "plan", "agent", "task_type"}),
    "briefing": (["briefing"], {"id", "date", "agent"}),
    "outcomes agent-scores": (["outcomes", "agent-scores"], {"agent"}),
    "outcomes archetypes": (["outcomes", "archetypes"], {"topAgent"}),
    "patterns recall": (["patterns", "recall"], {"id", "date"}),
    "errors recall": (["errors", "recall"], {"id"}),
    "preferences recall": (["preferences", "recall"], {"id", "date", "decision_point", "agent"}),
    "recall TOPIC": (["recall", "audit"], {"id"}),
    "signals": (["signals"], {"agent", "id"}),
}


def _whole_tokens(value: Any, keys: set[str], key: str = "") -> set[str]:
    if isinstance(value, str):
        return {value} if key in keys and WHOLE.match(value) else set()
    if isinstance(value, dict):
        return {t for k, v in value.items() for t in _whole_tokens(v, keys, k)}
    if isinstance(value, list):
        return {t for v in value for t in _whole_tokens(v, keys, key)}
    return set()


def _assert_whole_at_80(human: str, tokens: set[str]) -> None:
    assert tokens, "the command showed nothing to check"
    words = set(re.findall(r"[\w-]+", human))
    for token in tokens:
        assert token in words, f"{token!r} is split or missing at 80 columns:\n{human}"
    assert max(len(line) for line in human.splitlines()) <= 80


@pytest.mark.subprocess
@pytest.mark.parametrize("command", TABLE_COMMANDS)
def test_every_table_keeps_ids_dates_and_names_whole_at_80_columns(
    command: str, cli: Any, filled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    words, keys = TABLE_COMMANDS[command]
    args = [*words, "--root", filled, "--today", TODAY]
    data = cli(*args, "--json")
    assert data.exit_code == 0, data.stderr
    human = cli(*args)
    assert human.exit_code == 0, human.stderr
    _assert_whole_at_80(human.stdout, _whole_tokens(data.json["data"], keys))


@pytest.mark.subprocess
def test_eval_table_keeps_case_names_whole_at_80_columns(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    cases = tmp_path / "fixtures"
    for name in ("letter-suffix-plan", "brace-lists-and-bare-names"):
        shutil.copytree(FIXTURES / "phases" / name, cases / name)
    result = cli("eval", "compaction", "--fixtures", cases, "--out", tmp_path / "log.json",
                 "--engine", "offline", "--root", tmp_path)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    _assert_whole_at_80(result.stdout, {"letter-suffix-plan", "brace-lists-and-bare-names"})


def test_a_wide_free_text_column_folds_between_words_and_keeps_the_rest_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from legion_llm.cli.render import table

    monkeypatch.setenv("COLUMNS", "80")
    summary = "a summary long enough to need three lines at eighty columns " * 2
    table("T", ["ID", "Date", "Summary"], [["O-123", "2026-12-03", summary]])
    out = capsys.readouterr().out
    assert "O-123" in out and "2026-12-03" in out and "2026-12\n" not in out
    assert " ".join(summary.split()) in " ".join(re.sub(r"[│┃]", " ", out).split())
    assert len(out.splitlines()) > 5  # it folded rather than being cut


def _usage_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Engine ")]


def test_the_usage_line_only_when_asked_for_or_when_a_model_answered(
    cli: Any, tmp_path: Path
) -> None:
    root = copy_case("decimal-phase", tmp_path)
    quiet = cli("compact", "06.1", "--dry-run", "--engine", "offline", "--root", root)
    assert quiet.exit_code == 0 and _usage_lines(quiet.stdout) == []
    for fast in ((), ("--model", "claude-sonnet-4-5")):  # the fast path and typer's
        loud = cli("compact", "06.1", "--dry-run", "--engine", "offline", "--verbose", *fast,
                   "--root", root)  # fmt: skip
        assert loud.exit_code == 0, loud.stderr
        assert _usage_lines(loud.stdout) == [
            "Engine offline: 0 Claude call(s), 1 offline, 0 in / 0 out tokens, about $0.0000"
        ]


def test_the_usage_line_is_shown_for_an_engine_that_is_not_offline() -> None:
    from legion_llm.app.session import usage_lines

    usage = {"engine": "claude-code", "calls": 1, "offline_calls": 0, "input_tokens": 10,
             "output_tokens": 5, "estimated_cost_usd": 0.0}  # fmt: skip
    assert usage_lines(usage) == [
        "Engine claude-code: 1 Claude call(s), 0 offline, 10 in / 5 out tokens, about $0.0000"
    ]
    assert usage_lines({**usage, "engine": "offline", "calls": 0}) == []


@pytest.mark.parametrize(
    "args", [["compact"], ["errors", "add"], ["outcomes", "add"], ["learnings", "extract"], []]
)
def test_help_shows_no_bool_after_a_flag(
    cli: Any, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    result = cli(*args, "--help")
    assert result.exit_code == 0
    assert "--help" in result.stdout and "<bool>" not in result.stdout
    if args:
        assert "<str>" in result.stdout  # the options that take a value still say so


@pytest.mark.parametrize(
    ("args", "explained"),
    [(["errors", "match"], ["confidence", "score", "shown", "fix", "confirm", "none"]),
     (["outcomes", "recall"], ["Imp.", "Score"]), (["briefing"], ["Score"])],
)  # fmt: skip
def test_the_labels_a_table_shows_are_explained_in_help(
    cli: Any, args: list[str], explained: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    text = " ".join(cli(*args, "--help").stdout.split())
    for label in explained:
        assert label in text, label


def test_a_distill_dry_run_names_no_invented_id() -> None:
    from legion_llm.app.commands.distill import human_lines

    data = {"dry_run": True, "candidates": [1], "groups": [1], "skipped": [],
            "written": [{"id": None, "pattern": "Keyset paging", "source": "O-001, O-002"}],
            "usage": {"engine": "offline", "calls": 0}}  # fmt: skip
    said = "\n".join(human_lines(data, verbose=False))
    assert "P-new" not in said
    assert "Would write a new pattern (its id is given when written): Keyset paging" in said
