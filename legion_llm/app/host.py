"""The host route for both front ends: `--prepare` / `--proposal` on compact, distill and learnings
extract, and the MCP tools' engine=host route.

A HostStep is one of those commands' usual result builders with the engine left open. Prepare
runs it with the RecordingEngine (a dry run) and hands back the request object; submit prepares
again, refuses a ticket whose inputs changed, then runs the step with the ReplayEngine: once as a
dry run, to hand back problems (a re-ask, a proposal that does not match the schema, patterns or
learnings the verification skips) without writing anything, then for real.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession
from legion_llm.errors import InputError

if TYPE_CHECKING:
    from legion_llm.llm.host.engine import RecordingEngine

Run = Callable[[LLMSession, bool], CommandResult]  # (session, write) -> the command's result


@dataclass(frozen=True)
class HostStep:
    name: str  # the command: "compact", "distill", "learnings extract"
    what: str  # for messages: "phase 3"
    args: dict[str, Any]  # kept in the ticket; enough to build the step again
    run: Run
    problems: Callable[[dict[str, Any]], list[str]] = field(default=lambda data: [])
    submit_cli: str = ""  # the command line that submits, for the request's `submit` hint
    submit_tool: str = ""


def proposal_json(text: str, what: str) -> Any:
    """The proposal an agent wrote, read with the bounded JSON reader (it comes from an agent);
    `what` names it in the one-line error ("--proposal FILE", "the proposal")."""
    from legion_llm.memory.untrusted import UntrustedInputError, load_json

    try:
        return load_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} is not JSON ({exc.msg}, line {exc.lineno})") from None
    except UntrustedInputError as exc:
        raise InputError(f"{what} {exc}") from None


def _session(engine: Any) -> LLMSession:
    from legion_llm.llm.config import LLMConfig

    return LLMSession(engine, LLMConfig())


def record(step: HostStep) -> tuple[RecordingEngine, CommandResult]:
    """Run `step` as a dry run with the RecordingEngine: its questions, and the offline answers."""
    from legion_llm.llm.engine import Notices
    from legion_llm.llm.host.engine import RecordingEngine

    recorder = RecordingEngine(notices=Notices(sink=None))
    result = step.run(_session(recorder), False)
    return recorder, result


def prepare_result(step: HostStep) -> CommandResult:
    """The request object: the ticket, the prompt's instructions, the schema, the inputs."""
    from legion_llm.llm.host.ticket import Ticket

    recorder, dry = record(step)
    questions = recorder.questions
    command = f"{step.name} --prepare"
    if not questions:
        message = f"{step.what}: nothing to propose"
        data: dict[str, Any] = {"ticket": None, "inputs": [], "message": message}
        return CommandResult(command, data, message, dry.warnings)
    ticket = Ticket(step.name, step.args, tuple(q.key for q in questions)).encode()
    first = questions[0]
    single = len(questions) == 1
    data = {
        "ticket": ticket,
        "step": step.name,
        "instructions": first.system,
        "schema": first.schema,
        "inputs": first.user if single else [q.user for q in questions],
        "budget_tokens": first.budget_tokens if single else [q.budget_tokens for q in questions],
        "submit": _hint(step, single),
    }
    return CommandResult(
        command, data, json.dumps(data, indent=2, ensure_ascii=False), dry.warnings
    )


def _hint(step: HostStep, single: bool) -> str:
    answer = "one JSON object matching `schema`" if single else (
        "a JSON list with one object matching `schema` per item of `inputs`, in order")  # fmt: skip
    return (
        f"Follow `instructions` on `inputs` and answer with {answer}. Submit it with the MCP tool "
        f'{step.submit_tool} (ticket, proposal, apply=true), or write {{"ticket": ..., '
        '"proposal": ...} '
        f"to a file and run `{step.submit_cli} --proposal FILE`. The proposal is verified "
        "like any model's; problems come back with the same ticket."
    )


def submit_result(
    step: HostStep, ticket_text: str, proposal: Any, *, final: bool, write: bool
) -> CommandResult:
    """Verify the proposal for `ticket_text` and write it; problems come back with ok false."""
    from legion_llm.llm.engine import Notices
    from legion_llm.llm.host.engine import ProposalProblems, ReplayEngine
    from legion_llm.llm.host.ticket import decode_ticket

    ticket = decode_ticket(ticket_text, step.name)
    recorder, _ = record(step)
    ticket.check_against([q.key for q in recorder.questions], step.what)
    single = len(recorder.questions) == 1
    proposals = proposal if isinstance(proposal, list) and not single else [proposal]

    def replay(writing: bool) -> CommandResult:
        engine = ReplayEngine(ticket.keys, proposals, final=final, notices=Notices(sink=None))
        return step.run(_session(engine), writing)

    try:
        dry = replay(False)
    except ProposalProblems as exc:
        return problems_result(step, ticket_text, exc.problems, exc.details)
    problems = [] if final else step.problems(dry.data)
    if problems:
        return problems_result(step, ticket_text, problems)
    return replay(True) if write else dry


def problems_result(
    step: HostStep, ticket: str, problems: list[str], details: list[dict[str, Any]] | None = None
) -> CommandResult:
    """ok false: nothing written; `problems` one line each, `details` the step's own records
    (compaction: section, kind, plan, id, path, repairable) when it gives them."""
    data = {"ticket": ticket, "problems": problems, "details": details or [], "written": False,
            "engine": "host", "next": "fix every problem and submit again with the same ticket, "
            "or submit with final=true (--final) to keep what verifies and repair the rest"}  # fmt: skip
    human = "\n".join([f"Not written: {step.what}: the proposal has problems:",
                       *[f"- {p}" for p in problems]])  # fmt: skip
    return CommandResult(step.name, data, human, [], exit_code=1)


MakeStep = Callable[[Common, "dict[str, Any] | None"], HostStep]


def write_request(c: Common, out: Path, result: CommandResult) -> CommandResult:
    """`--prepare --out FILE`: the request object in FILE (inside the root), a one-line summary."""
    from legion_llm.memory.files import atomic_write

    target = out if out.is_absolute() else c.root / out
    atomic_write(target, json.dumps(result.data, indent=2, ensure_ascii=False) + "\n", root=c.root)
    shown = str(target.relative_to(c.root)) if target.is_relative_to(c.root) else str(target)
    message = f"Wrote the request to {shown}; propose, then submit with --proposal."
    data = {**result.data, "out": shown}
    return CommandResult(result.command, data, message, result.warnings, result.exit_code)


def ticket_args(c: Common, ticket_text: str, step: str) -> tuple[dict[str, Any], Common]:
    """What the ticket was prepared with, and the options for running the step again (the
    prepared date, so the written file says the same)."""
    from datetime import date

    from legion_llm.llm.host.ticket import decode_ticket

    args = dict(decode_ticket(ticket_text, step).args)
    try:
        today = date.fromisoformat(str(args.get("today")))
    except ValueError:
        raise InputError("the ticket is damaged (no date); prepare again") from None
    return args, replace(c, today=today)


def submit_with(
    c: Common, make: MakeStep, ticket: str, proposal: Any, *, final: bool, write: bool
) -> CommandResult:
    """Submit `proposal` for `ticket` to the step `make` builds from the ticket's arguments."""
    args, prepared = ticket_args(c, ticket, make(c, None).name)
    return submit_result(make(prepared, args), ticket, proposal, final=final, write=write)


def judge_request(close_calls: dict[str, Any]) -> dict[str, Any]:
    """`errors match` with no model: the close candidates, with the prompt's instructions and
    schema, for the calling agent to judge (nothing is written, so there is nothing to submit)."""
    from legion_llm.llm.prompts import load_prompt
    from legion_llm.pipeline.errmatch import PROMPT, MatchVerdicts

    return {
        "instructions": load_prompt(PROMPT).system,
        "schema": MatchVerdicts.model_json_schema(),
        **close_calls,
        "note": "No model judged these candidates (the answer is confirm; each carries its "
        "calibrated confidence). "
        "Judge them from the inputs; the candidate you pick as the same root cause has the fix "
        "to try (match 0: none of them).",
    }
