"""Where `legion-llm eval ...` writes its JSON log: inside the project root, atomically."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from legion_llm.app.context import Common


def check_out(c: Common, out: Path | None) -> None:
    """Refuse an --out outside the root before the suite runs (a paid run must not lose its log)."""
    from legion_llm.memory.files import ensure_inside

    if out is not None:
        ensure_inside(out if out.is_absolute() else c.root / out, c.root)


def write_eval_log(
    c: Common, suite: str, engine: str, out: Path | None, log: dict[str, Any]
) -> Path:
    """`--out` (relative to the root), else eval-logs/<suite>-<engine>-<time>.json under the root.
    A path outside the root is refused like every other write; no key reaches the log."""
    from legion_llm.llm.scrub import scrub_data
    from legion_llm.memory.files import atomic_write

    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    path = out if out is not None else Path("eval-logs") / f"{suite}-{engine}-{stamp}.json"
    target = path if path.is_absolute() else c.root / path
    atomic_write(
        target, json.dumps(scrub_data(log), indent=2, ensure_ascii=False) + "\n", root=c.root
    )
    return target
