"""The host route over MCP (engine=host, then the same tool with ticket and proposal), through the
SDK's stdio client against `legion-llm mcp`: the request, a good proposal verified and written, a
bad one answered with problems and not written, a stale ticket refused, and a ticket that
outlives the server process that made it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from legion_llm.app.commands.distill import distill_maker
from legion_llm.app.commands.learnings import extract_maker
from legion_llm.app.commands.phases import compact_maker
from legion_llm.memory.phases.find import find_phase
from tests.cli.test_host_cli import MISSION, TODAY, lazy, offline_answers
from tests.conftest import FIXTURES
from tests.mcp.stdio import Calls, with_server

COMPACTED = ".planning/phases/03-fx-rates/03-COMPACTED.md"


def demo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    return root, cwd


@pytest.mark.subprocess
def test_compact_prepare_then_submit(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    (good,) = offline_answers(root, compact_maker(find_phase(root, "3"), False))

    async def scenario(calls: Calls) -> dict[str, Any]:
        request = await calls.ok("phase_compact", phase="3", engine="host", today=TODAY)
        ticket = request["data"]["ticket"]
        bad = await calls.ok("phase_compact", ticket=ticket, proposal=lazy(good), apply=True)
        written = (root / COMPACTED).exists()
        done = await calls.ok("phase_compact", ticket=ticket, proposal=good, apply=True)
        return {"request": request, "bad": bad, "written_after_bad": written, "done": done}

    seen = with_server(root, cwd, scenario)
    request = seen["request"]["data"]
    assert {"ticket", "instructions", "schema", "inputs", "budget_tokens"} <= set(request)
    assert "phase_compact (ticket, proposal, apply=true)" in request["submit"]
    bad = seen["bad"]
    assert bad["ok"] is False and bad["data"]["ticket"] == request["ticket"]
    assert bad["data"]["problems"] and not seen["written_after_bad"]
    done = seen["done"]["data"]
    assert done["engine"] == "host" and done["written"] is True
    assert (root / COMPACTED).is_file()


@pytest.mark.subprocess
def test_a_ticket_survives_a_restart_and_a_stale_one_is_refused(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    (good,) = offline_answers(root, compact_maker(find_phase(root, "3"), False))

    async def prepare(calls: Calls) -> str:
        request = await calls.ok("phase_compact", phase="3", engine="host", today=TODAY)
        ticket: str = request["data"]["ticket"]
        return ticket

    ticket = with_server(root, cwd, prepare)

    async def dry_submit(calls: Calls) -> dict[str, Any]:
        return await calls.ok("phase_compact", ticket=ticket, proposal=good)  # verify only

    assert with_server(root, cwd, dry_submit)["data"]["engine"] == "host"  # a new process
    summary = root / ".planning/phases/03-fx-rates/03-02-SUMMARY.md"
    summary.write_text(summary.read_text(encoding="utf-8") + "\nA late note.\n", "utf-8")

    async def stale(calls: Calls) -> str:
        return await calls.error("phase_compact", ticket=ticket, proposal=good, apply=True)

    assert with_server(root, cwd, stale).endswith(
        "phase_compact: the ticket no longer matches phase 3: its inputs changed since it was prepared; "
        "prepare again and propose from the new request"
    )
    assert not (root / COMPACTED).exists()


@pytest.mark.subprocess
def test_distill_and_learnings_over_mcp(tmp_path: Path) -> None:
    root, cwd = demo(tmp_path)
    (patterns,) = offline_answers(root, distill_maker(None))
    (learned,) = offline_answers(root, extract_maker(root / MISSION, TODAY))

    async def scenario(calls: Calls) -> dict[str, Any]:
        distill = await calls.ok("memory_distill_patterns", engine="host", today=TODAY)
        stored = await calls.ok("memory_distill_patterns", ticket=distill["data"]["ticket"],
                                proposal=patterns, apply=True)  # fmt: skip
        extract = await calls.ok("memory_extract_learnings", mission=MISSION, engine="host",
                                 today=TODAY)  # fmt: skip
        as_text = json.dumps(learned)  # a JSON string is accepted too
        extracted = await calls.ok("memory_extract_learnings", ticket=extract["data"]["ticket"],
                                   proposal=as_text, apply=True)  # fmt: skip
        outside = await calls.error("memory_extract_learnings", mission="../elsewhere",
                                    engine="host")  # fmt: skip
        return {"stored": stored, "extracted": extracted, "outside": outside}

    seen = with_server(root, cwd, scenario)
    assert seen["stored"]["data"]["written"] and seen["stored"]["data"]["usage"]["engine"] == "host"
    extracted = seen["extracted"]["data"]
    assert extracted["usage"]["engine"] == "host" and (
        extracted["written"] or extracted["reinforced"]
    )
    assert "outside the project root" in seen["outside"]


def test_a_deeply_nested_proposal_string_is_a_tool_error(tmp_path: Path) -> None:
    from tests.cli.test_robustness import DEEP
    from tests.mcp.inprocess import call_tool

    root, _ = demo(tmp_path)
    request = call_tool(root, "phase_compact", {"phase": "3", "engine": "host", "today": TODAY})
    ticket = request.data["data"]["ticket"]
    result = call_tool(root, "phase_compact", {"ticket": ticket, "proposal": DEEP, "apply": True})
    assert result.is_error and "nested deeper than 32 levels" in result.text
    assert "internal error" not in result.text and not (root / COMPACTED).exists()
