"""Drive `legion-llm mcp` as a real subprocess with the mcp SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

T = TypeVar("T")
SERVER = Path(sys.executable).with_name("legion-llm")
# The client passes only HOME, PATH, ... to the server: no API key reaches it; offline forced too.
# The SDK's client passes HOME on: the cache folder stays the test session's (tests/conftest.py).
ENV = {
    "LEGION_LLM_ENGINE": "offline",
    "PYTHONDONTWRITEBYTECODE": "1",
    "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
}


class Calls:
    """Tool calls that assert how they end: a result envelope, or a tool error."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(name, arguments)
        text = _text(result.content)
        assert not result.is_error, f"{name}: {text}"
        assert isinstance(result.structured_content, dict)
        assert json.loads(text) == result.structured_content  # the text is the same JSON
        return result.structured_content

    async def error(self, name: str, **arguments: Any) -> str:
        result = await self.session.call_tool(name, arguments)
        assert result.is_error, f"{name} did not fail: {result.structured_content}"
        return _text(result.content)


def _text(content: list[Any]) -> str:
    return "".join(block.text for block in content if isinstance(block, TextContent))


def with_server(
    root: Path,
    cwd: Path,
    scenario: Callable[[Calls], Awaitable[T]],
    *,
    env: dict[str, str] | None = None,
    sampling_callback: Any = None,
) -> T:
    """Start `legion-llm mcp --root ROOT` in `cwd`, initialise, run `scenario`, shut it down.
    `env` is added to ENV; a `sampling_callback` makes the client declare sampling."""
    params = StdioServerParameters(
        command=str(SERVER), args=["mcp", "--root", str(root)], env={**ENV, **(env or {})}, cwd=cwd
    )

    async def main() -> T:
        with open(cwd / "server-stderr.txt", "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, sampling_callback=sampling_callback) as session,
            ):
                await session.initialize()
                return await scenario(Calls(session))

    return anyio.run(main)
