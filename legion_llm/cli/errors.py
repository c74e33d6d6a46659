"""`legion-llm errors add|match|recall`: error fixes; `match` answers fix, confirm or none."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from legion_llm.app.commands.errors import match_result
from legion_llm.app.commands.knowledge import recall_result
from legion_llm.app.context import split_option
from legion_llm.app.session import LazySession
from legion_llm.cli.common import BranchOpt, JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.knowledge import TagsOpt, _add, _text
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, VerboseOpt
from legion_llm.cli.render import common
from legion_llm.errors import UsageError
from legion_llm.memory.knowledge.read import ERRORS

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
    found = recall_result(c, ERRORS, split_option(tags), limit, branch=branch,
                          error_text=error_text)  # fmt: skip
    finish(found, c)
