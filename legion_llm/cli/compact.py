"""`legion-llm compact PHASE`, `compact --suggest`, `compact --all`, `verify-compaction PHASE`,
`phase-context PHASE`: options parsed here, the use cases in app/commands/phases.py."""

from __future__ import annotations

from typing import Annotated

import typer

from legion_llm.app.batch import DEFAULT_INTERVAL, DEFAULT_TIMEOUT, BatchOptions
from legion_llm.app.commands.phases import (
    compact_all_result,
    compact_maker,
    compact_result,
    find,
    phase_context_result,
    suggest_result,
    verify_result,
)
from legion_llm.app.session import check_engine, open_session
from legion_llm.cli.batch import IntervalOpt, TimeoutOpt, WaitOpt
from legion_llm.cli.common import JsonOpt, RootOpt, TodayOpt, finish
from legion_llm.cli.host import (
    FinalOpt,
    HostOptions,
    OutOpt,
    PrepareOpt,
    ProposalOpt,
    TicketOpt,
    host_command,
)
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, VerboseOpt
from legion_llm.cli.render import common
from legion_llm.errors import UsageError

PhaseArg = Annotated[str, typer.Argument(help="Phase number (3, 03, 6.1), folder name or path.")]


def compact_cmd(
    phase: Annotated[str | None, typer.Argument(help="Phase number, folder name or path.")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Override the preconditions or replace the file.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print it; write nothing.")] = False,
    suggest: Annotated[
        bool, typer.Option("--suggest", help="List completed phases with no COMPACTED.md.")
    ] = False,
    all_: Annotated[
        bool, typer.Option("--all", help="Compact every phase --suggest lists, one by one.")
    ] = False,
    batch: Annotated[
        bool, typer.Option("--batch", help="With --all: one Message Batch, half the price.")
    ] = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    prepare: PrepareOpt = False,
    out: OutOpt = None,
    proposal: ProposalOpt = None,
    ticket: TicketOpt = None,
    final: FinalOpt = False,
    verbose: VerboseOpt = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Compact a completed phase's plan summaries into {NN}-COMPACTED.md, verified."""
    check_engine(engine)  # a wrong --engine first: before the phase is looked for
    c = common(root, today, json_)
    if suggest:
        finish(suggest_result(c), c)
        return
    if all_ or batch or wait:
        options = BatchOptions(batch, wait, poll_interval, timeout)
        _check_all(phase, all_, options, dry_run)
        finish(compact_all_result(c, options, engine=engine, model=model, max_cost=max_cost,
                                  price=price, force=force, verbose=verbose), c)  # fmt: skip
        return
    if phase is None:
        raise UsageError("compact needs a PHASE (or --suggest, or --all)")
    host = HostOptions(prepare, out, proposal, ticket, final)
    if host.active:
        found = find(c, phase)
        finish(host_command(c, host, compact_maker(found, force), dry_run=dry_run), c)
        return
    found = find(c, phase)  # a phase that is not there is said before any engine notice
    session = open_session(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(compact_result(c, found, session, force=force, dry_run=dry_run), c)


def _check_all(phase: str | None, all_: bool, options: BatchOptions, dry_run: bool) -> None:
    if not all_:
        raise UsageError("--batch and --wait go with --all (compact PHASE is one direct run)")
    if phase is not None:
        raise UsageError("compact --all takes no PHASE (it compacts every phase --suggest lists)")
    if options.wait and not options.batch:
        raise UsageError("--wait goes with --batch")
    if dry_run:
        raise UsageError("--all writes each verified file; preview one phase with PHASE --dry-run")


def verify_compaction_cmd(
    phase: PhaseArg, root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False
) -> None:
    """Check an existing COMPACTED.md against its originals: missing and invented ids and paths,
    and whether its verdicts, deliverables, file rows and decisions are grounded."""
    c = common(root, today, json_)
    finish(verify_result(c, find(c, phase)), c)


def phase_context_cmd(
    phase: PhaseArg, root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False
) -> None:
    """The phase's COMPACTED.md when it exists, else its plan summaries."""
    c = common(root, today, json_)
    finish(phase_context_result(c, find(c, phase)), c)
