"""The same write paths through `legion-llm mcp` (the SDK's stdio client), then `scan`; and no
tool takes an argument that could turn redaction off (settings.json alone can)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.mcp.stdio import Calls, with_server
from tests.redact.samples import KINDS, SAMPLES, everything, sample
from tests.redact.test_write_paths import leaked, markers, memory_text

pytestmark = pytest.mark.subprocess

TODAY = "2026-06-15"
SECRETS = everything()


def test_every_store_tool_redacts_and_scan_then_finds_nothing(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    (tmp_path / "cwd").mkdir()
    record = {"kind": "outcome", "phase": "4", "plan": "04-03", "agent": "dev", "outcome": "success",
              "summary": SECRETS, "tags": ["secrets"]}  # fmt: skip

    async def scenario(calls: Calls) -> dict[str, Any]:
        return {
            "outcome": await calls.ok("memory_store", **record, today=TODAY),
            "pattern": await calls.ok("memory_store", kind="pattern", pattern=sample("jwt").text,
                                      context=SECRETS, reuse_criteria="always", today=TODAY),
            "error": await calls.ok("memory_store", kind="error", signature=sample("password").text,
                                    fix=SECRETS, agent="dev", engine="offline", today=TODAY),
            "preference": await calls.ok("memory_store", kind="preference", decision_point="review-verdict",
                                         context=SECRETS, proposed="merge", user_choice="merged",
                                         signal="positive", agent="dev", today=TODAY),
            "learning": await calls.ok("memory_store", kind="learning", title="CI token leak", body=SECRETS,
                                       category="gotcha", tags=["ci", "secrets"],
                                       confidence="medium"),
            "scan": await calls.ok("memory_scan"),
            "tools": [tool.input_schema for tool in (await calls.session.list_tools()).tools],
        }  # fmt: skip

    got = with_server(root, tmp_path / "cwd", scenario)
    schemas = got.pop("tools")
    assert leaked(json.dumps(got)) == []  # no result, no warning carries a value
    written = memory_text(root)
    assert leaked(written) == [] and markers(written) == set(KINDS)
    for name in ("outcome", "pattern", "error", "preference", "learning"):
        assert any(w.startswith("warning: redacted") for w in got[name]["warnings"]), name
    assert got["scan"]["data"]["total"] == 0 and got["scan"]["data"]["clean"] is True
    names = {name for schema in schemas for name in property_names(schema)}  # no off switch
    assert {"fix", "summary"} <= names
    assert not [n for n in names if any(w in n for w in ("redact", "secret", "raw", "verbatim"))]


def test_scan_tool_lists_and_fixes_hand_written_secrets(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-project", root)
    (tmp_path / "cwd").mkdir()
    errors = root / ".planning/memory/ERRORS.md"
    errors.write_text(errors.read_text(encoding="utf-8") + f"\n{SAMPLES[0].text}\n", "utf-8")

    async def scenario(calls: Calls) -> list[dict[str, Any]]:
        return [await calls.ok("memory_scan"), await calls.ok("memory_scan", apply=True),
                await calls.ok("memory_scan")]  # fmt: skip

    listed, fixed, after = with_server(root, tmp_path / "cwd", scenario)
    assert listed["ok"] is False and listed["data"]["findings"][0]["kind"] == "github-token"
    assert listed["data"]["findings"][0]["path"] == ".planning/memory/ERRORS.md"
    assert fixed["ok"] is True and fixed["data"]["fixed_files"] == [".planning/memory/ERRORS.md"]
    assert after["data"]["total"] == 0 and leaked(errors.read_text(encoding="utf-8")) == []


def property_names(schema: Any) -> list[str]:
    """Every argument name in a JSON schema, nested records ($defs) included."""
    if isinstance(schema, dict):
        own = (
            list(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else []
        )
        return own + [n for value in schema.values() for n in property_names(value)]
    if isinstance(schema, list):
        return [n for value in schema for n in property_names(value)]
    return []
