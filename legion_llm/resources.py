"""Files shipped beside the code: prompts/, the demo project, the eval definitions (evals/*.toml)
and the fixtures they read (in a wheel they live inside the package, pyproject.toml's
force-include; in a source checkout they stay at the top of the repository).

The eval definitions name their datasets relative to themselves (`../fixtures/phases`), so the
wheel keeps the two folders side by side under `_data/`, as they are in the repository."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def shipped(packaged_name: str, repo_path: str) -> Path:
    """The installed copy when present, else the repository's."""
    inside = _PACKAGE / packaged_name
    return inside if inside.exists() else _REPO / repo_path


def prompts_dir() -> Path:
    return shipped("_prompts", "prompts")


def demo_project_dir() -> Path:
    return shipped("_demo_project", "fixtures/demo-project")


def eval_definition(name: str) -> Path:
    """evals/<name>.toml: compaction, errors, learnings or distill."""
    return shipped(f"_data/evals/{name}.toml", f"evals/{name}.toml")
