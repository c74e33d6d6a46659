"""`legion-llm errors add|match|recall`: error fixes; `match` answers fix, confirm or none."""

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
    """Known fixes for an error: `fix` (the stored fix applies), `confirm` (up to three
    candidates to check) or `none`; a model engine is asked only to settle a `confirm`.

    In the table, "confidence" is the calibrated chance (0-1) that the stored fix applies,
    "score" the matcher's raw similarity, and "shown" whether the candidate is part of the
    answer (the fix, or one of the candidates to confirm)."""
    text = read_stdin() if stdin else error_text
    if stdin and not (text or "").strip():
        raise UsageError("--stdin read no error text (nothing was piped in)")
    if not text or not text.strip():
        raise UsageError("give the error text as an argument or with --stdin")
    c = common(root, today, json_)
    llm = LazySession(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(match_result(c, text, limit, llm), c)


def match_result(c: Common, text: str, limit: int, llm: LazySession) -> CommandResult:
    """`errors match` for the CLI and the MCP server: `data.answer` is fix, confirm or none;
    `data.matches` the ranked candidates (at most `limit`), each with its confidence and
    evidence; when the answer is `fix`, `matches[0]` is it."""
    from legion_llm.cli.host import judge_request
    from legion_llm.memory.redact import project_redactor
    from legion_llm.pipeline.errmatch import answer_error, confirm_to_judge

    loaded = read_knowledge(ERRORS, c.paths.errors)
    engine = llm.open().engine if loaded.records else None
    found = answer_error(loaded.records, text, engine, limit)
    matches = [found.match_dict(i) for i in range(len(found.matches))]
    data: dict[str, Any] = {"answer": found.answer, "decided_by": found.decided_by,
                            "shown": found.shown, "matches": matches}  # fmt: skip
    close_calls = confirm_to_judge(text, found, project_redactor(c.root))
    if close_calls:  # no model judged the candidates: the calling agent can (host engine)
        data["to_judge"] = judge_request(close_calls)
    warnings = list(loaded.warnings)
    if llm.session is not None:
        data["usage"] = llm.session.usage()
        warnings += llm.session.warnings
    columns = ["id", "confidence", "score", "shown", "resolved", "fix"]
    rows = [[m["id"], m["confidence"], m["score"], "yes" if m["shown"] else "no", m["resolved"],
             m["fix"]] for m in matches]  # fmt: skip

    def human() -> None:
        echo(answer_line(data))
        if matches:
            table("errors match", columns, rows)
        if llm.session is not None:
            for line in usage_lines(llm.session.usage(), llm.verbose):
                echo(line)

    return CommandResult("errors match", data, human, warnings)


def answer_line(data: dict[str, Any]) -> str:
    """The one line that says which of the three answers it is."""
    matches = data["matches"]
    if data["answer"] == "fix":
        best = matches[0]
        return f"fix: {best['id']} applies (confidence {best['confidence']:.2f}): {best['fix']}"
    if data["answer"] == "confirm":
        ids = ", ".join(m["id"] for m in matches[: data["shown"]])
        return f"confirm: not sure; check which of {ids} applies before using its fix"
    if matches:
        best = matches[0]
        return f"none: no stored fix applies (closest {best['id']}, confidence {best['confidence']:.2f})"
    return "none: no stored fix applies"


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
