"""settings.json `memory.*`, read once per command. Invalid JSON means defaults plus one warning.

Keys (all optional):

    {"memory": {"enabled": true, "auto_prune": false, "prune_threshold": 200, "prune_age_days": 90,
                "llm": {...}}}

`memory.llm` belongs to the LLM layer (legion_llm/llm/config.py reads it from `Settings.llm`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.memory.files import read_problem, read_text


@dataclass(frozen=True)
class Settings:
    auto_prune: bool = False
    prune_threshold: int = 200
    prune_age_days: int = 90
    llm: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


_INT_KEYS = ("prune_threshold", "prune_age_days")


def load_settings(path: Path) -> Settings:
    """Read `memory.*` from settings.json at `path`; a missing file gives the defaults silently."""
    try:
        text = read_text(path, root=path.parent)  # never blocks on a FIFO, never leaves the root
    except (OSError, UnicodeDecodeError) as exc:
        return Settings(warnings=(f"Warning: {path.name} {read_problem(exc)}; using defaults.",))
    if text is None:
        return Settings()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return Settings(
            warnings=(f"Warning: {path.name} is not valid JSON ({exc.msg}); using defaults.",)
        )
    memory = raw.get("memory") if isinstance(raw, dict) else None
    if not isinstance(memory, dict):
        return Settings()
    return _from_memory_section(memory, path.name)


def _from_memory_section(memory: dict[str, Any], name: str) -> Settings:
    warnings: list[str] = []
    values: dict[str, Any] = {}
    auto_prune = memory.get("auto_prune", False)
    if isinstance(auto_prune, bool):
        values["auto_prune"] = auto_prune
    else:
        warnings.append(f"Warning: {name} memory.auto_prune must be true or false; using false.")
    for key in _INT_KEYS:
        if key not in memory:
            continue
        value = memory[key]
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            values[key] = value
        else:
            default = getattr(Settings, key)
            warnings.append(
                f"Warning: {name} memory.{key} must be an integer >= 1; using {default}."
            )
    llm = memory.get("llm", {})
    if isinstance(llm, dict):
        values["llm"] = llm
    else:
        warnings.append(f"Warning: {name} memory.llm must be an object; using defaults.")
    return Settings(**values, warnings=tuple(warnings))
