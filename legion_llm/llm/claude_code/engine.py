"""ClaudeCodeEngine: answers a Request with one `claude -p` run of the user's own Claude Code.

    claude -p --output-format json --json-schema SCHEMA --model M --tools ""
           --no-session-persistence --strict-mcp-config --settings ISOLATED
           --system-prompt SYSTEM [--max-budget-usd X]   < USER PROMPT

- Our system prompt replaces Claude Code's long default one (which is not billed); no tools; the
  session is not saved. The user's own set-up stays out of the call: no MCP server is started
  (`--strict-mcp-config` with no `--mcp-config`: their tools would be sent and billed, and
  callable), and the flag settings turn off hooks (a SessionStart or UserPromptSubmit hook runs
  commands and adds its output to the prompt) and any output style (2.1.3xx appends it to our
  system prompt); login and the rest of their settings apply as usual (measured with the real
  CLI, tests/llm/test_claude_code_real.py).
- The environment adds only what keeps the run small: no CLAUDE.md or auto-memory in the
  context, no title request, output capped at the call's max_tokens, the CLI's retries at
  `max_attempts - 1`, low effort unless the user set CLAUDE_CODE_EFFORT_LEVEL, and no prompt
  caching: the CLI writes a one-hour cache (2x the input price) that a one-shot call never
  reads; measured on the demo phase it cut the call's cost by a third
  (benchmarks/bench_engines.py), and even with one re-ask 2 x 1.0 is less than 2.0 + 0.1.
- No key of ours is passed: the CLI uses its own login (or whatever the user configured for it).
- `--max-budget-usd` is what is left of `--max-cost`; before a run the same worst-case check as
  the API engine's is made, and after it the CLI's `total_cost_usd` and token counts are recorded.
- An answer that does not validate is asked again once with the validation errors, as in
  claude_api/structured.py: the CLI checks the JSON schema itself and by default tries 5 times
  (5 paid calls for a model that cannot fill it); MAX_STRUCTURED_OUTPUT_RETRIES=2 makes that
  one re-ask, and ours covers what the schema cannot say. Every failure is one typed error
  (envelope.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from legion_llm.llm.budget import Usage, check_fits, input_budget
from legion_llm.llm.claude_api.request import expected_output
from legion_llm.llm.claude_api.structured import describe
from legion_llm.llm.claude_code.cli import CliOverflow, CliRun, CliTimeout, probe, run_cli
from legion_llm.llm.claude_code.envelope import (
    NO_OUTPUT,
    ClaudeCodeError,
    ClaudeCodeSetupError,
    raise_for_error,
    read_envelope,
    structured_output,
    usage_of,
)
from legion_llm.llm.config import LLMConfig
from legion_llm.llm.engine import Answer, EngineBase, Request
from legion_llm.llm.errors import InvalidOutputError, NoToolCallError
from legion_llm.llm.pricing import (
    MODELS,
    ModelInfo,
    call_cost_bound,
    estimate_cost,
    row_or_dearest,
)

T = TypeVar("T", bound=BaseModel)
Runner = Callable[..., CliRun]
SCHEMA_OVERHEAD_TOKENS = 600  # the CLI's own system line and StructuredOutput tool text
DEFAULT_ANSWER_TOKENS = 1024  # as the API engine's: a step that gives no estimate of its answer
STRUCTURED_ATTEMPTS = 2  # the CLI's own tries at filling the schema: one re-ask (its default 5)
ISOLATED_SETTINGS = json.dumps({"disableAllHooks": True, "outputStyle": "default"})


class ClaudeCodeEngine(EngineBase):
    name = "claude-code"

    def __init__(
        self,
        config: LLMConfig,
        cli: str,
        *,
        version: str | None = None,
        run: Runner = run_cli,
        env: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.cli = cli
        self.version = version
        self._run = run
        self._env = env

    def __repr__(self) -> str:
        return f"ClaudeCodeEngine(cli={self.cli!r}, model={self.config.model!r})"

    @property
    def model(self) -> str:
        return self.config.model

    def input_budget(self, max_tokens: int | None = None) -> int:
        limit = max_tokens or self.config.max_tokens
        return input_budget(self._info(), limit, self.config.max_input_tokens)

    def _info(self) -> ModelInfo:
        return row_or_dearest(self.model, self.config.price)

    def request_tokens(self, request: Request[Any]) -> int:
        schema = json.dumps(json_schema(request.schema), ensure_ascii=False)
        return self._estimate(request, request.prompt.full_user, schema)

    def _estimate(self, request: Request[Any], user: str, schema: str) -> int:
        """What one CLI run is checked at: the system prompt, stdin and schema, and the CLI's own."""
        text = "\n".join((request.prompt.system, user, schema))
        return self.estimate_tokens(text) + SCHEMA_OVERHEAD_TOKENS

    def answer(self, request: Request[T]) -> Answer[T]:
        schema = json.dumps(json_schema(request.schema), ensure_ascii=False)
        name = request.prompt.name
        first = self._ask_once(request, schema, request.prompt.full_user)
        output, error = _validate(first, request.schema)
        if output is None:
            again = (f"{request.prompt.full_user}\n\nYour previous answer did not match the schema:\n"
                     f"{error}\nAnswer again with the corrected structured output.")  # fmt: skip
            output, error = _validate(self._ask_once(request, schema, again), request.schema)
        if output is None:
            raise InvalidOutputError(
                f"Claude Code's answer to prompt {name!r} did not match "
                f"{request.schema.__name__} after one re-ask: {error}",
                data={"prompt": name, "validation_errors": error},
            )
        prompt = request.prompt
        return Answer(output, Usage(), prompt.name, prompt.sha256, self.name, self.model)

    def _ask_once(self, request: Request[Any], schema: str, user: str) -> object:
        """One CLI run: budget checks, the run, usage recorded, failures raised."""
        max_tokens = request.max_tokens or self.config.max_tokens
        estimate = self._estimate(request, user, schema)
        check_fits(estimate, self.input_budget(max_tokens), f"the prompt (model {self.model})")
        answer = request.expected_output_tokens or min(max_tokens, DEFAULT_ANSWER_TOKENS)
        allowed = self.meter.reserve(self._info(), input_tokens=estimate,
                                     expected_output=expected_output(self._info(), answer),
                                     max_tokens=max_tokens)  # fmt: skip
        budget = self._remaining_budget()
        argv = self.argv(schema, request.prompt.system, budget)
        try:
            run = self._run(argv, stdin=user, env=self.child_env(allowed),
                            timeout=self.config.deadline_s)  # fmt: skip
        except CliTimeout as exc:
            raise ClaudeCodeError(f"Claude Code gave {exc} (deadline_s)") from None
        except CliOverflow as exc:
            raise ClaudeCodeError(f"Claude Code {exc}") from None
        except OSError as exc:
            raise ClaudeCodeError(
                f"{self.cli} could not be started: {exc.strerror or exc}"
            ) from None
        envelope = read_envelope(run, self.version)
        self.meter.record(self._usage(envelope, estimate, answer), self.name)
        raise_for_error(envelope, budget, request.prompt.name)
        output = structured_output(envelope)
        if output is NO_OUTPUT:
            raise NoToolCallError(
                f"Claude Code's answer to prompt {request.prompt.name!r} has no structured output"
            )
        return output

    def _usage(self, envelope: dict[str, Any], estimate: int, answer: int) -> Usage:
        """What the run cost. A cost the CLI reports as missing, negative or NaN is ours instead:
        its tokens at the dearest known rates (never less than it may have cost), or with no
        token count either, the most the call was expected to cost; said in one notice."""
        usage, unpriced = usage_of(envelope, table_price, self._dearest)
        if not unpriced:
            return usage
        if not usage.calls:
            bound = call_cost_bound(self._info(), input_tokens=estimate, output_tokens=answer)
            usage = Usage(calls=1, estimated_cost_usd=bound)
        self.notices.add(
            "notice: Claude Code reported no usable cost for a call; it is counted at "
            f"${usage.estimated_cost_usd:.4f}, the most it could have cost at the known prices"
        )
        return usage

    def _dearest(self, model: str, counts: Mapping[str, int]) -> float:
        return priced(row_or_dearest(model, self.config.price), counts)

    def argv(self, schema: str, system: str, max_budget_usd: float | None) -> list[str]:
        argv = [self.cli, "-p", "--output-format", "json", "--json-schema", schema,
                "--model", self.model, "--tools", "", "--no-session-persistence",
                "--strict-mcp-config", "--settings", ISOLATED_SETTINGS,
                "--system-prompt", system]  # fmt: skip
        if max_budget_usd is not None:
            argv += ["--max-budget-usd", f"{max_budget_usd:.6f}"]
        return argv

    def child_env(self, max_tokens: int) -> dict[str, str]:
        env = dict(os.environ if self._env is None else self._env)
        env.setdefault("CLAUDE_CODE_EFFORT_LEVEL", "low")
        env.update({
            "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
            "DISABLE_PROMPT_CACHING": "1",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
            "CLAUDE_CODE_MAX_RETRIES": str(max(0, self.config.max_attempts - 1)),
            "MAX_STRUCTURED_OUTPUT_RETRIES": str(STRUCTURED_ATTEMPTS),
        })  # fmt: skip
        return env

    def _remaining_budget(self) -> float | None:
        """What is left of --max-cost (meter.reserve has made sure something is)."""
        cap = self.meter.max_cost_usd
        return None if cap is None else cap - self.meter.total.estimated_cost_usd


def table_price(model: str, counts: Mapping[str, int]) -> float | None:
    """Our price for one model's counts when pricing.py knows the model (the CLI's own table
    can be older than the model it runs), else None: the CLI's figure stands."""
    info = MODELS.get(model)
    return None if info is None else priced(info, counts)


def priced(info: ModelInfo, counts: Mapping[str, int]) -> float:
    """The cost of one model's token counts at its row's rates."""
    return estimate_cost(
        info,
        input_tokens=counts.get("input_tokens", 0),
        output_tokens=counts.get("output_tokens", 0),
        cache_read_input_tokens=counts.get("cache_read_input_tokens", 0),
        cache_creation_input_tokens=counts.get("cache_creation_input_tokens", 0),
    )


def _validate(output: object, schema: type[T]) -> tuple[T | None, str]:
    try:
        return schema.model_validate(output), ""
    except ValidationError as exc:
        return None, describe(exc)


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema without `title` annotations (tokens the model does not need)."""
    cleaned: dict[str, Any] = _drop_titles(schema.model_json_schema())
    return cleaned


def _drop_titles(node: Any, *, in_properties: bool = False) -> Any:
    if isinstance(node, list):
        return [_drop_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept = {}
    for key, value in node.items():
        if key == "title" and not in_properties and isinstance(value, str):
            continue
        kept[key] = _drop_titles(value, in_properties=key in ("properties", "$defs"))
    return kept


def claude_code_engine(
    config: LLMConfig, env: Mapping[str, str] | None, *, explicit: bool, **kwargs: Any
) -> tuple[ClaudeCodeEngine | None, str]:
    """(the engine, "") when the CLI can answer; else (None, why not), or for an explicit
    `--engine claude-code` a ClaudeCodeSetupError saying why."""
    status = probe(config, env)
    if status.problem is not None or status.path is None:
        problem = status.problem or "no claude CLI"
        if explicit:
            raise ClaudeCodeSetupError(f"--engine claude-code: {problem}", data=status.as_dict())
        return None, problem
    engine = ClaudeCodeEngine(config, status.path, version=status.version, env=env, **kwargs)
    return engine, ""
