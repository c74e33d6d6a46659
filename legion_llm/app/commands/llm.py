"""`llm check`: every engine, which one would be used and why, the model, its price and limits,
the settings; and the self-test's question. Calls no model (check) or one tiny one (selftest)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult
from legion_llm.app.session import display_url, open_session

if TYPE_CHECKING:
    from legion_llm.config import Settings
    from legion_llm.llm.claude_code.cli import ClaudeCodeStatus
    from legion_llm.llm.config import LLMConfig
    from legion_llm.llm.pricing import ModelInfo


def check_result(
    c: Common, engine: str | None, model: str | None, max_cost: float | None, price: str | None
) -> CommandResult:
    """`llm check`: exit status 1 when the engine asked for could not answer here."""
    from legion_llm.app.session import resolve_config

    config, warnings = resolve_config(c, engine, model, max_cost, price)
    data, human = check_report(c, config, c.settings())
    return CommandResult("llm check", data, human, warnings, 0 if data["ready"] else 1)


def selftest_result(
    c: Common,
    word: str,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None,
) -> CommandResult:
    """`llm selftest`: one tiny structured question to the engine, and whether it answered it."""
    from legion_llm.llm.selftest import PROMPT, SelfTestReply, verify

    session = open_session(c, engine, model, max_cost, price=price)
    answer = session.engine.ask(SelfTestReply, PROMPT, {"word": word})
    passed = verify(word, answer.output)
    data = {
        "passed": passed,
        "output": answer.output.model_dump(),
        **answer.provenance(),
        "notices": list(session.engine.notices.messages),
        "usage": session.usage(),
    }
    usage = data["usage"]
    human = (
        f"selftest {'passed' if passed else 'FAILED'}: engine {answer.engine}, "
        f"model {answer.model or '-'}, prompt sha256 {answer.prompt_sha256[:12]}; "
        f"{usage['calls']} call(s), {usage['input_tokens']} in / {usage['output_tokens']} out "
        f"tokens, about ${usage['estimated_cost_usd']:.4f}"
    )
    return CommandResult("llm selftest", data, human, session.warnings, 0 if passed else 1)


def check_report(c: Common, config: LLMConfig, settings: Settings) -> tuple[dict[str, Any], str]:
    from legion_llm.llm.budget import UsageMeter, input_budget
    from legion_llm.llm.claude_code.cli import probe
    from legion_llm.llm.config import find_credential
    from legion_llm.resources import prompts_dir

    credential = find_credential(os.environ)
    code = probe(config)  # `claude --version`, `--help`, `auth status`: never a model call
    selected, reason, problems = _selection(config.engine, credential is not None, code)
    info, unknown = _model(config)
    if unknown is not None:  # the Claude API engine refuses it; other engines may not need a price
        problems.append(f"error: {unknown}" if selected == "anthropic" else f"note: {unknown}")
    folder = prompts_dir()
    prompts = sorted(p.stem for p in folder.glob("*.md") if p.stem != "README")
    data: dict[str, Any] = {
        "engine": {"requested": config.engine, "source": config.sources.get("engine"),
                   "selected": selected, "reason": reason},
        "engines": engines_report(credential is not None, code),
        "model": {"name": config.model, "source": config.sources.get("model"),
                  "known": info.known, "price": None if unknown else _price(info, config),
                  "structured_output": _mode(config, info.structured),
                  "context_tokens": info.context_tokens, "cache_min_tokens": info.cache_min_tokens,
                  "thinking": info.thinking, "effort": config.effort if info.effort else None,
                  "input_budget_tokens": input_budget(info, config.max_tokens,
                                                      config.max_input_tokens)},
        "credential": {"configured": credential is not None,
                       "variable": credential.variable if credential else None},
        "base_url": {"url": display_url(config.effective_base_url),
                     "source": config.sources.get("base_url")},
        "settings": settings_report(c, settings),
        "claude_cli": {"value": config.claude_cli, "source": config.sources.get("claude_cli")},
        "redact": {"enabled": {"value": settings.redact_enabled,
                               "source": settings.source("redact.enabled")},
                   "allow": {"patterns": len(settings.redact_allow),
                             "source": settings.source("redact.allow")}},
        "limits": _limits(config),
        "prompts": {"dir": str(folder), "names": prompts},
        "api_called": False,
        "ready": not any(p.startswith("error:") for p in problems),
        "problems": problems,
        "usage": UsageMeter(model=None if selected in ("offline", "none") else config.model).as_dict(selected),
    }  # fmt: skip
    return data, _human(data)


def settings_report(c: Common, settings: Settings) -> dict[str, Any]:
    """Both settings files, whether the project is trusted, and what of it was ignored."""
    from legion_llm.userdirs import user_settings_path

    user = user_settings_path()
    return {"path": str(c.paths.settings), "exists": c.paths.settings.is_file(),
            "user_path": str(user), "user_exists": user.is_file(), "trusted": settings.trusted,
            "ignored": [f"memory.{key}" for key in settings.ignored]}  # fmt: skip


def _model(config: LLMConfig) -> tuple[ModelInfo, str | None]:
    """The model's row, or a stand-in with no prices and why the model would be refused."""
    from legion_llm.llm.errors import UnknownModelError
    from legion_llm.llm.pricing import model_info

    try:
        return model_info(config.model, config.price), None
    except UnknownModelError as exc:
        return model_info(config.model, (0.0, 0.0)), exc.message


def _price(info: ModelInfo, config: LLMConfig) -> dict[str, Any]:
    rates = info.rates
    return {"input_per_mtok": rates.input, "output_per_mtok": rates.output,
            "cache_write_per_mtok": rates.cache_write, "cache_read_per_mtok": rates.cache_read,
            "source": config.sources.get("price") if config.price else "price table"}  # fmt: skip


def _selection(requested: str, has_key: bool, code: ClaudeCodeStatus) -> tuple[str, str, list[str]]:
    """(selected engine, why, problems) as select_engine would decide, without a model call."""
    if requested == "offline":
        return "offline", "--engine offline", []
    if requested == "anthropic" or (requested == "auto" and has_key):
        if has_key:
            return "anthropic", "a key or token is set", []
        problem = "error: --engine anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
        return "none", "no key or token is set", [problem]
    if code.available:
        how = f"Claude Code {code.version} is logged in ({code.auth_method or 'unknown method'})"
        return "claude-code", how if requested == "claude-code" else f"no key, and {how}", []
    if requested == "claude-code":
        return "none", code.problem or "", [f"error: --engine claude-code: {code.problem}"]
    why = f"no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, and Claude Code: {code.problem}"
    return "offline", why, []


def engines_report(has_key: bool, code: ClaudeCodeStatus) -> list[dict[str, Any]]:
    """Every engine, whether it could answer here, and why not."""
    key_reason = (
        "a key or token is set" if has_key else "no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
    )
    rows: list[dict[str, Any]] = [
        {"name": "anthropic", "available": has_key, "reason": key_reason},
    ]
    reason = code.problem or f"claude {code.version} at {code.path}, logged in ({code.auth_method})"
    rows.append({"name": "claude-code", "available": code.available, "reason": reason,
                 "cli": code.as_dict()})  # fmt: skip
    rows += [
        {"name": "sampling", "available": False,
         "reason": "only inside `legion-llm mcp`, when the MCP client declares sampling"},
        {"name": "host", "available": True,
         "reason": "a route, not an --engine value: the calling agent proposes through "
                   "--prepare / --proposal, or an MCP tool's engine=host then ticket and proposal"},
        {"name": "offline", "available": True, "reason": "always (deterministic, free)"},
    ]  # fmt: skip
    return rows


def _mode(config: LLMConfig, default: str) -> str:
    return default if config.structured_output == "auto" else config.structured_output


def _limits(config: LLMConfig) -> dict[str, Any]:
    names = ("max_tokens", "stall_timeout_s", "timeout_s", "deadline_s", "max_retry_sleep_s",
             "max_attempts", "max_cost_usd", "max_input_tokens", "fallback_offline",
             "count_tokens")  # fmt: skip
    return {
        name: {"value": getattr(config, name), "source": config.sources.get(name)} for name in names
    }


def _human(data: dict[str, Any]) -> str:
    engine, model, key = data["engine"], data["model"], data["credential"]
    limits = {k: v["value"] for k, v in data["limits"].items()}
    cost = "none" if limits["max_cost_usd"] is None else f"${limits['max_cost_usd']:g}"
    lines = [
        f"engine:    {engine['selected']} (requested {engine['requested']}: {engine['reason']})",
        *[
            f"  {row['name']:<12} {_availability(row['available'])}: {row['reason']}"
            for row in data["engines"]
        ],
        f"model:     {model['name']} ({model['source']}; {model['structured_output']} output, "
        f"input budget {model['input_budget_tokens']} tokens)",
        f"price:     {_price_line(model['price'])}",
        f"key:       {'configured in ' + key['variable'] if key['configured'] else 'not configured'}",
        f"base URL:  {data['base_url']['url']} ({data['base_url']['source']})",
        f"settings:  {data['settings']['path']}"
        + ("" if data["settings"]["exists"] else " (not found: defaults)")
        + (" (trusted)" if data["settings"]["trusted"] else ""),
        f"           {data['settings']['user_path']} (yours"
        + ("" if data["settings"]["user_exists"] else ", not found")
        + ")",
        *[
            f"ignored:   {key} (this project is not trusted; `legion-llm trust` to honour it)"
            for key in data["settings"]["ignored"]
        ],
        f"claude:    {data['claude_cli']['value'] or 'claude on PATH'} "
        f"({data['claude_cli']['source']})",
        f"redaction: {'on' if data['redact']['enabled']['value'] else 'OFF'} "
        f"({data['redact']['enabled']['source']}), {data['redact']['allow']['patterns']} allow "
        f"pattern(s) ({data['redact']['allow']['source']})",
        f"limits:    max_tokens {limits['max_tokens']}, stall {limits['stall_timeout_s']:g} s, "
        f"attempt {limits['timeout_s']:g} s, "
        f"deadline {limits['deadline_s']:g} s, retry wait cap {limits['max_retry_sleep_s']:g} s, "
        f"{limits['max_attempts']} attempts, max cost {cost}",
        f"prompts:   {data['prompts']['dir']} ({len(data['prompts']['names'])})",
        *[f"problem:   {p.removeprefix('error: ')}" for p in data["problems"]],
        "No API call was made.",
    ]
    return "\n".join(lines)


def _price_line(price: dict[str, Any] | None) -> str:
    if price is None:
        return "unknown (not in the price table; give it with --price IN/OUT)"
    return (
        f"${price['input_per_mtok']:g} in / ${price['output_per_mtok']:g} out per million tokens "
        f"(cache write ${price['cache_write_per_mtok']:g}, read ${price['cache_read_per_mtok']:g}; "
        f"{price['source']})"
    )


def _availability(available: bool) -> str:
    return "available" if available else "unavailable"
