"""The `legion-llm mcp` command; the server (and the mcp SDK) is imported only when it runs."""

from __future__ import annotations

from legion_llm.cli.common import RootOpt
from legion_llm.project import resolve_root


def mcp_cmd(root: RootOpt = None) -> None:
    """Serve the memory tools over MCP on stdio (for Claude Code and other MCP clients).

    The project root is fixed here, when the server starts: no tool argument can read or write
    outside it. Every tool returns the same JSON object as the matching `legion-llm ... --json`.
    """
    from legion_llm.mcp.server import serve

    serve(resolve_root(root))
