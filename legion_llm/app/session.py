"""The LLM session a command runs with: which engine answers (from the options, the environment
and settings.json), its budget, and its usage; and the lazy session of a command that needs an
engine only for a close call.

Importing this module imports no anthropic, tiktoken or tenacity: `llm check` never does; the
other commands do when they call Claude.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from legion_llm.app.context import Common

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pydantic import BaseModel

    from legion_llm.llm.budget import UsageMeter
    from legion_llm.llm.config import LLMConfig
    from legion_llm.llm.engine import Answer, Engine, Notices, Request
    from legion_llm.llm.offline import OfflineRegistry
    from legion_llm.llm.sampling import Sampler
    from legion_llm.memory.knowledge.store import Decide
    from legion_llm.memory.signatures.match import Match

T = TypeVar("T", bound="BaseModel")

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
    """Build the engine for an LLM command from its options (notices go to `c.notify` at once).
    Inside the MCP server (`mcp` given) the order is the server's: an API key, else the client's
    model by sampling, else offline. Every engine's requests are redacted as settings.json
    memory.redact says."""
    from legion_llm.llm.engine import Notices
    from legion_llm.llm.factory import select_engine
    from legion_llm.memory.redact import project_redactor

    config, warnings = resolve_config(c, engine, model, max_cost, price, in_mcp=mcp is not None)
    held: list[str] = []  # what choosing the engine noticed (no key: offline) waits for an ask
    notices, redactor = Notices(held.append), project_redactor(c.root)
    if mcp is not None:
        from legion_llm.llm.sampling import select_mcp_engine

        chosen = select_mcp_engine(config.engine, config, sampler=mcp.sampler, registry=registry,
                                   notices=notices, redactor=redactor)  # fmt: skip
    else:
        chosen = select_engine(config.engine, config, registry=registry, notices=notices,
                               redactor=redactor)  # fmt: skip
    notices.sink = c.notify  # from now on a notice (a fallback, a refusal) is said as it happens
    notices.messages = [text for text in notices.messages if text not in held]
    return LLMSession(AnnouncingEngine(chosen, held) if held else chosen, config, warnings, verbose)


class AnnouncingEngine:
    """The chosen engine, whose choice is announced when it is first asked: a command that ends
    before any engine is asked (a refusal, a match answered from stored knowledge) says nothing
    of engines, and one that asks says which engine answers, once, before it answers. The rest
    is the engine's own."""

    def __init__(self, engine: Engine, held: list[str]) -> None:
        self.engine = engine
        self.held = held
        self.meter: UsageMeter = engine.meter
        self.notices: Notices = engine.notices

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def model(self) -> str | None:
        return self.engine.model

    def __getattr__(self, name: str) -> Any:  # what an engine has besides the seam (`primary`)
        return getattr(self.engine, name)

    def announce(self) -> None:
        held, self.held = self.held, []
        for text in held:
            self.notices.add(text)

    def ask(
        self,
        schema: type[T],
        prompt_name: str,
        variables: Mapping[str, Any],
        *,
        context: Any = None,
        max_tokens: int | None = None,
        expected_output_tokens: int | None = None,
    ) -> Answer[T]:
        self.announce()
        return self.engine.ask(schema, prompt_name, variables, context=context,
                               max_tokens=max_tokens,
                               expected_output_tokens=expected_output_tokens)  # fmt: skip

    def answer(self, request: Request[T]) -> Answer[T]:
        self.announce()
        return self.engine.answer(request)

    def input_budget(self, max_tokens: int | None = None) -> int | None:
        return self.engine.input_budget(max_tokens)


@dataclass(frozen=True)
class McpClient:
    """What the MCP server knows of its client: a sampler when it declared sampling."""

    sampler: Sampler | None = None


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


def display_url(url: str) -> str:
    """A URL without any user:password part."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def usage_lines(usage: dict[str, Any], verbose: bool = False) -> list[str]:
    """The usage line of an LLM command, when it says something: an engine other than offline
    answered or a model was called, or --verbose asked for it (a plain offline run is free and
    called nothing, so it says nothing)."""
    if verbose or usage.get("engine") != "offline" or usage.get("calls"):
        return [usage_line(usage)]
    return []


def usage_line(usage: dict[str, Any]) -> str:
    """The usage line: engine, calls, tokens, estimated and avoided cost."""
    cached = usage.get("cache_read_input_tokens", 0)
    avoided = usage.get("avoided_cost_usd", 0.0)
    return (
        f"Engine {usage['engine']}: {usage['calls']} Claude call(s), {usage['offline_calls']} "
        f"offline, {usage['input_tokens']} in / {usage['output_tokens']} out tokens"
        + (f" ({cached} more read from the cache)" if cached else "")
        + f", about ${usage['estimated_cost_usd']:.4f}"
        + (f" (${avoided:.4f} avoided)" if avoided > 0 else "")
    )
