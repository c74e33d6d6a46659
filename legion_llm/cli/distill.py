"""`legion-llm distill`: patterns from the outcome log, verified before the Store Pattern write."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.commands.distill import distill_maker, distill_result
from legion_llm.app.session import open_session
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

PhaseOpt = Annotated[
    list[str] | None,
    typer.Option("--phase", "--phases", help="Distil this phase's plan summaries alone "
                 "(repeat it, or 3,4); OUTCOMES.md is optional."),
]  # fmt: skip
CatalogOpt = Annotated[
    Path | None,
    typer.Option("--catalog", help="CATALOG.md (default: $LEGION_CATALOG, else the project's)."),
]


def distill(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be written; write nothing.")
    ] = False,
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    catalog: CatalogOpt = None,
    phase: PhaseOpt = None,
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
    """Distil PATTERNS.md entries from OUTCOMES.md and the plan summaries it names (spec section
    8), or from --phase's summaries. Safe to run after every build."""
    c = common(root, today, json_)
    host = HostOptions(prepare, out, proposal, ticket, final)
    if host.active:
        finish(host_command(c, host, distill_maker(catalog, phase), dry_run=dry_run), c)
        return
    session = open_session(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(distill_result(c, session, dry_run, catalog, phase), c)
