"""The `legion-llm mcp` command; the server (and the mcp SDK) is imported only when it runs."""

from __future__ import annotations

from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt


def mcp_cmd(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """Serve the memory tools over MCP on stdio (for Claude Code and other MCP clients).

    The project root is fixed here, when the server starts: no tool argument can read or write
    outside it. Every tool returns the same JSON object as the matching `legion-llm ... --json`.
    --today is the date of every call that passes no `today` of its own. With --json, an error
    before the server starts (a bad --root or --today) is one JSON object on stdout; once it
    serves, stdout speaks JSON-RPC.
    """
    from legion_llm.cli.fast import mcp  # the same call the fast path makes

    mcp(root, today, json_)
