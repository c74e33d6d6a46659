"""The dependency direction of ARCHITECTURE.md, checked with ast."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "legion_llm"
HEAVY = ("anthropic", "tiktoken", "tenacity")


def imports(path: Path) -> list[tuple[str, bool]]:
    """(module, is_top_level) for every import in the file."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, id(node) in top))
    return found


def test_memory_never_imports_llm_pipeline_or_heavy_libraries() -> None:
    for path in (PACKAGE / "memory").rglob("*.py"):
        for module, _ in imports(path):
            assert not module.startswith(
                ("legion_llm.llm", "legion_llm.pipeline", "legion_llm.cli", *HEAVY)
            ), (path, module)


def test_heavy_libraries_only_inside_llm() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "llm" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for module, _ in imports(path):
            assert not module.startswith(HEAVY), (path, module)


def test_nothing_imports_the_cli() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in ("cli", "mcp", "__main__.py"):
            continue
        for module, _ in imports(path):
            assert not module.startswith("legion_llm.cli"), (path, module)
