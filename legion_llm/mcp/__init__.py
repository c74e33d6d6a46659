"""`legion-llm mcp`: the memory tools over the Model Context Protocol (stdio).

Importing this package imports nothing heavy: the mcp SDK is imported by `legion_llm.mcp.server`,
which only `legion-llm mcp` loads, so plain commands stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def serve(root: Path | None, today: str | None, json_: bool) -> int:
    """Start the server for the project at `root` (the fast path's target, and the command's)."""
    from legion_llm.app.context import common
    from legion_llm.mcp.frontdesk import serve_with_front_desk

    c = common(root, today, json_)
    serve_with_front_desk(
        c.root, c.today if today is not None else None, root_given=root is not None
    )
    return 0
