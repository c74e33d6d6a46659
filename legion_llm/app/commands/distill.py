"""`distill`: patterns from the outcome log and the plan summaries it names (or a phase's
summaries), verified and grounded before the Store Pattern write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legion_llm.app.context import Common
from legion_llm.app.host import HostStep, MakeStep
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, usage_lines
from legion_llm.errors import InputError


def distill_maker(catalog: Path | None, phases: list[str] | None = None) -> MakeStep:
    """The host step of `distill`; problems are the proposed patterns the verification skips."""

    given = None if catalog is None else str(catalog)
    named = ",".join(_phases(phases) or []) or None

    def make(c: Common, args: dict[str, Any] | None) -> HostStep:
        if args is not None and args.get("catalog") != given:  # a path only from the command
            raise InputError(f"the ticket was prepared with {_catalog(args.get('catalog'))}, "
                             f"this submit has {_catalog(given) if given else 'none'}")  # fmt: skip
        ticketed = named if args is None else args.get("phases")  # a submit: the ticket's
        if named is not None and ticketed != named:
            raise InputError(f"the ticket was prepared with {_named(ticketed)}, "
                             f"this submit has {_named(named)}")  # fmt: skip
        chosen = ticketed.split(",") if isinstance(ticketed, str) and ticketed else None

        def run(session: LLMSession, write: bool) -> CommandResult:
            return distill_result(c, session, not write, catalog, chosen)

        keep = {"today": c.today.isoformat(), "catalog": given, "phases": ticketed}
        return HostStep("distill", "distill", keep, run, _skipped_patterns,
                        submit_cli="legion-llm distill", submit_tool="memory_distill_patterns")  # fmt: skip

    return make


def _catalog(value: object) -> str:
    return f"--catalog {value}" if value else "no --catalog"


def _named(value: object) -> str:
    return f"--phase {value}" if value else "no --phase"


def _skipped_patterns(data: dict[str, Any]) -> list[str]:
    return [f"pattern {item['pattern']!r}: {item['reason']}" for item in data["skipped"]]


def distill_result(
    c: Common,
    session: LLMSession,
    dry_run: bool,
    catalog: Path | None = None,
    phases: list[str] | None = None,
) -> CommandResult:
    """`distill` for the CLI and the MCP server (`phases`: distil those phases' summaries
    alone)."""
    from legion_llm.memory.catalog import catalog_path
    from legion_llm.pipeline.distill import run_distill

    result = run_distill(
        c.paths,
        session.engine,
        today=c.today,
        dry_run=dry_run,
        catalog_path=catalog_path(c.root, catalog),
        phases=_phases(phases),
    )
    data: dict[str, Any] = {
        **result.to_dict(),
        "notices": list(session.engine.notices.messages),
        "usage": session.usage(),
    }
    warnings = [*session.warnings, *result.warnings]
    if not phases and not c.paths.outcomes.exists():  # most projects: summaries, no outcome log
        warnings.append("no OUTCOMES.md here: name the phases whose plan summaries to distil")
    return CommandResult("distill", data, human_lines(data, session.verbose), warnings)


def _phases(phases: list[str] | None) -> list[str] | None:
    """`--phase 3 --phase 4` or `--phase 3,4`: each phase named once; none is no phase."""
    found = [p.strip() for spec in phases or [] for p in spec.split(",") if p.strip()]
    return list(dict.fromkeys(found)) or None


def human_lines(data: dict[str, Any], verbose: bool) -> list[str]:
    """What `distill` says: the candidates, each pattern written or skipped, the usage."""
    verb = "Would write" if data["dry_run"] else "Wrote"
    plans = data.get("plans", [])
    read = f" and {len(plans)} plan summary(ies)" if plans else ""
    lines = [
        f"{len(data['candidates'])} candidate outcome(s){read} in {len(data['groups'])} "
        f"group(s); {verb.lower()} {len(data['written'])} pattern(s), "
        f"skipped {len(data['skipped'])}."
    ]
    for record in data["written"]:
        name = record.get("id") or "a new pattern (its id is given when written)"
        lines.append(f"{verb} {name}: {record['pattern']} [from {record['source']}]")
    lines += [f"Skipped: {item['pattern']} ({item['reason']})" for item in data["skipped"]]
    return lines + usage_lines(data["usage"], verbose)
