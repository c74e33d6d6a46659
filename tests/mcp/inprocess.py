"""The MCP server in this process, through the SDK's own client (in memory): respx routes and
monkeypatches of the test apply to the tools. tests/mcp/stdio.py drives the real subprocess."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import anyio
from mcp.client.client import Client
from mcp.types import TextContent

from legion_llm.mcp.server import build_server


@dataclass(frozen=True)
class ToolResult:
    is_error: bool
    text: str
    data: Any


def call_tools(
    root: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    today: date | None = None,
    root_given: bool = True,
) -> list[ToolResult]:
    """Each (tool, arguments) in order on one server for `root` (`root_given`: as `mcp --root`;
    False: found from the folder the client started the server in)."""

    async def run() -> list[ToolResult]:
        done = []
        async with Client(build_server(root, today=today, root_given=root_given)) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                text = "".join(b.text for b in result.content if isinstance(b, TextContent))
                done.append(ToolResult(bool(result.is_error), text, result.structured_content))
        return done

    return anyio.run(run)


def call_tool(root: Path, name: str, arguments: dict[str, Any]) -> ToolResult:
    [result] = call_tools(root, [(name, arguments)])
    return result
