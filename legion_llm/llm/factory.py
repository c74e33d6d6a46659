"""The engine factory: `select_engine` turns `--engine auto|anthropic|claude-code|offline` into
an engine (llm/engine.py has the seam and the offline and fallback engines; the Claude API and
Claude Code engines import it, so the factory that builds them sits above them all)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from legion_llm.errors import UsageError
from legion_llm.llm.budget import UsageMeter
from legion_llm.llm.config import ENGINE_CHOICES, LLMConfig, find_credential, resolve_llm_config
from legion_llm.llm.engine import Engine, FallbackEngine, Notices, OfflineEngine
from legion_llm.llm.errors import NoApiKeyError
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.memory.redact import Redactor

NO_KEY_NOTICE = (
    "notice: no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN is set and Claude Code cannot answer "
    "({reason}); using the offline engine"
)


def select_engine(
    choice: str | None = None,
    config: LLMConfig | None = None,
    *,
    env: Mapping[str, str] | None = None,
    registry: OfflineRegistry | None = None,
    notices: Notices | None = None,
    prompts_dir: Path | None = None,
    claude_options: Mapping[str, Any] | None = None,
    redactor: Redactor | None = None,
) -> Engine:
    """`offline` -> the offline engine. `anthropic` -> the Claude API, loud: no key is
    NoApiKeyError and a failing Claude ends the command. `claude-code` -> the user's Claude Code,
    loud: one that cannot answer is ClaudeCodeSetupError, one that fails mid-run ends the command
    (for both, an unusable answer is the offline engine's). `auto`, in order: the Claude API
    when a key or token is set, else a logged-in Claude Code, each with the offline fallback;
    else offline with one notice. An unknown model without prices is
    UnknownModelError for the Claude API either way."""
    config = config or resolve_llm_config(env=env)
    choice = (choice or config.engine).lower()
    if choice not in ENGINE_CHOICES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINE_CHOICES)}, not {choice!r}")
    meter = UsageMeter(max_cost_usd=config.max_cost_usd)
    shared: dict[str, Any] = {"meter": meter, "notices": notices or Notices(), "redactor": redactor,
                              "prompts_dir": prompts_dir}  # fmt: skip
    offline = OfflineEngine(registry, **shared)
    if choice == "offline":
        return offline
    if choice == "sampling":
        raise UsageError(
            "--engine sampling works only inside `legion-llm mcp` (the client's model)"
        )
    credential = find_credential(env)
    if choice == "claude-code" or (choice == "auto" and credential is None):
        return _claude_code_or_offline(config, env, offline, explicit=choice == "claude-code")
    if credential is None:
        raise NoApiKeyError(
            "--engine anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the environment"
        )
    from legion_llm.llm.claude_api.client import ClaudeEngine

    meter.model = config.model
    claude = ClaudeEngine(config, credential, **shared, **(claude_options or {}))
    if not config.fallback_offline:
        return claude
    return FallbackEngine(claude, offline, explicit=choice == "anthropic")


def _claude_code_or_offline(
    config: LLMConfig, env: Mapping[str, str] | None, offline: OfflineEngine, *, explicit: bool
) -> Engine:
    """The user's logged-in Claude Code, else offline with one notice. Explicit: a failing CLI
    ends the command, an unusable answer is the offline engine's (as for `anthropic`)."""
    from legion_llm.llm.claude_code.engine import claude_code_engine

    shared: dict[str, Any] = {"meter": offline.meter, "notices": offline.notices,
                              "redactor": offline.redactor}  # fmt: skip
    code, reason = claude_code_engine(
        config, env, explicit=explicit, prompts_dir=offline.prompts_dir, **shared
    )
    if code is None:
        offline.notices.add(NO_KEY_NOTICE.format(reason=reason))
        return offline
    offline.meter.model = config.model
    if not config.fallback_offline:
        return code
    return FallbackEngine(code, offline, explicit=explicit)
