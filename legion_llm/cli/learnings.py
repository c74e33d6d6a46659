"""`legion-llm learnings add|load|extract`: mission-control learnings in `.mission-control/memory/`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from legion_llm.app.commands.learnings import (
    add_result,
    check_folder,
    extract_maker,
    extract_result,
    load_result,
    mission_by_id,
    no_mission,
    now_text,
)
from legion_llm.app.context import split_option
from legion_llm.app.session import check_engine, open_session
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

app = typer.Typer(
    no_args_is_help=True,
    help="Mission learnings (.mission-control/memory/): add one, load them for a goal, extract them.",
)


@app.command("add")
def add(
    title: Annotated[
        str, typer.Option("--title", help="A specific title (becomes the file name).")
    ],
    body: Annotated[str, typer.Option("--body", help="1-3 short paragraphs: what to do or avoid.")],
    category: Annotated[
        str, typer.Option("--category", help="pattern, gotcha, architecture, tooling or prompt.")
    ],
    tags: Annotated[str, typer.Option("--tags", help="2-5 lowercase, comma-separated tags.")],
    confidence: Annotated[str, typer.Option("--confidence", help="low, medium or high.")],
    source: Annotated[
        str, typer.Option("--source", help="Mission id, or `manual` (the default).")
    ] = "manual",
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Write one learning file; its name is generated from the title, inside the memory folder."""
    from legion_llm.memory.learnings.read import Learning

    c = common(root, today, json_)
    learning = Learning(title, body, split_option(tags), source, now_text(today, c), confidence,
                        category)  # fmt: skip
    finish(add_result(c, learning), c)


@app.command("load")
def load(
    goal: Annotated[str, typer.Option("--goal", help="The mission goal text.")],
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Budget of the section (chars / 4).")
    ] = 2000,
    limit: Annotated[
        int, typer.Option("--limit", min=0, help="At most this many tag-matched learnings.")
    ] = 5,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """The "Project Learnings" section for a goal: gotchas always, others when a tag is in the goal;
    over budget, the highest confidence and the newest first."""
    c = common(root, today, json_)
    finish(load_result(c, goal, max_tokens, limit), c)


@app.command("extract")
def extract(
    mission: Annotated[
        Path,
        typer.Argument(
            help="A completed mission's folder or a Legion phase folder, or a mission id "
            "(its folder under .mission-control/missions/, archive/ included)."
        ),
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan; write nothing.")
    ] = False,
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
    """Extract learnings from a finished mission or phase: verified, de-duplicated (the same topic
    reinforces the existing file), written inside .mission-control/memory/."""
    check_engine(engine)  # a wrong --engine first: before the folder is looked for
    c = common(root, today, json_)
    folder = mission if mission.is_absolute() else Path.cwd() / mission
    if not folder.exists() and (c.root / mission).is_dir():
        folder = c.root / mission  # a path given relative to --root
    if not folder.exists():
        folder = mission_by_id(c.root, str(mission)) or no_mission(mission)
    host = HostOptions(prepare, out, proposal, ticket, final)
    if host.active:
        maker = extract_maker(folder, now_text(today, c))
        finish(host_command(c, host, maker, dry_run=dry_run), c)
        return
    check_folder(c, folder)  # a wrong folder is said before any engine notice
    session = open_session(c, engine, model, max_cost, price=price, verbose=verbose)
    finish(extract_result(c, folder, session, now_text(today, c), dry_run), c)
