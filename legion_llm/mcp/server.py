"""The MCP server: every tool of MemoryTools, KnowledgeTools, PipelineTools, HostTools and
BatchTools, on stdio.

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
.mission-control/memory/ for mission-control). Every tool returns the same JSON object as the
matching `legion-llm ... --json` command: {"ok", "command", "data", "warnings"}. Missing memory is
an empty result, never an error. Memory is an enhancement: when a call fails, continue without it.
With no API key, you can write the semantic part yourself: compact_prepare / distill_prepare /
learnings_extract_prepare return instructions, a JSON schema and the inputs; answer them and call
the matching *_submit tool, which verifies your answer like any model's before writing it.
The project root is fixed when the server starts: {root}"""

READ_ONLY = frozenset(
    {"outcomes_recall", "outcomes_agent_scores", "outcomes_archetypes", "briefing", "signals",
     "recall_topic", "patterns_recall", "errors_recall", "errors_match", "compact_suggest",
     "verify_compaction", "phase_context", "learnings_load", "compact_prepare", "distill_prepare",
     "learnings_extract_prepare", "batch_status", "preferences_recall"}
)  # fmt: skip
# Appends rows or new files only. learnings_add is not one: a stored title and body is reinforced
# in place. (tests/mcp/test_annotations.py runs each tool and checks it against its hints.)
ADDITIVE = frozenset(
    {"outcomes_add", "patterns_add", "preferences_add", "distill", "distill_submit"}
)
CALLS_CLAUDE = frozenset(
    {"errors_add", "errors_match", "compact", "distill", "learnings_extract", "compact_all",
     "batch_status", "batch_collect"}
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
    """Hints for the client: reads, appends only, or may change existing lines (prune moves rows,
    errors_add updates a fix, extract reinforces a file, compact --force replaces its output);
    open world when Claude may be called."""
    from mcp.types import ToolAnnotations

    read_only = name in READ_ONLY
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=None if read_only else name not in ADDITIVE,
        open_world_hint=name in CALLS_CLAUDE,
    )


def build_server(root: Path, *, today: date | None = None) -> MCPServer[Any]:
    """A server whose tools all work inside `root` (not started); `today`, when given, is the date
    of every call that passes none."""
    from legion_llm.mcp.arguments import server_class
    from legion_llm.mcp.params import bounded
    from legion_llm.mcp.runner import Runner
    from legion_llm.mcp.tools_batch import BatchTools
    from legion_llm.mcp.tools_host import HostTools
    from legion_llm.mcp.tools_knowledge import KnowledgeTools
    from legion_llm.mcp.tools_memory import MemoryTools
    from legion_llm.mcp.tools_pipeline import PipelineTools

    runner = Runner(root, today=today)
    app: MCPServer[Any] = server_class()(
        "legion-llm",
        version=legion_llm.__version__,
        instructions=instructions_for(runner.root),
        log_level="WARNING",
    )
    toolboxes = (
        MemoryTools(runner),
        KnowledgeTools(runner),
        PipelineTools(runner),
        HostTools(runner),
        BatchTools(runner),
    )
    names: set[str] = set()
    for toolbox in toolboxes:
        for name, method in tool_methods(toolbox):
            app.add_tool(bounded(method), name=name, description=description_of(method),
                         annotations=annotations_for(name))  # fmt: skip
            names.update(inspect.signature(method).parameters)
    runner.argument_names = frozenset(names)
    return app
