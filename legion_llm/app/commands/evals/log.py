"""Where `legion-llm eval ...` writes its JSON log: where --out says (a path relative to the
project root, or any absolute path: a log is the user's to place, a temporary folder included),
else eval-logs/ under the root; atomically either way."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from legion_llm.app.context import Common
from legion_llm.errors import InputError


def out_target(c: Common, out: Path | None) -> Path | None:
    """--out as the path the log goes to: relative to the root, `~` expanded; None without it."""
    if out is None:
        return None
    path = out.expanduser()
    return path if path.is_absolute() else c.root / path


def check_out(c: Common, out: Path | None) -> None:
    """Refuse, before the suite runs (a paid run must not lose its log), an --out the log could
    not be written to: a folder; outside the root, a file whose folder does not exist or cannot
    be written (under the root the folders are made, as for every memory file)."""
    target = out_target(c, out)
    if target is None:
        return
    if target.is_dir():
        raise InputError(f"--out {out} is a folder; name the log's file, e.g. {out}/eval.json")
    resolved = target.resolve()
    if resolved.is_relative_to(c.root.resolve()):
        return
    folder = resolved.parent
    if not folder.is_dir():
        raise InputError(f"--out {out}: the folder {folder} does not exist; nothing was run")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"--out {out}: the folder {folder} cannot be written; nothing was run")


def write_eval_log(
    c: Common, suite: str, engine: str, out: Path | None, log: dict[str, Any]
) -> Path:
    """`--out` (see `out_target`), else eval-logs/<suite>-<engine>-<time>.json under the root.
    A path under the root is written like every memory file (no link out of it followed); one
    the user named outside it, in its own folder. No key reaches the log."""
    from legion_llm.llm.scrub import scrub_data
    from legion_llm.memory.files import atomic_write

    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    named = out_target(c, out)
    target = named or c.root / "eval-logs" / f"{suite}-{engine}-{stamp}.json"
    root = c.root
    if named is not None and not named.resolve().is_relative_to(c.root.resolve()):
        check_out(c, out)  # a batch collected later: the folder may have gone since
        target = named.resolve()
        root = target.parent
    atomic_write(
        target, json.dumps(scrub_data(log), indent=2, ensure_ascii=False) + "\n", root=root
    )
    return target
