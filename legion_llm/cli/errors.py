"""`legion-llm errors add|match|recall`: error fixes, with the engine asked only for close calls."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.cli.common import (
    BranchOpt,
    CommandResult,
    Common,
    JsonOpt,
    RootOpt,
    TodayOpt,
    common,
    finish,
    resolve_branch,
    split_option,
)
from legion_llm.cli.knowledge import TagsOpt, _add, _recall, _text
from legion_llm.cli.llm import EngineOpt, LazySession, MaxCostOpt, ModelOpt, PriceOpt, VerboseOpt
from legion_llm.cli.render import echo, table, usage_lines
from legion_llm.errors import UsageError
from legion_llm.memory.knowledge.read import ERRORS, read_knowledge
from legion_llm.memory.knowledge.recall import KnowledgeQuery

if TYPE_CHECKING:
    pass

errors_app = typer.Typer(no_args_is_help=True, help="Error signatures and their fixes (ERRORS.md).")


@errors_app.command("add")
def errors_add(
    signature: Annotated[str, _text("--signature", "The error message (enough to match).")],
    fix: Annotated[str, _text("--fix", "What resolved it.")],
    agent: Annotated[str, _text("--agent", "The agent that resolved it.")],
    resolved: Annotated[
        bool, typer.Option("--resolved/--unresolved", help="Did the fix work?")
    ] = True,
    tags: TagsOpt = None,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    verbose: VerboseOpt = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Store an error fix; a signature with the same root cause as a stored one is not stored
    twice (spec section 9). Only a close call asks the engine."""
    values = {
        "error_signature": signature,
        "fix": fix,
        "agent": agent,
        "resolved": str(resolved).lower(),
        "tags": tags or "",
    }
    c = common(root, today, json_)
    _add(c, ERRORS, values, LazySession(c, engine, model, max_cost, price=price, verbose=verbose))


def read_stdin() -> str:
    """Standard input as text; bytes that are not UTF-8 become U+FFFD."""
    raw = getattr(sys.stdin, "buffer", None)
    return raw.read().decode("utf-8", "replace") if raw is not None else sys.stdin.read()


@errors_app.command("match")
def errors_match(
    error_text: Annotated[str | None, typer.Argument(help="The error text (or --stdin).")] = None,
    stdin: Annotated[bool, typer.Option("--stdin", help="Read the error from stdin.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 5,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    verbose: VerboseOpt = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Known fixes for an error, best first; the engine decides only the close calls.

    "decided by" says what judged each match: exact (the same fingerprint), fuzzy (a score high
    enough on its own), claude (a model judged the close call), offline (the built-in rule judged
    it), none (too far to be the same error)."""
    text = read_stdin() if stdin else error_text
    if stdin and not (text or "").strip():
        raise UsageError("--stdin read no error text (nothing was piped in)")
    if not text or not text.strip():
        raise UsageError("give the error text as an argument or with --stdin")
    c = common(root, today, json_)
    llm = LazySession(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(match_result(c, text, limit, llm), c)


def match_result(c: Common, text: str, limit: int, llm: LazySession) -> CommandResult:
    """`errors match` for the CLI and the MCP server."""
    from legion_llm.cli.host import judge_request
    from legion_llm.memory.redact import project_redactor
    from legion_llm.pipeline.errmatch import close_calls_to_judge, match_error

    loaded = read_knowledge(ERRORS, c.paths.errors)
    judged = match_error(loaded.records, text, llm.open().engine if loaded.records else None, limit)
    data: dict[str, Any] = {"matches": [j.to_dict() for j in judged if j.same]}
    close_calls = close_calls_to_judge(text, judged, project_redactor(c.root))
    if close_calls:  # no model judged them: the calling agent can (host engine)
        data["to_judge"] = judge_request(close_calls)
    warnings = list(loaded.warnings)
    if llm.session is not None:
        data["usage"] = llm.session.usage()
        warnings += llm.session.warnings
    columns = ["id", "score", "decided_by", "same root cause", "resolved", "fix"]
    rows = [
        [j.match.candidate.key, j.match.score, j.decided_by, "yes" if j.same else "no",
         j.match.candidate.resolved, j.match.candidate.fix]
        for j in judged
    ]  # fmt: skip

    def human() -> None:
        table("errors match", columns, rows)
        if llm.session is not None:
            for line in usage_lines(llm.session.usage(), llm.verbose):
                echo(line)

    return CommandResult("errors match", data, human, warnings)


@errors_app.command("recall")
def errors_recall(
    error_text: Annotated[
        str | None, typer.Option("--error-text", help="Rank by shared keywords.")
    ] = None,
    tags: TagsOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 5,
    branch: BranchOpt = "all",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Recall error fixes: Resolved first, then keyword overlap with --error-text."""
    c = common(root, today, json_)
    query = KnowledgeQuery(
        tags=split_option(tags),
        branch=resolve_branch(branch, c.root),
        error_text=error_text,
        limit=limit,
    )
    _recall(c, ERRORS, query, ["error_signature", "fix", "resolved"])
