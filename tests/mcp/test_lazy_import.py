"""The mcp SDK is imported only when `legion-llm mcp` runs: plain commands and --help stay fast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess

CODE = (
    "import sys; from legion_llm.entry import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n"
    "    loaded = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types')))\n"
    "    print('MCP', loaded, file=sys.stderr)\n"
)


@pytest.mark.parametrize(
    "command",
    [["briefing", "--json"], ["outcomes", "recall", "--json"], ["--help"], ["mcp", "--help"]],
)
def test_plain_commands_and_help_do_not_import_the_mcp_sdk(
    project: Path, command: list[str]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE, *command, *(["--root", str(project)] if "--json" in command else [])],
        capture_output=True, text=True, check=False, env={"PATH": "", "COLUMNS": "100"},
    )  # fmt: skip
    assert "MCP []" in done.stderr, done.stderr
