"""The command line's side of the host route (app/host.py): the --prepare, --out, --proposal,
--ticket and --final options, reading a proposal from a file or stdin, and which of prepare or
submit the options ask for."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from legion_llm.app.context import Common
from legion_llm.app.host import (
    MakeStep,
    prepare_result,
    proposal_json,
    submit_with,
    write_request,
)
from legion_llm.app.result import CommandResult
from legion_llm.errors import InputError


def read_proposal(source: str, ticket: str | None) -> tuple[str, Any]:
    """(ticket, proposal) from `--proposal FILE|-`: the file holds {"ticket", "proposal"}, or only
    the proposal when --ticket is given."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--proposal {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"--proposal {source} is not UTF-8 text") from None
    data = proposal_json(text, f"--proposal {source}")
    if ticket is not None:
        return ticket, data
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("ticket"), str)
        or "proposal" not in data
    ):
        raise InputError(
            f'--proposal {source} must hold {{"ticket": "...", "proposal": ...}} (or pass --ticket)'
        )
    return data["ticket"], data["proposal"]


PrepareOpt = Annotated[
    bool,
    typer.Option("--prepare", help="Host engine: print the request for the calling agent to "
                 "answer (instructions, schema, inputs, ticket); write nothing."),
]  # fmt: skip
OutOpt = Annotated[
    Path | None, typer.Option("--out", help="With --prepare: write the request to this file.")
]
ProposalOpt = Annotated[
    str | None,
    typer.Option("--proposal", help='Host engine: submit the agent\'s answer, a JSON file '
                 'holding {"ticket": ..., "proposal": ...} (or - for stdin).'),
]  # fmt: skip
TicketOpt = Annotated[
    str | None, typer.Option("--ticket", help="The ticket, when --proposal holds only the answer.")
]
FinalOpt = Annotated[
    bool,
    typer.Option("--final", help="With --proposal: the last round; keep what verifies and "
                 "repair the rest instead of handing problems back."),
]  # fmt: skip


@dataclass(frozen=True)
class HostOptions:
    prepare: bool = False
    out: Path | None = None
    proposal: str | None = None
    ticket: str | None = None
    final: bool = False

    @property
    def active(self) -> bool:
        """Any host option given (a stray one is a usage error, never silently ignored)."""
        given = (self.out, self.proposal, self.ticket)
        return self.prepare or self.final or any(v is not None for v in given)


def host_command(
    c: Common, options: HostOptions, make: MakeStep, *, dry_run: bool
) -> CommandResult:
    """--prepare [--out] or --proposal [--ticket] [--final] for a command whose step `make` builds
    (from the command line's options; from a ticket's arguments on submit)."""
    from legion_llm.errors import UsageError

    if options.prepare and options.proposal is not None:
        raise UsageError("--prepare and --proposal do not go together")
    if options.out is not None and not options.prepare:
        raise UsageError("--out goes with --prepare")
    if options.proposal is None and (options.ticket is not None or options.final):
        raise UsageError("--ticket and --final go with --proposal")
    if options.prepare:
        result = prepare_result(make(c, None))
        return write_request(c, options.out, result) if options.out else result
    assert options.proposal is not None
    ticket, proposal = read_proposal(options.proposal, options.ticket)
    return submit_with(c, make, ticket, proposal, final=options.final, write=not dry_run)
