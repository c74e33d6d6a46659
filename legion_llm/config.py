"""settings.json `memory.*`, read once per command. Invalid JSON means defaults plus one warning.

Keys (all optional):

    {"memory": {"enabled": true, "auto_prune": false, "prune_threshold": 200, "prune_age_days": 90,
                "redact": {"allow": ["AKIA[A-Z0-9]{12}EXAMPLE", "sk_test_\\w+"],
                           "enabled": true},
                "llm": {...}}}

`memory.llm` belongs to the LLM layer (legion_llm/llm/config.py reads it from `Settings.llm`).
`memory.redact` configures secret redaction (legion_llm/memory/redact/): `allow` lists regexes of
text to keep as written; `enabled: false` (the project's own decision, in its own file) writes and
sends secrets as given, with a warning each time. No command-line option or MCP argument turns it off.
"""

from __future__ import annotations

import json
import re
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
    redact_allow: tuple[str, ...] = ()
    redact_enabled: bool = True
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
    except RecursionError:  # a hostile file: the decoder recurses per level
        return Settings(warnings=(f"Warning: {path.name} is nested too deeply; using defaults.",))
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
    values.update(_redact_section(memory.get("redact", {}), name, warnings))
    return Settings(**values, warnings=tuple(warnings))


def _redact_section(redact: Any, name: str, warnings: list[str]) -> dict[str, Any]:
    """`memory.redact`: allow (a list of regexes; a bad one is dropped with a warning), enabled."""
    if not isinstance(redact, dict):
        warnings.append(f"Warning: {name} memory.redact must be an object; using defaults.")
        return {}
    values: dict[str, Any] = {}
    enabled = redact.get("enabled", True)
    if isinstance(enabled, bool):
        values["redact_enabled"] = enabled
    else:
        warnings.append(f"Warning: {name} memory.redact.enabled must be true or false; using true.")
    allow = redact.get("allow", [])
    if not isinstance(allow, list):
        warnings.append(f"Warning: {name} memory.redact.allow must be a list of regexes; ignored.")
        allow = []
    kept = []
    for index, pattern in enumerate(allow):
        problem = _regex_problem(pattern)
        if problem is None:
            kept.append(pattern)
        else:
            warnings.append(f"Warning: {name} memory.redact.allow[{index}] {problem}; ignored.")
    values["redact_allow"] = tuple(kept)
    return values


def _regex_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str) or not pattern:
        return "must be a non-empty string"
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"is not a valid regular expression ({exc})"
    return None
