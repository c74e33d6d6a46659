"""`legion-llm hook session-start` and `hook stop` with the JSON Claude Code sends them.

The payloads are the ones Claude Code 2.1.197 wrote on a hook's stdin (recorded with a hook that
dumped its input): SessionStart carries `source`, Stop carries `stop_hook_active`. Each test has
its own copy of the demo project.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from legion_llm.app.commands import hooks
from legion_llm.cli import fast, hook
from legion_llm.entry import run
from legion_llm.memory.learnings.read import read_learnings
from tests.conftest import FIXTURES


def session_start_payload(cwd: Path) -> dict[str, Any]:
    return {
        "session_id": "86bda7ec-82f1-401f-81ae-8f21c11cea6b",
        "transcript_path": f"/home/u/.claude/projects/p/{'86bda7ec'}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


def stop_payload(cwd: Path, *, active: bool = False) -> dict[str, Any]:
    return {
        "session_id": "86bda7ec-82f1-401f-81ae-8f21c11cea6b",
        "transcript_path": "/home/u/.claude/projects/p/86bda7ec.jsonl",
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": active,
    }


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    return root


def run_hook(event: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The hook as Claude Code runs it: a process, the payload on stdin, the project as cwd."""
    return subprocess.run(
        [sys.executable, "-m", "legion_llm", "hook", event],
        input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60,
    )  # fmt: skip


def context_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert "decision" not in output  # a hook never blocks
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def briefing_of(root: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "legion_llm", "briefing", "--json", "--root", str(root)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    data: dict[str, Any] = json.loads(done.stdout)["data"]
    return data


# ---------------------------------------------------------------- SessionStart


@pytest.mark.subprocess
def test_session_start_briefs_the_session_with_the_briefing_and_the_gotchas(demo: Path) -> None:
    context = context_of(run_hook("session-start", json.dumps(session_start_payload(demo)), demo))
    briefing = briefing_of(demo)
    assert f"({briefing['total_records']} outcome records" in context
    for record in briefing["recent_outcomes"]:
        assert (
            f"│ - {record['id']} {record['date']} {record['agent']} {record['outcome']}:" in context
        )
    for agent in briefing["top_agents"]:
        assert f"{agent['agent']} ({agent['total_tasks']} tasks" in context
    assert "\n│ Top agents: " in context
    gotchas = [
        item.title
        for item in read_learnings(demo / ".mission-control" / "memory").learnings
        if item.category == "gotcha"
    ]
    assert gotchas and all(f"\n│ {title}\n" in context for title in gotchas)
    assert "## Project Learnings" in context
    assert len(context) <= hooks.MAX_CONTEXT_CHARS


@pytest.mark.subprocess
def test_session_start_loads_the_learnings_whose_tags_state_md_names(demo: Path) -> None:
    memory = demo / ".mission-control" / "memory"
    (memory / "tag-matched.md").write_text(
        "---\ntags: [zebra-ledger]\nsource: mission/m-1\nextractedAt: 2026-06-01\n"
        "confidence: high\ncategory: tooling\n---\n# Run the zebra ledger check first\n\n"
        "Because the zebra ledger breaks otherwise.\n",
        encoding="utf-8",
    )
    payload = json.dumps(session_start_payload(demo))
    assert "zebra ledger check" not in context_of(run_hook("session-start", payload, demo))
    state = demo / ".planning" / "STATE.md"
    state.write_text(state.read_text(encoding="utf-8") + "\nWorking on zebra-ledger.\n", "utf-8")
    assert "\n│ Run the zebra ledger check first\n" in context_of(
        run_hook("session-start", payload, demo)
    )


@pytest.mark.subprocess
def test_a_secret_in_a_memory_file_never_reaches_the_session(demo: Path) -> None:
    """A hand-edited learning holding a token: the context carries the marker, not the token."""
    token = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c"
    (demo / ".mission-control" / "memory" / "leaked.md").write_text(
        "---\ntags: [deploy]\nsource: manual\nextractedAt: 2026-06-01\n"
        "confidence: high\ncategory: gotcha\n---\n# Never push with the old deploy token\n\n"
        f"It was {token} and it is revoked.\n",
        encoding="utf-8",
    )
    context = context_of(run_hook("session-start", json.dumps(session_start_payload(demo)), demo))
    assert "Never push with the old deploy token" in context  # the gotcha arrived
    assert token not in context and "[REDACTED:github-token]" in context


@pytest.mark.subprocess
def test_session_start_stays_short_on_a_large_memory(demo: Path) -> None:
    memory = demo / ".mission-control" / "memory"
    for i in range(40):
        (memory / f"gotcha-{i:02d}.md").write_text(
            f"---\ntags: [t{i}]\nsource: mission/m-{i}\nextractedAt: 2026-06-01\n"
            f"confidence: high\ncategory: gotcha\n---\n# Gotcha number {i}\n\n"
            + "A long body that says a lot. " * 40
            + "\n",
            encoding="utf-8",
        )
    context = context_of(run_hook("session-start", json.dumps(session_start_payload(demo)), demo))
    assert len(context) <= hooks.MAX_CONTEXT_CHARS
    assert "more learnings did not fit" in context
    assert "outcome records" in context  # the briefing comes first and is kept


def test_bounded_cuts_at_a_line_end_and_says_so() -> None:  # the quoted part, in the frame
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(500))
    cut = hooks.bounded(text)
    assert len(cut) <= hooks.MAX_CONTEXT_CHARS
    assert cut.endswith("\n" + hooks.TRUNCATED)
    assert text.startswith(cut.removesuffix("\n" + hooks.TRUNCATED))
    assert hooks.bounded("short") == "short"


@pytest.mark.subprocess
def test_a_broken_outcomes_file_is_one_line_of_context(demo: Path) -> None:
    outcomes = demo / ".planning" / "memory" / "OUTCOMES.md"
    outcomes.write_bytes(outcomes.read_bytes() + b"| O-999 | \xff\xfe broken |\n")
    context = context_of(run_hook("session-start", json.dumps(session_start_payload(demo)), demo))
    warnings = [line for line in context.splitlines() if line.startswith("│ Warning: ")]
    assert len(warnings) == 1 and "OUTCOMES.md" in warnings[0]
    assert "## Project Learnings" in context  # the rest still arrives


@pytest.mark.subprocess
def test_a_broken_learning_is_one_line_of_context(demo: Path) -> None:
    (demo / ".mission-control" / "memory" / "broken.md").write_text(
        "---\ntags: [a\n---\n# Title\n", encoding="utf-8"
    )
    context = context_of(run_hook("session-start", json.dumps(session_start_payload(demo)), demo))
    warnings = [line for line in context.splitlines() if line.startswith("│ Warning: ")]
    assert len(warnings) == 1 and "broken.md" in warnings[0]


def test_a_failure_inside_a_part_becomes_one_line_and_the_rest_arrives(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr("legion_llm.memory.outcomes.fastrecall.brief_outcomes", boom)
    context = hooks.session_context(demo, __import__("datetime").date(2026, 6, 15))
    first = context.splitlines()[0]
    assert first == "legion-llm: the memory briefing is unavailable (why is quoted below)"
    assert "\n│ RuntimeError: disk on fire second line\n" in context
    assert "## Project Learnings" in context


def test_a_bug_in_a_hook_exits_0_with_no_output(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(hooks, "session_context", lambda *_: 1 / 0)
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(session_start_payload(demo))))
    assert hook.session_start_cmd() == 0
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- Stop


@pytest.mark.subprocess
def test_stop_names_the_complete_phases_not_compacted_yet(demo: Path) -> None:
    done = run_hook("stop", json.dumps(stop_payload(demo)), demo)
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert list(output) == ["systemMessage"]  # no decision: never blocks
    message = output["systemMessage"]
    assert "\n" not in message
    assert "Phase 3 (FX rates) is complete and not compacted yet" in message
    assert "`legion-llm compact 3`" in message


@pytest.mark.subprocess
def test_stop_is_silent_once_the_phases_are_compacted(demo: Path) -> None:
    (demo / ".planning" / "phases" / "03-fx-rates" / "03-COMPACTED.md").write_text(
        "# Phase 3: FX rates (compacted)\n", encoding="utf-8"
    )
    done = run_hook("stop", json.dumps(stop_payload(demo)), demo)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_stop_names_every_phase_in_one_line(demo: Path) -> None:
    phase_4 = demo / ".planning" / "phases" / "04-audit-log"
    phase_4.mkdir()
    summary = demo / ".planning" / "phases" / "03-fx-rates" / "03-01-SUMMARY.md"
    (phase_4 / "04-01-SUMMARY.md").write_text(summary.read_text(encoding="utf-8"), "utf-8")
    roadmap = demo / ".planning" / "ROADMAP.md"
    roadmap.write_text(
        roadmap.read_text(encoding="utf-8").replace("- [ ] Phase 4", "- [x] Phase 4"), "utf-8"
    )
    message = hooks.stop_message(demo)
    assert message is not None and "\n" not in message
    assert message.startswith("legion-llm: Phases 3 (FX rates), 4 (Audit log) are complete")


@pytest.mark.subprocess
def test_stop_says_nothing_when_claude_already_continues_for_a_stop_hook(demo: Path) -> None:
    done = run_hook("stop", json.dumps(stop_payload(demo, active=True)), demo)
    assert (done.returncode, done.stdout) == (0, "")


def test_a_broken_roadmap_is_one_line_at_stop(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_: Path) -> None:
        raise ValueError("ROADMAP.md: unreadable\nat line 3")

    monkeypatch.setattr("legion_llm.memory.phases.find.completed_without_compaction", broken)
    assert hooks.stop_message(demo) == (
        "legion-llm: could not look for phases to compact (ROADMAP.md: unreadable at line 3)"
    )


# ---------------------------------------------------------------- where the hooks run


@pytest.mark.subprocess
@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_outside_a_project_with_planning_both_hooks_are_silent(tmp_path: Path, event: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".mission-control" / "memory").mkdir(parents=True)  # not a Legion project
    payload = (
        session_start_payload(elsewhere) if event == "session-start" else stop_payload(elsewhere)
    )
    done = run_hook(event, json.dumps(payload), elsewhere)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


@pytest.mark.subprocess
def test_the_root_is_found_from_a_subfolder_of_the_payloads_cwd(demo: Path, tmp_path: Path) -> None:
    inside = demo / "src" / "deep"
    inside.mkdir(parents=True)
    done = run_hook("stop", json.dumps(stop_payload(inside)), tmp_path)  # run from elsewhere
    assert "Phase 3 (FX rates)" in json.loads(done.stdout)["systemMessage"]


@pytest.mark.subprocess
@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"cwd": 7}', "\xff"])
def test_unreadable_input_falls_back_to_the_folder_the_hook_runs_in(
    demo: Path, tmp_path: Path, stdin: str
) -> None:
    assert "Phase 3" in json.loads(run_hook("stop", stdin, demo).stdout)["systemMessage"]
    outside = run_hook("stop", stdin, tmp_path)
    assert (outside.returncode, outside.stdout) == (0, "")


def test_read_payload_reads_nothing_from_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert hook.read_payload(Terminal('{"cwd": "/"}')) == {}
    assert hook.read_payload(io.StringIO('{"cwd": "/x"}')) == {"cwd": "/x"}


# ---------------------------------------------------------------- the CLI


def test_both_hooks_are_answered_by_the_fast_path_and_typer_alike(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for event, payload in (("session-start", session_start_payload), ("stop", stop_payload)):
        outputs = []
        for use_fast in (True, False):
            monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(payload(demo))))
            assert run(["hook", event], fast=use_fast) == 0
            outputs.append(capsys.readouterr().out)
        assert outputs[0] == outputs[1] != ""
        assert set(fast.spec_of(("hook", event)) or {}) == {"root", "today", "json_"}


def test_hook_help_lists_both_hooks(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["hook", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "session-start" in shown and "stop" in shown


@pytest.mark.subprocess
def test_root_overrides_the_payloads_cwd_and_today_dates_the_briefing(
    demo: Path, tmp_path: Path
) -> None:
    elsewhere = json.dumps(stop_payload(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "legion_llm", "hook", "stop", "--root", str(demo), "--json"],
        input=elsewhere, capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert "Phase 3 (FX rates)" in json.loads(done.stdout)["systemMessage"]
    contexts = []
    for today in ("2026-06-15", "2031-01-01"):
        args = ["hook", "session-start", "--root", str(demo), "--today", today]
        done = subprocess.run([sys.executable, "-m", "legion_llm", *args], input="",
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        contexts.append(context_of(done))
    assert contexts[0] != contexts[1]  # the recency of the recent outcomes moved with the date


@pytest.mark.subprocess
def test_a_bad_option_value_is_one_line_on_stderr_and_still_exit_0(demo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "legion_llm", "hook", "session-start", "--today", "someday"],
        input=json.dumps(session_start_payload(demo)), capture_output=True, text=True,
        cwd=demo, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr == (
        "legion-llm hook: --today must be a date like 2026-03-01, not 'someday'\n"
    )
