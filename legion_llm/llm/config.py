"""LLM settings: flags > environment > settings.json `memory.llm` > defaults, resolved once.

settings.json is the project's over the user's own (legion_llm/config.py); `claude_cli` and
`base_url` are taken from a project's file only when the user trusted the project (`legion-llm
trust`): a cloned repository must not choose the program run as `claude` nor the host the key is
sent to.

settings.json (every key optional):

    {"memory": {"llm": {
        "engine": "auto",              # auto | anthropic | claude-code | sampling | offline
                                       #   (sampling: inside `legion-llm mcp`)  env LEGION_LLM_ENGINE
        "model": "claude-haiku-5-5",   # see pricing.DEFAULT_MODEL          env LEGION_LLM_MODEL
        "price": null,                 # "IN/OUT" USD per MTok (unknown model)  env LEGION_LLM_PRICE
        "max_tokens": 4096,            # output tokens per call            env LEGION_LLM_MAX_TOKENS
        "stall_timeout_s": 30,         # no token for this long: retry      env LEGION_LLM_STALL_TIMEOUT
        "timeout_s": 600,              # one streamed attempt, at most      env LEGION_LLM_TIMEOUT
        "deadline_s": 180,             # no retry starts after this         env LEGION_LLM_DEADLINE
        "max_retry_sleep_s": 60,       # cap on one wait (retry-after too)  env LEGION_LLM_MAX_RETRY_SLEEP
        "max_attempts": 4,             # HTTP attempts per call             env LEGION_LLM_MAX_ATTEMPTS
        "max_cost_usd": null,          # never pass this (USD per run)      env LEGION_LLM_MAX_COST
        "max_input_tokens": null,      # lower the model's input budget     env LEGION_LLM_MAX_INPUT_TOKENS
        "base_url": null,              # proxy or gateway                   env ANTHROPIC_BASE_URL
        "fallback_offline": true,      # use the offline step when Claude fails  env LEGION_LLM_FALLBACK
        "structured_output": "auto",   # auto | tool | json_schema         env LEGION_LLM_STRUCTURED
        "effort": "auto",              # auto (per step) | low .. max       env LEGION_LLM_EFFORT
        "count_tokens": true,          # exact counts from the API first    env LEGION_LLM_COUNT_TOKENS
        "claude_cli": null             # the `claude` executable (default: PATH)  env LEGION_LLM_CLAUDE
    }}}

Requests are streamed: an attempt ends when no token arrives for `stall_timeout_s` (then it is
retried), or at `timeout_s` even while tokens still arrive (a server that drips forever).

A bad value in settings.json gives a warning and the default; a bad value in the environment or
on the command line is a UsageError. The API key is read from ANTHROPIC_API_KEY (or
ANTHROPIC_AUTH_TOKEN) only, never from settings.json, and is never printed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from legion_llm.errors import UsageError
from legion_llm.llm.pricing import DEFAULT_MODEL, parse_price
from legion_llm.llm.scrub import KEY_VARIABLES, remember

ENGINE_CHOICES = ("auto", "anthropic", "claude-code", "sampling", "offline")
STRUCTURED_CHOICES = ("auto", "tool", "json_schema")
EFFORT_CHOICES = ("auto", "low", "medium", "high", "xhigh", "max")
DEFAULT_BASE_URL = "https://api.anthropic.com"


@dataclass(frozen=True)
class LLMConfig:
    engine: str = "auto"
    model: str = DEFAULT_MODEL
    price: tuple[float, float] | None = None
    max_tokens: int = 4096
    stall_timeout_s: float = 30.0
    timeout_s: float = 600.0
    deadline_s: float = 180.0
    max_retry_sleep_s: float = 60.0
    max_attempts: int = 4
    max_cost_usd: float | None = None
    max_input_tokens: int | None = None
    base_url: str | None = None
    fallback_offline: bool = True
    structured_output: str = "auto"
    effort: str = "auto"
    count_tokens: bool = True
    claude_cli: str | None = None
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    warnings: tuple[str, ...] = ()

    @property
    def effective_base_url(self) -> str:
        return self.base_url or DEFAULT_BASE_URL


class Secret:
    """A string that never shows itself in repr, str, logs or JSON."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__


@dataclass(frozen=True)
class Credential:
    """Which variable holds the key or token; `secret` never prints."""

    variable: str
    secret: Secret

    @property
    def kind(self) -> str:
        return "api_key" if self.variable == "ANTHROPIC_API_KEY" else "auth_token"


def find_credential(env: Mapping[str, str] | None = None) -> Credential | None:
    """ANTHROPIC_API_KEY, else ANTHROPIC_AUTH_TOKEN; an empty value counts as not set. The value
    is remembered by the scrub, so no message that echoes it leaves the process."""
    env = os.environ if env is None else env
    for variable in KEY_VARIABLES:
        value = env.get(variable, "").strip()
        if value:
            remember(value)
            return Credential(variable, Secret(value))
    return None


def _choice(options: tuple[str, ...]) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in options:
            return value.strip().lower()
        raise ValueError(f"must be one of {', '.join(options)}")

    return parse


def _text(value: object) -> object:
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError("must be a non-empty string")


def _number(
    kind: type, minimum: float, maximum: float, *, exclusive: bool = False
) -> Callable[[object], object]:
    """A finite number in [minimum, maximum] (above minimum when `exclusive`): `nan`, `inf`,
    `1e308` are refused as any other bad value, so no bound can be removed by a number."""
    what = "an integer" if kind is int else "a number"
    bound = f"> {minimum:g}" if exclusive else f">= {minimum:g}"

    def parse(value: object) -> object:
        try:
            if isinstance(value, bool) or value is None:
                raise ValueError
            number = kind(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"must be {what} {bound}") from None
        if (number <= minimum) if exclusive else (number < minimum):
            raise ValueError(f"must be {what} {bound}")
        if not math.isfinite(number) or number > maximum:
            raise ValueError(f"must be a finite {what[3:] if kind is int else 'number'} "
                             f"{bound} and at most {maximum:g}")  # fmt: skip
        return number

    return parse


def _flag(value: object) -> object:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (
        "1",
        "true",
        "yes",
        "on",
        "0",
        "false",
        "no",
        "off",
    ):
        return value.strip().lower() in ("1", "true", "yes", "on")
    raise ValueError("must be true or false")


def _price(value: object) -> object:
    """`"3/15"`, `[3, 15]` or `{"input": 3, "output": 15}` -> (3.0, 15.0)."""
    if isinstance(value, Mapping) and set(value) == {"input", "output"}:
        value = f"{value['input']}/{value['output']}"
    elif isinstance(value, list | tuple) and len(value) == 2:
        value = f"{value[0]}/{value[1]}"
    if not isinstance(value, str):
        raise ValueError("must be IN/OUT, USD per million input and output tokens (e.g. 3/15)")
    return parse_price(value)


def _optional(parse: Callable[[object], object]) -> Callable[[object], object]:
    def wrapped(value: object) -> object:
        return None if value is None else parse(value)

    return wrapped


# the largest value each bound takes from anyone (flag, environment, either settings file): a
# bound past these is no bound (a day for one request, 100 attempts, $1M a run)
MAXIMA: dict[str, float] = {
    "max_tokens": 1_000_000,
    "stall_timeout_s": 3_600,
    "timeout_s": 86_400,
    "deadline_s": 86_400,
    "max_retry_sleep_s": 3_600,
    "max_attempts": 100,
    "max_cost_usd": 1_000_000,
    "max_input_tokens": 100_000_000,
}

# field name -> (environment variable, parser)
FIELDS: dict[str, tuple[str, Callable[[object], object]]] = {
    "engine": ("LEGION_LLM_ENGINE", _choice(ENGINE_CHOICES)),
    "model": ("LEGION_LLM_MODEL", _text),
    "price": ("LEGION_LLM_PRICE", _optional(_price)),
    "max_tokens": ("LEGION_LLM_MAX_TOKENS", _number(int, 1, MAXIMA["max_tokens"])),
    "stall_timeout_s": (
        "LEGION_LLM_STALL_TIMEOUT",
        _number(float, 0, MAXIMA["stall_timeout_s"], exclusive=True),
    ),
    "timeout_s": ("LEGION_LLM_TIMEOUT", _number(float, 0, MAXIMA["timeout_s"], exclusive=True)),
    "deadline_s": ("LEGION_LLM_DEADLINE", _number(float, 0, MAXIMA["deadline_s"], exclusive=True)),
    "max_retry_sleep_s": (
        "LEGION_LLM_MAX_RETRY_SLEEP",
        _number(float, 0, MAXIMA["max_retry_sleep_s"]),
    ),
    "max_attempts": ("LEGION_LLM_MAX_ATTEMPTS", _number(int, 1, MAXIMA["max_attempts"])),
    "max_cost_usd": ("LEGION_LLM_MAX_COST", _optional(_number(float, 0, MAXIMA["max_cost_usd"]))),
    "max_input_tokens": (
        "LEGION_LLM_MAX_INPUT_TOKENS",
        _optional(_number(int, 1, MAXIMA["max_input_tokens"])),
    ),
    "base_url": ("ANTHROPIC_BASE_URL", _optional(_text)),
    "fallback_offline": ("LEGION_LLM_FALLBACK", _flag),
    "structured_output": ("LEGION_LLM_STRUCTURED", _choice(STRUCTURED_CHOICES)),
    "effort": ("LEGION_LLM_EFFORT", _choice(EFFORT_CHOICES)),
    "count_tokens": ("LEGION_LLM_COUNT_TOKENS", _flag),
    "claude_cli": ("LEGION_LLM_CLAUDE", _optional(_text)),
}


def resolve_llm_config(
    settings_llm: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    settings_name: str = "settings.json",
    settings_sources: Mapping[str, str] | None = None,
) -> LLMConfig:
    """Resolve every field; `flags` values of None mean "not given on the command line".
    `settings_sources` names the file each `settings_llm` key came from (config.Settings.sources:
    "llm.model" -> "settings.json memory.llm.model"); without it, `settings_name`."""
    env = os.environ if env is None else env
    settings_llm = settings_llm or {}

    def where(key: str) -> str:
        return (settings_sources or {}).get(f"llm.{key}") or f"{settings_name} memory.llm.{key}"

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    warnings = [
        f"Warning: {where(key)} is not a known setting; ignored."
        for key in settings_llm
        if key not in FIELDS
    ]
    for name, (variable, parse) in FIELDS.items():
        flag = (flags or {}).get(name)
        if flag is not None:
            values[name], sources[name] = (
                _parse_or_usage(parse, flag, f"--{name.replace('_', '-')}"),
                "flag",
            )
        elif env.get(variable, "").strip():
            values[name], sources[name] = (
                _parse_or_usage(parse, env[variable], variable),
                f"env {variable}",
            )
        elif name in settings_llm:
            try:
                values[name], sources[name] = parse(settings_llm[name]), where(name)
            except ValueError as exc:
                sources[name] = "default"
                warnings.append(f"Warning: {where(name)} {exc}; using the default.")
        else:
            sources[name] = "default"
    return LLMConfig(**values, sources=sources, warnings=tuple(warnings))


def _parse_or_usage(parse: Callable[[object], object], value: object, where: str) -> object:
    try:
        return parse(value)
    except ValueError as exc:
        raise UsageError(f"{where} {exc} (got {value!r})") from None
