"""The MCP server: every tool of MemoryTools, PipelineTools and BatchTools, on stdio.

Each tool returns the object the matching `legion-llm ... --json` prints ({ok, command, data,
warnings}); a failure is a tool error carrying the command's one-line message, and the server keeps
serving. The project root is fixed at start; the working folder is set to it, so no relative path
in an argument can point anywhere else, and path-like arguments are checked against it.
"""

from __future__ import annotations

import inspect
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import legion_llm

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

INSTRUCTIONS = """\
legion-llm: the project's agent memory as markdown in git (.planning/memory/ for Legion,
.mission-control/memory/ for mission-control). memory_recall (outcomes, patterns, errors,
preferences, topic, learnings, or match: the known fix for a new error) and memory_summary
(briefing, signals) read; memory_store stores one record of any kind. Every tool returns the object
the matching `legion-llm ... --json` prints: {"ok", "command", "data", "warnings"}; lists are
concise unless detail=detailed. Missing memory is an empty result, never an error: when a call
fails, continue without it. Tools that rewrite or model-write (memory_prune, memory_scan,
phase_compact, memory_distill_patterns, memory_extract_learnings) preview unless apply=true.
With no API key, write the semantic part yourself: engine=host answers a request (instructions,
schema, inputs, ticket); call the same tool again with ticket, your proposal and apply=true, and it
is verified like any model's before it is written.
The project root is fixed when the server starts: {root}"""

# What each tool writes (tests/mcp/test_annotations.py runs each one and checks its hints):
# nothing; only new rows and files; or may change what is there (memory_store updates a failed
# fix and reinforces a learning, prune moves rows, scan redacts, compact replaces with force,
# extraction reinforces learnings, a batch's collect writes like compact).
READ_ONLY = frozenset({"memory_recall", "memory_summary", "phase_read"})
ADDITIVE = frozenset({"memory_distill_patterns"})
CALLS_CLAUDE = frozenset(
    {"memory_recall", "memory_store", "phase_compact", "memory_distill_patterns",
     "memory_extract_learnings", "phase_compact_batch"}
)  # fmt: skip


def tool_methods(toolbox: object) -> list[tuple[str, Any]]:
    """The public methods of a toolbox, in the order they are written."""
    found = inspect.getmembers(toolbox, inspect.ismethod)
    public = [(name, method) for name, method in found if not name.startswith("_")]
    return sorted(public, key=lambda item: item[1].__code__.co_firstlineno)


def description_of(method: Any) -> str:
    """A tool's docstring on one line: the runs of spaces and line breaks of its indentation
    collapsed (a client shows it as it comes)."""
    return " ".join((method.__doc__ or "").split())


def instructions_for(root: Path) -> str:
    """The server's instructions for the project at `root` (the handshake carries them)."""
    return INSTRUCTIONS.replace("{root}", str(root.resolve()))


def annotations_for(name: str) -> ToolAnnotations:
    """Hints for the client: reads, appends only, or may change existing lines; open world when
    a model may be called."""
    from mcp.types import ToolAnnotations

    read_only = name in READ_ONLY
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=None if read_only else name not in ADDITIVE,
        open_world_hint=name in CALLS_CLAUDE,
    )


def build_server(
    root: Path, *, today: date | None = None, root_given: bool = True
) -> MCPServer[Any]:
    """A server whose tools all work inside `root` (not started); `today`, when given, is the date
    of every call that passes none."""
    from legion_llm.mcp.arguments import server_class
    from legion_llm.mcp.params import bounded
    from legion_llm.mcp.runner import Runner
    from legion_llm.mcp.tools_batch import BatchTools
    from legion_llm.mcp.tools_memory import MemoryTools
    from legion_llm.mcp.tools_pipeline import PipelineTools

    runner = Runner(root, today=today, root_given=root_given)
    app: MCPServer[Any] = server_class()(
        "legion-llm",
        version=legion_llm.__version__,
        instructions=instructions_for(runner.root),
        log_level="WARNING",
    )
    toolboxes = (MemoryTools(runner), PipelineTools(runner), BatchTools(runner))
    names: set[str] = set()
    for toolbox in toolboxes:
        for name, method in tool_methods(toolbox):
            app.add_tool(bounded(method), name=name, description=description_of(method),
                         annotations=annotations_for(name))  # fmt: skip
            names.update(inspect.signature(method).parameters)
    runner.argument_names = frozenset(names)
    return app


def listed_tools(root: Path) -> list[dict[str, Any]]:
    """The `tools/list` answer's tools as the wire carries them (JSON names, no null fields)."""
    import anyio
    from mcp.client.client import Client

    async def listed() -> list[dict[str, Any]]:
        async with Client(build_server(root)) as client:
            tools = (await client.list_tools()).tools
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    return anyio.run(listed)
