"""The host route of the LLM tools: engine=host answers a request {ticket, instructions, schema,
inputs, budget_tokens, submit} for the calling agent to write (`legion-llm ... --prepare
--json`); the same tool given that ticket and a proposal verifies the proposal exactly as it would
verify a model's, and writes it with apply=true, or hands back {problems, ticket} with ok false
and writes nothing. A ticket prepared from inputs that have changed since is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from legion_llm.app.host import (
    MakeStep,
    prepare_result,
    proposal_json,
    submit_with,
    ticket_args,
)
from legion_llm.app.result import CommandResult
from legion_llm.mcp.runner import Runner


def proposal_value(value: dict[str, Any] | list[dict[str, Any]] | str) -> Any:
    """The proposal as given, or the JSON a string holds (bounded: it comes from an agent)."""
    return value if not isinstance(value, str) else proposal_json(value, "the proposal")


def submitting(ticket: str | None, proposal: Any, others: dict[str, Any]) -> bool:
    """Whether this call submits a proposal: a ticket and a proposal together, and none of
    `others` (the arguments of a run, which the ticket already holds)."""
    if ticket is None and proposal is None:
        return False
    if ticket is None or proposal is None:
        raise ToolError("pass ticket and proposal together (the ticket of an engine=host request)")
    extra = [name for name, value in others.items() if value is not None]
    if extra:
        raise ToolError(f"the ticket holds the request; leave out {', '.join(extra)}")
    return True


def submit(runner: Runner, step: str, ticket: str, proposal: Any, final: bool, apply: bool,
           maker: Callable[[dict[str, Any]], MakeStep]) -> dict[str, Any]:  # fmt: skip
    def build() -> CommandResult:
        c = runner.common(None)
        args, _ = ticket_args(c, ticket, step)
        return submit_with(c, maker(args), ticket, proposal_value(proposal), final=final,
                           write=apply)  # fmt: skip

    return runner.run(build)


def prepare(runner: Runner, today: str | None, make: Callable[[Any], MakeStep]) -> dict[str, Any]:
    """The request of the step `make(common)` builds, for the calling agent to answer."""

    def build() -> CommandResult:
        c = runner.common(today)
        return prepare_result(make(c)(c, None))

    return runner.run(build)
