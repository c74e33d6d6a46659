"""No tool argument reads or writes outside the root given to `legion-llm mcp --root`: `../`,
absolute paths, `~` and a symlink out of the project all give a tool error, the files outside
stay as they were, and the server keeps serving."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.stdio import Calls, with_server
from tests.pipeline.compaction_cases import copy_case, fingerprint

pytestmark = pytest.mark.subprocess

TODAY = "2026-06-15"
PHASE = ".planning/phases/03-billing-exports"
MISSION = "mission-2026-03-15-csv-import"
ARCHIVE = FIXTURES / "missions/project/.mission-control/missions/archive"


def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The project (root), a real phase project beside it, and a real mission folder beside it."""
    root = copy_case("legion-spec-billing-exports", tmp_path)
    outside = tmp_path / "outside"
    shutil.copytree(FIXTURES / "phases/legion-spec-billing-exports", outside)
    mission = tmp_path / "outside-mission"
    shutil.copytree(ARCHIVE / MISSION, mission)
    (root / ".planning/phases/04-linked-out").symlink_to(outside / PHASE)
    return root, outside, mission


def escapes(root: Path, outside: Path, mission: Path) -> list[tuple[str, dict[str, Any]]]:
    phase_specs = [f"../outside/{PHASE}", str(outside / PHASE), f"{PHASE}/../../../../outside/"
                   f"{PHASE}", "~/../../" + str(outside / PHASE), ".planning/phases/04-linked-out"]  # fmt: skip
    calls: list[tuple[str, dict[str, Any]]] = []
    for spec in phase_specs:
        calls += [("phase_compact", {"phase": spec, "today": TODAY, "force": True, "apply": True}),
                  ("phase_compact", {"phase": spec, "engine": "host"}),
                  ("phase_read", {"view": "verify", "phase": spec}),
                  ("phase_read", {"phase": spec})]  # fmt: skip
    for folder in ["../outside-mission", str(mission), f"{PHASE}/../../../../outside-mission"]:
        calls += [("memory_extract_learnings", {"mission": folder, "today": TODAY, "apply": True}),
                  ("memory_extract_learnings", {"mission": folder, "engine": "host"})]  # fmt: skip
    return calls


def test_no_argument_reaches_outside_the_root(tmp_path: Path) -> None:
    root, outside, mission = layout(tmp_path)
    before = {folder: fingerprint(folder) for folder in (outside, mission)}
    attempts = escapes(root, outside, mission)

    async def scenario(calls: Calls) -> tuple[list[str], dict[str, Any]]:
        messages = []
        for name, arguments in attempts:
            messages.append(await calls.error(name, **arguments))
            assert (await calls.ok("phase_read", view="pending"))["ok"] is True  # still serving
        title = "../../../../escape/../" + str(tmp_path / "written-outside")
        added = await calls.ok("memory_store", kind="learning", title=title, body="Stay inside the root.",
                               category="gotcha", tags=["paths", "safety"],
                               confidence="high", today=TODAY)  # fmt: skip
        return messages, added

    messages, added = with_server(root, tmp_path, scenario)
    for (name, arguments), message in zip(attempts, messages, strict=True):
        assert "outside the project root" in message, (name, arguments, message)
    assert {folder: fingerprint(folder) for folder in (outside, mission)} == before
    assert not list(outside.rglob("*-COMPACTED.md")) and not (outside / ".mission-control").exists()
    assert not (tmp_path / "written-outside").exists() and not (tmp_path / "escape").exists()
    path = root / added["data"]["path"]
    assert path.is_file() and path.parent == root / ".mission-control/memory"


def test_relative_names_mean_the_root_not_the_folder_the_server_started_in(tmp_path: Path) -> None:
    root, outside, _ = layout(tmp_path)
    started_in = outside / ".planning/phases"  # holds a phase folder with the same name

    async def scenario(calls: Calls) -> dict[str, Any]:
        return await calls.ok("phase_read", phase="03-billing-exports")

    context = with_server(root, started_in, scenario)
    assert context["data"]["folder"] == PHASE  # relative: inside the root
    assert all(not Path(name).is_absolute() for name in context["data"]["files"])
