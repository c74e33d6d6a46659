"""Every command's output and a fixed set of MCP calls on the demo project, byte for byte, against
a recording (tests/snapshots/): a move of code between layers must not change what a user sees.

Each command runs twice, as a user runs it: with --json (the object on stdout) and without (the
human text); stdout, stderr and the exit code are recorded. The commands run in one order on one
copy of the demo project, offline, with a fixed date, so each sees what the one before wrote.
Only what differs from run to run is normalised: the project's temporary path, the user folders,
the package folder, host tickets (signed with a per-machine key), an eval's duration and commit.

To record again after a change that is meant to change output:
`LEGION_LLM_RECORD_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py`, then read
the diff of tests/snapshots/ before committing it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import legion_llm
from tests.conftest import FIXTURES

pytestmark = pytest.mark.slow
SNAPSHOTS = Path(__file__).parent / "snapshots"
TODAY = "2026-06-15"
RECORD = os.environ.get("LEGION_LLM_RECORD_SNAPSHOTS") == "1"
PHASE = ".planning/phases/03-fx-rates"
MISSION = ".mission-control/missions/archive/mission-2026-06-12-audit-export"

COMMANDS: list[list[str]] = [
    ["outcomes", "recall"],
    ["outcomes", "recall", "--agent", "engineering-backend-architect", "--limit", "3"],
    ["outcomes", "agent-scores"],
    ["outcomes", "archetypes"],
    ["briefing"],
    ["signals", "--task-types", "api,ui", "--agents", "engineering-backend-architect"],
    ["recall", "rates"],
    [
        "outcomes",
        "add",
        "--phase",
        "4",
        "--plan",
        "04-01",
        "--agent",
        "engineering-senior-developer",
        "--outcome",
        "success",
        "--summary",
        "Audit log rows written in the posting transaction",
        "--tags",
        "audit,postgres",
    ],
    [
        "patterns",
        "add",
        "--pattern",
        "Write the audit row in the same transaction",
        "--context",
        "Phase 4 audit log",
        "--reuse-criteria",
        "Any change that must be traceable",
        "--tags",
        "audit",
    ],
    ["patterns", "recall", "--tags", "audit"],
    [
        "errors",
        "add",
        "--signature",
        "psycopg.errors.UniqueViolation: duplicate key value "
        'violates unique constraint "rates_day_key"',
        "--fix",
        "Upsert the day's rate",
        "--agent",
        "engineering-backend-architect",
        "--engine",
        "offline",
    ],
    [
        "errors",
        "match",
        'duplicate key value violates unique constraint "rates_day_key"',
        "--engine",
        "offline",
    ],
    ["errors", "recall", "--error-text", "timeout"],
    [
        "preferences",
        "add",
        "--decision-point",
        "review-verdict",
        "--context",
        "Phase 3 review",
        "--proposed",
        "Retry the provider 5 times",
        "--user-choice",
        "Retry twice, then fall back",
        "--signal",
        "corrective",
        "--agent",
        "engineering-backend-architect",
    ],
    ["preferences", "recall", "--signal", "corrective"],
    ["compact", "--suggest"],
    ["compact", "3", "--dry-run", "--engine", "offline"],
    ["compact", "3", "--prepare"],
    ["compact", "3", "--engine", "offline"],
    ["verify-compaction", "3"],
    ["phase-context", "3"],
    ["distill", "--dry-run", "--engine", "offline"],
    ["distill", "--prepare"],
    [
        "learnings",
        "add",
        "--title",
        "Rates are stored per booking day",
        "--body",
        "Never overwrite a stored rate; a correction is a new row.",
        "--category",
        "gotcha",
        "--tags",
        "fx,rates",
        "--confidence",
        "high",
    ],
    ["learnings", "load", "--goal", "fix the fx rates import"],
    ["learnings", "extract", MISSION, "--dry-run", "--engine", "offline"],
    ["learnings", "extract", MISSION, "--prepare"],
    ["scan"],
    ["prune", "--dry-run"],
    ["llm", "selftest", "--engine", "offline"],
    ["compact", "--all", "--engine", "offline"],
    ["llm", "check", "--engine", "offline"],
    ["trust"],
    ["trust", "--revoke"],
    ["eval", "compaction", "--engine", "offline", "--out", "eval-logs/compaction.json"],
    ["compact", "99"],
    [
        "outcomes",
        "add",
        "--phase",
        "4",
        "--plan",
        "04-01",
        "--agent",
        "a",
        "--outcome",
        "maybe",
        "--summary",
        "s",
    ],
    ["learnings", "extract", "no-such-mission"],
]

MCP_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("memory_recall", {"kind": "outcomes", "limit": 3}),
    ("memory_summary", {"view": "agent_scores"}),
    ("memory_summary", {"view": "archetypes"}),
    ("memory_summary", {}),
    ("memory_summary", {"view": "signals", "task_types": ["api"]}),
    ("memory_recall", {"kind": "topic", "query": "rates"}),
    ("memory_store", {"kind": "outcome", "phase": 4, "plan": "04-02",
                      "agent": "engineering-senior-developer", "outcome": "partial",
                      "summary": "Audit export half done"}),
    ("memory_store", {"kind": "pattern", "pattern": "Export in pages", "context": "Audit export",
                      "reuse_criteria": "Large exports"}),
    ("memory_recall", {"kind": "patterns"}),
    ("memory_store", {"kind": "error", "signature": "TimeoutError: provider did not answer in 10 s",
                      "fix": "Fall back to the second provider", "agent": "engineering-backend-architect",
                      "engine": "offline"}),
    ("memory_recall", {"kind": "match", "query": "TimeoutError: provider did not answer",
                       "engine": "offline"}),
    ("memory_recall", {"kind": "errors"}),
    ("memory_store", {"kind": "preference", "decision_point": "agent-selection",
                      "context": "Phase 4", "proposed": "frontend developer",
                      "user_choice": "backend architect", "signal": "negative", "agent": "system"}),
    ("memory_recall", {"kind": "preferences"}),
    ("phase_read", {"view": "pending"}),
    ("phase_compact", {"phase": 3, "engine": "offline"}),
    ("phase_read", {"view": "verify", "phase": 3}),
    ("phase_read", {"phase": 3}),
    ("phase_compact", {"phase": 3, "engine": "host"}),
    ("memory_distill_patterns", {"engine": "offline"}),
    ("memory_distill_patterns", {"engine": "host"}),
    ("memory_store", {"kind": "learning", "title": "Pages keep exports small",
                      "body": "Export in pages of 1,000.", "category": "pattern",
                      "tags": ["export", "audit"], "confidence": "medium", "today": TODAY}),
    ("memory_recall", {"kind": "learnings", "query": "audit export"}),
    ("memory_extract_learnings", {"mission": MISSION, "engine": "offline", "today": TODAY}),
    ("memory_extract_learnings", {"mission": MISSION, "engine": "host", "today": TODAY}),
    ("memory_scan", {}),
    ("memory_prune", {}),
    ("phase_compact", {"phase": "nine"}),
    ("phase_compact_batch", {}),
]  # fmt: skip


def normalised(text: str, root: Path, user: Path) -> str:
    """The text with what differs between runs replaced by a name."""
    package = Path(legion_llm.__file__).resolve().parent
    named = (
        (root, "<ROOT>"),
        (user, "<USER>"),
        (package, "<PACKAGE>"),
        (package.parent, "<SOURCE>"),
    )
    for path, name in named:
        text = text.replace(str(path.resolve()), name).replace(str(path), name)
    text = re.sub(r'("ticket": ?)"[^"]+"', r'\1"<TICKET>"', text)
    text = re.sub(r'("git_commit": ?)"[0-9a-f]{40}"', r'\1"<COMMIT>"', text)
    return re.sub(r'("duration_s": ?)[0-9.]+', r"\g<1>0", text)


def compare(name: str, found: Any) -> None:
    path = SNAPSHOTS / f"{name}.json"
    text = json.dumps(found, indent=1, ensure_ascii=False) + "\n"
    if RECORD:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    recorded = json.loads(path.read_text(encoding="utf-8"))
    for index, (want, got) in enumerate(zip(recorded, found, strict=True)):
        assert got == want, f"{name} #{index}: {want.get('run') or want.get('call')}"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    monkeypatch.setenv("COLUMNS", "1000")  # no line folded by the length of a temporary path
    monkeypatch.chdir(root)
    return root


def test_every_command_prints_what_it_printed(cli: Any, demo: Path, _user_folders: Path) -> None:
    found = []
    for args in COMMANDS:
        for as_json in (True, False):
            if as_json is False and args[-1] == "--prepare":
                continue  # the same request object, printed as JSON either way
            line = [*args, "--root", str(demo), "--today", TODAY, *(["--json"] if as_json else [])]
            result = cli(*line)
            found.append({
                "run": " ".join([*args, *(["--json"] if as_json else [])]),
                "exit": result.exit_code,
                "stdout": normalised(result.stdout, demo, _user_folders),
                "stderr": normalised(result.stderr, demo, _user_folders),
            })  # fmt: skip
    compare("commands", found)


def test_every_mcp_call_answers_what_it_answered(demo: Path, _user_folders: Path) -> None:
    from datetime import date

    from tests.mcp.inprocess import call_tools

    results = call_tools(demo, MCP_CALLS, today=date.fromisoformat(TODAY))
    found = [{"call": name, "is_error": r.is_error,
              "text": normalised(r.text, demo, _user_folders)}
             for (name, _), r in zip(MCP_CALLS, results, strict=True)]  # fmt: skip
    compare("mcp", found)
