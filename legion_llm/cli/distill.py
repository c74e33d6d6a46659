"""`legion-llm distill`: patterns from the outcome log, verified before the Store Pattern write."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
from legion_llm.cli.host import (
    FinalOpt,
    HostOptions,
    HostStep,
    MakeStep,
    OutOpt,
    PrepareOpt,
    ProposalOpt,
    TicketOpt,
    host_command,
)
from legion_llm.cli.llm import (
    EngineOpt,
    LLMSession,
    MaxCostOpt,
    ModelOpt,
    PriceOpt,
    VerboseOpt,
    open_session,
)
from legion_llm.cli.render import echo, usage_lines
from legion_llm.errors import InputError

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
    """Distil PATTERNS.md entries from OUTCOMES.md (spec section 8). Safe to run after every build."""
    c = common(root, today, json_)
    host = HostOptions(prepare, out, proposal, ticket, final)
    if host.active:
        finish(host_command(c, host, distill_maker(catalog), dry_run=dry_run), c)
        return
    session = open_session(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(distill_result(c, session, dry_run, catalog), c)


def distill_maker(catalog: Path | None) -> MakeStep:
    """The host step of `distill`; problems are the proposed patterns the verification skips."""

    given = None if catalog is None else str(catalog)

    def make(c: Common, args: dict[str, Any] | None) -> HostStep:
        if args is not None and args.get("catalog") != given:  # a path only from the command
            raise InputError(f"the ticket was prepared with {_catalog(args.get('catalog'))}, "
                             f"this submit has {_catalog(given) if given else 'none'}")  # fmt: skip

        def run(session: LLMSession, write: bool) -> CommandResult:
            return distill_result(c, session, not write, catalog)

        keep = {"today": c.today.isoformat(), "catalog": given}
        return HostStep("distill", "distill", keep, run, _skipped_patterns,
                        submit_cli="legion-llm distill", submit_tool="distill_submit")  # fmt: skip

    return make


def _catalog(value: object) -> str:
    return f"--catalog {value}" if value else "no --catalog"


def _skipped_patterns(data: dict[str, Any]) -> list[str]:
    return [f"pattern {item['pattern']!r}: {item['reason']}" for item in data["skipped"]]


def distill_result(
    c: Common, session: LLMSession, dry_run: bool, catalog: Path | None = None
) -> CommandResult:
    """`distill` for the CLI and the MCP server."""
    from legion_llm.memory.catalog import catalog_path
    from legion_llm.pipeline.distill import run_distill

    result = run_distill(
        c.paths,
        session.engine,
        today=c.today,
        dry_run=dry_run,
        catalog_path=catalog_path(c.root, catalog),
    )
    data: dict[str, Any] = {
        **result.to_dict(),
        "notices": list(session.engine.notices.messages),
        "usage": session.usage(),
    }
    warnings = [*session.warnings, *result.warnings]
    return CommandResult("distill", data, lambda: _human(data, session.verbose), warnings)


def _human(data: dict[str, Any], verbose: bool) -> None:
    verb = "Would write" if data["dry_run"] else "Wrote"
    echo(
        f"{len(data['candidates'])} candidate outcome(s) in {len(data['groups'])} group(s); "
        f"{verb.lower()} {len(data['written'])} pattern(s), skipped {len(data['skipped'])}."
    )
    for record in data["written"]:
        name = record.get("id") or "a new pattern (its id is given when written)"
        echo(f"{verb} {name}: {record['pattern']} [from {record['source']}]")
    for item in data["skipped"]:
        echo(f"Skipped: {item['pattern']} ({item['reason']})")
    for line in usage_lines(data["usage"], verbose):
        echo(line)
