"""What the MCP server's tool definitions cost a client's context: the `tools/list` answer's
JSON, its size, its tokens (cl100k, legion_llm/llm/tokens.py) and the tool count.

    .venv/bin/python benchmarks/bench_mcp_tools.py [--per-tool] [--json]

A client that loads tool definitions pays for all of them on every turn, so this is the figure
docs/mcp.md quotes and tests/mcp/test_tool_budget.py holds under its ceiling (12 tools,
4,000 tokens). `--per-tool` shows each tool's share, largest first.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def tools_list(root: Path) -> list[dict[str, Any]]:
    """The tools as the server sends them on the wire (JSON names, no null fields)."""
    from legion_llm.mcp.server import listed_tools

    return listed_tools(root)


def measure(root: Path) -> dict[str, Any]:
    from legion_llm.llm.tokens import count_tokens

    tools = tools_list(root)
    text = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)
    per_tool = {
        t["name"]: count_tokens(json.dumps(t, separators=(",", ":"), ensure_ascii=False))
        for t in tools
    }
    return {"tools": len(tools), "bytes": len(text.encode()), "tokens": count_tokens(text),
            "per_tool": per_tool}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-tool", action="store_true", help="each tool's tokens")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    found = measure(REPO / "fixtures" / "demo-project")
    if args.json:
        print(json.dumps(found))
        return 0
    print(f"tools/list: {found['tools']} tools, {found['bytes']:,} bytes, "
          f"{found['tokens']:,} tokens (cl100k)")  # fmt: skip
    if args.per_tool:
        for name, tokens in sorted(found["per_tool"].items(), key=lambda kv: -kv[1]):
            print(f"  {tokens:5,}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
