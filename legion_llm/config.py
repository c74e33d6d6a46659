"""Settings, read once per command: the user's own settings.json (userdirs.py), then the project's
settings.json over it. Invalid JSON means defaults plus one warning.

Keys (all optional, the same in both files):

    {"memory": {"enabled": true, "auto_prune": false, "prune_threshold": 200, "prune_age_days": 90,
                "redact": {"allow": ["AKIA[A-Z0-9]{12}EXAMPLE", "sk_test_\\w+"],
                           "enabled": true},
                "llm": {...}}}

`memory.llm` belongs to the LLM layer (legion_llm/llm/config.py reads it from `Settings.llm`).
`memory.redact` configures secret redaction (legion_llm/memory/redact/): `allow` lists regexes of
text to keep as written (the user's and the project's lists together); `enabled: false` writes
and sends secrets as given, with a warning each time. No command-line option or MCP argument
turns it off.

The trust boundary: a project's settings.json is a file of its repository, so of every clone of
a stranger's repository. Untrusted, it may only make things safer. The settings in SENSITIVE (a
program to run, a host to send the key to, a model or a price, weaker redaction) are honoured
from the user's own file and the environment always, and from a project's file only when the
user trusted that project (`legion-llm trust`, trust.py, which pins the file's bytes and those of
the program it names); the bounds in LOWER_ONLY (cost cap, token and attempt limits, time
bounds) an untrusted project may only lower, below the user's own or the default, with a finite
number. What an untrusted project may not set is ignored with one warning naming it. Every other
setting of the project applies as usual. `sources` says where each effective setting came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.memory.files import read_bytes, read_problem
from legion_llm.memory.redact.patterns import regex_problem
from legion_llm.memory.untrusted import UntrustedInputError, load_json
from legion_llm.userdirs import user_settings_path

# what each setting that an untrusted project may not set would let its repository do
SENSITIVE: dict[str, str] = {
    "llm.claude_cli": "chooses the program run as `claude`",
    "llm.base_url": "chooses the host your API key is sent to",
    "llm.model": "chooses the model you pay for",
    "llm.price": "sets the prices your cost cap counts with",
    "redact.allow": "keeps text that redaction would remove",
    "redact.enabled": "turns redaction off",
}
# Bounds on money and time an untrusted project may only tighten: its value is honoured when it
# is a finite number no higher than the user's own (else the default: None is no bound). These
# defaults are llm/config.py's LLMConfig's (tests/test_trust_boundary.py holds them equal).
LOWER_ONLY: dict[str, float | None] = {
    "llm.max_cost_usd": None,
    "llm.max_input_tokens": None,
    "llm.max_tokens": 4096,
    "llm.max_attempts": 4,
    "llm.stall_timeout_s": 30.0,
    "llm.timeout_s": 600.0,
    "llm.deadline_s": 180.0,
    "llm.max_retry_sleep_s": 60.0,
}


@dataclass(frozen=True)
class Settings:
    auto_prune: bool = False
    prune_threshold: int = 200
    prune_age_days: int = 90
    llm: dict[str, Any] = field(default_factory=dict)
    redact_allow: tuple[str, ...] = ()
    redact_enabled: bool = True
    warnings: tuple[str, ...] = ()
    # "llm.model", "redact.allow", "auto_prune", ... -> the file that set it (absent: the default)
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    ignored: tuple[str, ...] = ()  # SENSITIVE keys the untrusted project set, not honoured
    trusted: bool = False  # the project's settings are trusted (`legion-llm trust`)

    def source(self, key: str) -> str:
        return self.sources.get(key, "default")


_INT_KEYS = ("prune_threshold", "prune_age_days")


@dataclass
class _Layer:
    """What one settings file set: values by key ("llm.model", "redact.allow", ...)."""

    name: str
    values: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    data: bytes | None = None


def load_settings(path: Path, *, user_path: Path | None = None) -> Settings:
    """The project's settings.json at `path` over the user's own (`user_path`, default
    userdirs.user_settings_path()); a missing file gives the defaults silently."""
    user_file = user_settings_path() if user_path is None else user_path
    user = _layer(user_file, _shown(user_file), root=None)
    project = _layer(path, path.name, root=path.parent)
    weakening = [key for key in SENSITIVE if _weakens(key, project.values.get(key))]
    weakening += [
        key
        for key in LOWER_ONLY
        if key in project.values and _raises(project.values[key], _baseline(key, user.values))
    ]
    trusted = False
    if weakening:
        from legion_llm.trust import program_pin, settings_digest, trust_state

        program = program_pin(project.values.get("llm.claude_cli"))
        trusted = trust_state(path.parent, settings_digest(project.data), program).trusted
    ignored = () if trusted else tuple(weakening)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer in (user, project):
        for key, value in layer.values.items():
            if key in ignored and layer is project:
                continue
            if key == "redact.allow" and key in values:
                value = (*values[key], *value)  # both lists apply
            values[key], sources[key] = value, f"{layer.name} memory.{key}"
    warnings = [*user.warnings, *project.warnings]
    if ignored:
        warnings.append(untrusted_warning(path.name, ignored))
    llm = {key[4:]: value for key, value in values.items() if key.startswith("llm.")}
    return Settings(
        auto_prune=values.get("auto_prune", False),
        prune_threshold=values.get("prune_threshold", 200),
        prune_age_days=values.get("prune_age_days", 90),
        llm=llm,
        redact_allow=tuple(values.get("redact.allow", ())),
        redact_enabled=values.get("redact.enabled", True),
        warnings=tuple(warnings),
        sources=sources,
        ignored=ignored,
        trusted=trusted,
    )


def project_sensitive(path: Path) -> tuple[dict[str, Any], str, dict[str, str] | None]:
    """What the project's settings.json at `path` sets of SENSITIVE and of LOWER_ONLY (what
    trusting it would honour), the digest a trust record pins (of the very bytes read), and the
    pin of the program its `memory.llm.claude_cli` names (trust.program_pin), if it names one."""
    from legion_llm.trust import program_pin, settings_digest

    layer = _layer(path, path.name, root=path.parent)
    found = {key: layer.values[key] for key in SENSITIVE if _weakens(key, layer.values.get(key))}
    found.update((key, layer.values[key]) for key in LOWER_ONLY if key in layer.values)
    program = program_pin(layer.values.get("llm.claude_cli"))
    return found, settings_digest(layer.data), program


def describe(key: str) -> str:
    """What a setting an untrusted project may not set (or only lower) would let it do."""
    if key in SENSITIVE:
        return SENSITIVE[key]
    bound = LOWER_ONLY.get(key)
    limit = "none" if bound is None else f"{bound:g}"
    return f"above your own bound (default {limit}) or to anything but a finite number"


def untrusted_warning(name: str, keys: tuple[str, ...]) -> str:
    what = "; ".join(f"memory.{key} {describe(key)}" for key in keys)
    return (
        f"Warning: {name} of this project is not trusted, so it may not set {what}: ignored. "
        "If you trust this project, run `legion-llm trust`; or set it in your own "
        f"{_shown(user_settings_path())}."
    )


def finite_number(value: Any) -> float | None:
    """A setting's value as a finite number (a JSON number or a numeric string), else None."""
    import math

    if isinstance(value, bool):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _baseline(key: str, user: Mapping[str, Any]) -> float | None:
    """The bound a project value is held to: the user's own, else the default (None: none)."""
    if key in user and user[key] is not None:
        own = finite_number(user[key])
        if own is not None:
            return own
    return LOWER_ONLY[key]


def _raises(value: Any, baseline: float | None) -> bool:
    """Would this project value loosen the bound (or is it no finite number at all)?"""
    if value is None:  # null: no bound
        return baseline is not None
    number = finite_number(value)
    return number is None or (baseline is not None and number > baseline)


def _weakens(key: str, value: Any) -> bool:
    """Would this project value do what SENSITIVE says? (`enabled: true` or `allow: []` do not.)"""
    if key == "redact.enabled":
        return value is False
    if key == "redact.allow":
        return bool(value)
    return value is not None


def _shown(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def _layer(path: Path, name: str, *, root: Path | None) -> _Layer:
    layer = _Layer(name)
    try:
        # never blocks on a FIFO; the project's file never leaves its root
        layer.data = read_bytes(path, root=root, contained=root is not None)
    except OSError as exc:
        layer.warnings.append(f"Warning: {name} {read_problem(exc)}; using defaults.")
        return layer
    if layer.data is None:
        return layer
    try:
        raw = load_json(layer.data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        layer.warnings.append(f"Warning: {name} is not UTF-8 text; using defaults.")
        return layer
    except json.JSONDecodeError as exc:
        layer.warnings.append(f"Warning: {name} is not valid JSON ({exc.msg}); using defaults.")
        return layer
    except UntrustedInputError:  # a hostile file
        layer.warnings.append(f"Warning: {name} is nested too deeply; using defaults.")
        return layer
    memory = raw.get("memory") if isinstance(raw, dict) else None
    if isinstance(memory, dict):
        layer.values = _from_memory_section(memory, name, layer.warnings)
    return layer


def _from_memory_section(memory: dict[str, Any], name: str, warnings: list[str]) -> dict[str, Any]:
    """The valid settings this file gives, by key; a bad value is a warning and not set."""
    values: dict[str, Any] = {}
    if "auto_prune" in memory:
        if isinstance(memory["auto_prune"], bool):
            values["auto_prune"] = memory["auto_prune"]
        else:
            warnings.append(
                f"Warning: {name} memory.auto_prune must be true or false; using false."
            )
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
        values.update((f"llm.{key}", value) for key, value in llm.items())
    else:
        warnings.append(f"Warning: {name} memory.llm must be an object; using defaults.")
    values.update(_redact_section(memory.get("redact", {}), name, warnings))
    return values


def _redact_section(redact: Any, name: str, warnings: list[str]) -> dict[str, Any]:
    """`memory.redact`: allow (a list of regexes; a bad or unsafe one is dropped with a
    warning), enabled."""
    if not isinstance(redact, dict):
        warnings.append(f"Warning: {name} memory.redact must be an object; using defaults.")
        return {}
    values: dict[str, Any] = {}
    if "enabled" in redact:
        if isinstance(redact["enabled"], bool):
            values["redact.enabled"] = redact["enabled"]
        else:
            warnings.append(
                f"Warning: {name} memory.redact.enabled must be true or false; using true."
            )
    allow = redact.get("allow", [])
    if not isinstance(allow, list):
        warnings.append(f"Warning: {name} memory.redact.allow must be a list of regexes; ignored.")
        allow = []
    kept = []
    for index, pattern in enumerate(allow):
        problem = regex_problem(pattern)
        if problem is None:
            kept.append(pattern)
        else:
            warnings.append(f"Warning: {name} memory.redact.allow[{index}] {problem}; ignored.")
    if kept:
        values["redact.allow"] = tuple(kept)
    return values
