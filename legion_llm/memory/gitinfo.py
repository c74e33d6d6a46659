"""The one place that runs git."""

from __future__ import annotations

import subprocess
from pathlib import Path

UNKNOWN_BRANCH = "unknown"


def current_branch(root: Path) -> str:
    """`git branch --show-current` in `root`; "unknown" when git fails or HEAD is detached."""
    try:
        done = subprocess.run(
            ["git", "branch", "--show-current"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN_BRANCH
    name = done.stdout.strip() if done.returncode == 0 else ""
    return name or UNKNOWN_BRANCH


def head_commit(root: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
