"""`legion-llm llm check|selftest`, and the options every LLM command shares.

Later LLM commands reuse `EngineOpt`, `ModelOpt`, `MaxCostOpt` and `open_session(...)`, and put
`session.usage()` in their --json data as `usage`. Importing this module imports no anthropic,
tiktoken or tenacity: `llm check` never does; the other commands do when they call Claude.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import typer

from legion_llm.cli.common import (
    CommandResult,
    Common,
    JsonOpt,
    RootOpt,
    TodayOpt,
    common,
    finish,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from legion_llm.config import Settings
    from legion_llm.llm.claude_code.cli import ClaudeCodeStatus
    from legion_llm.llm.config import LLMConfig
    from legion_llm.llm.engine import Engine
    from legion_llm.llm.offline import OfflineRegistry
    from legion_llm.llm.pricing import ModelInfo
    from legion_llm.llm.sampling import Sampler
    from legion_llm.memory.knowledge.store import Decide
    from legion_llm.memory.signatures.match import Match

app = typer.Typer(no_args_is_help=True, help="The LLM engine: check the set-up, run a self-test.")

# Exactly the --engine values of llm/config.py's ENGINE_CHOICES (docs/engines.md's table, and a
# test, hold them to it). The host route is not one of them: it is --prepare / --proposal.
ENGINE_HELP = (
    "auto, anthropic, claude-code, sampling (only inside `legion-llm mcp`) or offline; default: "
    "settings, else auto. To answer yourself, the host route: --prepare, then --proposal."
)
EngineOpt = Annotated[str | None, typer.Option("--engine", help=ENGINE_HELP)]
HOST_ROUTE = (
    "host is not an --engine value: the calling agent answers through the host route instead, "
    "--prepare then --proposal FILE (compact, distill, learnings extract)"
)


def check_engine(engine: str | None, *, in_mcp: bool = False) -> None:
    """Refuse an --engine value before anything runs, in one line: `host` points to the host
    route, `sampling` outside the MCP server says where it works, any other unknown value lists
    the choices. (A lazy session, such as `errors add`'s, would otherwise never look at it.)"""
    from legion_llm.errors import UsageError
    from legion_llm.llm.config import ENGINE_CHOICES

    if engine is None:
        return
    choice = engine.strip().lower()
    if choice == "host":
        raise UsageError(HOST_ROUTE)
    if choice not in ENGINE_CHOICES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINE_CHOICES)}, not {engine!r}")
    if choice == "sampling" and not in_mcp:
        raise UsageError(
            "--engine sampling works only inside `legion-llm mcp` (the client's model)"
        )


VerboseOpt = Annotated[
    bool,
    typer.Option(
        "--verbose", help="Also print the engine and usage line when the offline engine answered."
    ),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Claude model (default: settings, else built in).")
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option("--max-cost", min=0, help="Never spend more than USD in this run."),
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price",
        help="IN/OUT USD per million tokens, for a model the price table lacks (e.g. 3/15).",
    ),
]


@dataclass
class LLMSession:
    """The engine a command uses, its resolved config, and the warnings found on the way."""

    engine: Engine
    config: LLMConfig
    warnings: list[str] = field(default_factory=list)
    verbose: bool = False  # --verbose: the usage line even for a free offline run

    def usage(self) -> dict[str, Any]:
        return self.engine.meter.as_dict(self.engine.name)


def resolve_config(
    c: Common,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None = None,
    *,
    in_mcp: bool = False,
) -> tuple[LLMConfig, list[str]]:
    """Flags > env > settings.json memory.llm > defaults; returns the config and its warnings."""
    from legion_llm.llm.config import resolve_llm_config

    check_engine(engine, in_mcp=in_mcp)
    settings = c.settings()
    flags = {"engine": engine, "model": model, "max_cost_usd": max_cost, "price": price}
    config = resolve_llm_config(settings.llm, flags=flags, settings_name=c.paths.settings.name,
                                settings_sources=settings.sources)  # fmt: skip
    return config, [*settings.warnings, *config.warnings]


def open_session(
    c: Common,
    engine: str | None = None,
    model: str | None = None,
    max_cost: float | None = None,
    *,
    price: str | None = None,
    registry: OfflineRegistry | None = None,
    mcp: McpClient | None = None,
    verbose: bool = False,
) -> LLMSession:
    """Build the engine for an LLM command from its options (notices go to stderr at once, through
    the same printer as every other line). Inside the MCP server (`mcp` given) the order is the
    server's: an API key, else the client's model by sampling, else offline. Every engine's
    requests are redacted as settings.json memory.redact says."""
    from legion_llm.cli.render import stderr_line
    from legion_llm.llm.engine import Notices
    from legion_llm.llm.factory import select_engine
    from legion_llm.memory.redact import project_redactor

    config, warnings = resolve_config(c, engine, model, max_cost, price, in_mcp=mcp is not None)
    notices, redactor = Notices(stderr_line), project_redactor(c.root)
    if mcp is not None:
        from legion_llm.llm.sampling import select_mcp_engine

        picked = select_mcp_engine(config.engine, config, sampler=mcp.sampler, registry=registry,
                                   notices=notices, redactor=redactor)  # fmt: skip
        return LLMSession(picked, config, warnings, verbose)
    chosen = select_engine(config.engine, config, registry=registry, notices=notices,
                           redactor=redactor)  # fmt: skip
    return LLMSession(chosen, config, warnings, verbose)


@dataclass(frozen=True)
class McpClient:
    """What the MCP server knows of its client: a sampler when it declared sampling."""

    sampler: Sampler | None = None


def display_url(url: str) -> str:
    """A URL without any user:password part."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


@app.command("check")
def check(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show every engine, which one would be used and why, and the model. Calls no model."""
    c = common(root, today, json_)
    config, warnings = resolve_config(c, engine, model, max_cost, price)
    data, human = check_report(c, config, c.settings())
    code = 0 if data["ready"] else 1
    finish(CommandResult("llm check", data, human, warnings, code), c)


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
                   "--prepare / --proposal, or the MCP *_prepare and *_submit tools"},
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


@app.command("selftest")
def selftest(
    word: Annotated[str, typer.Option("--word", help="The word to echo.")] = "legion",
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Ask the engine one tiny structured question (prompts/selftest.md) and check the answer."""
    from legion_llm.llm.selftest import PROMPT, SelfTestReply, verify

    c = common(root, today, json_)
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
    finish(CommandResult("llm selftest", data, human, session.warnings, 0 if passed else 1), c)


class LazySession:
    """An LLM session opened only when a close call (the ambiguous band) needs a decision, so a
    plain store never pays for importing the SDK."""

    def __init__(
        self,
        c: Common,
        engine: str | None,
        model: str | None,
        max_cost: float | None,
        mcp: McpClient | None = None,
        price: str | None = None,
        verbose: bool = False,
    ) -> None:
        check_engine(engine, in_mcp=mcp is not None)
        self.options = (c, engine, model, max_cost)
        self.mcp = mcp
        self.price = price
        self.verbose = verbose
        self.session: LLMSession | None = None

    def open(self) -> LLMSession:
        if self.session is None:
            self.session = open_session(*self.options, mcp=self.mcp, price=self.price,
                                        verbose=self.verbose)  # fmt: skip
        return self.session

    def decider(self) -> Decide:
        def decide(signature: str, matches: Sequence[Match]) -> tuple[int | None, str]:
            from legion_llm.pipeline.errmatch import engine_decider

            return engine_decider(self.open().engine)(signature, matches)

        return decide
