"""Files shipped beside the code: prompts/ and the demo project (in a wheel they live inside the
package; in a source checkout they stay at the top of the repository)."""

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
