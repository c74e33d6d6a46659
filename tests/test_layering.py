"""The dependency direction, read from every import of every module (top level, inside a function,
under TYPE_CHECKING alike), with no module exempted:

    core (memory/ and the shared modules beside it: errors, config, project, ...)
      < llm/ < pipeline/ < evals/ < app/ < cli/, mcp/ < entry.py (the program)

A module imports only from its own layer or from layers below it; cli/ and mcp/ never import each
other (entry.py, the one module above both, plugs the MCP server's command into the command line);
and no two modules import each other, however long the way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "legion_llm"
HEAVY = ("anthropic", "tiktoken", "tenacity")
LAYERS = {"core": 1, "llm": 2, "pipeline": 3, "evals": 4, "app": 5, "cli": 6, "mcp": 6, "entry": 7}
FRONT_ENDS = {"cli", "mcp"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path) -> list[str]:
    """Every module this file imports (`from a.b import c` is a.b, or a.b.c when c is a module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names
                      if is_module(f"{node.module}.{a.name}")]  # fmt: skip
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules and m != name}
            for name, path in modules.items()}  # fmt: skip


def layer(module: str) -> str:
    """`legion_llm.app.commands.phases` -> app; the package's own shared modules -> core."""
    parts = module.split(".")
    first = parts[1] if len(parts) > 1 else ""
    if first == "__main__":
        return "entry"
    return first if first in LAYERS else "core"


def test_each_layer_imports_only_its_own_and_the_layers_below() -> None:
    wrong = [f"{a} ({layer(a)}) imports {b} ({layer(b)})"
             for a, targets in sorted(graph().items()) for b in sorted(targets)
             if LAYERS[layer(b)] > LAYERS[layer(a)]
             or (layer(a) != layer(b) and {layer(a), layer(b)} <= FRONT_ENDS)]  # fmt: skip
    assert wrong == []


def test_no_two_modules_import_each_other_however_long_the_way_round() -> None:
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan: each strongly connected set of modules
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert circles == []


def test_the_graph_sees_a_function_level_and_a_type_checking_import() -> None:
    """The reader the two tests above rely on: lazy and TYPE_CHECKING imports are edges."""
    edges = graph()
    assert "legion_llm.mcp.command" in edges["legion_llm.entry"]  # inside a function
    assert "legion_llm.llm.engine" in edges["legion_llm.app.session"]  # under TYPE_CHECKING


def test_memory_never_imports_heavy_libraries() -> None:
    for path in (PACKAGE / "memory").rglob("*.py"):
        for module in imports(path):
            assert not module.startswith(HEAVY), (path, module)


def test_heavy_libraries_only_inside_llm() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "llm" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for module in imports(path):
            assert not module.startswith(HEAVY), (path, module)
