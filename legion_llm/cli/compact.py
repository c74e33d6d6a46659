"""`legion-llm compact PHASE`, `compact --suggest`, `verify-compaction PHASE`, `phase-context PHASE`.

Options are parsed and results rendered here; the work is in legion_llm.memory.phases.find (finding
the phase, ROADMAP status, recall) and legion_llm.pipeline.compact.run (compaction, verification).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.cli.batch import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT,
    BatchOptions,
    IntervalOpt,
    TimeoutOpt,
    WaitOpt,
)
from legion_llm.cli.common import CommandResult, Common, JsonOpt, RootOpt, TodayOpt, common, finish
from legion_llm.cli.compact_all import compact_all_result
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
    MaxCostOpt,
    ModelOpt,
    PriceOpt,
    VerboseOpt,
    check_engine,
    open_session,
)
from legion_llm.cli.render import usage_lines
from legion_llm.errors import InputError, UsageError

if TYPE_CHECKING:
    from legion_llm.cli.llm import LLMSession
    from legion_llm.memory.phases.find import Phase
    from legion_llm.pipeline.compact.run import Checked, CompactResult

PhaseArg = Annotated[str, typer.Argument(help="Phase number (3, 03, 6.1), folder name or path.")]


def _phase(c: Common, spec: str) -> Phase:
    from legion_llm.memory.phases.find import find_phase

    return find_phase(c.root, spec)


def _rel(path: Path, c: Common) -> str:
    return str(path.relative_to(c.root)) if path.is_relative_to(c.root) else str(path)


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
        found = _phase(c, phase)
        finish(host_command(c, host, compact_maker(found, force), dry_run=dry_run), c)
        return
    found = _phase(c, phase)  # a phase that is not there is said before any engine notice
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


def compact_maker(found: Phase, force: bool) -> MakeStep:
    """The host step of `compact PHASE` (from a ticket's arguments on submit)."""

    def make(c: Common, args: dict[str, Any] | None) -> HostStep:
        if args is not None and str(args.get("phase")) != found.key:
            raise InputError(f"the ticket is for phase {args.get('phase')}, not phase {found.key}")
        forced = force or bool((args or {}).get("force"))

        def run(session: LLMSession, write: bool) -> CommandResult:
            return compact_result(c, found, session, force=forced, dry_run=not write)

        return HostStep("compact", f"phase {found.key}",
                        {"phase": found.key, "force": forced, "today": c.today.isoformat()}, run,
                        submit_cli=f"legion-llm compact {found.key}", submit_tool="compact_submit")  # fmt: skip

    return make


def compact_result(
    c: Common, found: Phase, session: LLMSession, *, force: bool, dry_run: bool
) -> CommandResult:
    """`compact PHASE` for the CLI and the MCP server."""
    from legion_llm.pipeline.compact.run import compact_phase

    result = compact_phase(found, session.engine, today=c.today, force=force, write=not dry_run)
    data = {**result.as_dict(), "path": _rel(result.path, c), "dry_run": dry_run,
            "usage": session.usage()}  # fmt: skip
    if dry_run:
        data["text"] = result.text
    human = _compact_human(result, data, dry_run, session.verbose)
    return CommandResult("compact", data, human, [*session.warnings, *result.warnings])


def _compact_human(
    result: CompactResult, data: dict[str, Any], dry_run: bool, verbose: bool
) -> str:
    report = result.report
    if result.too_small:
        return (f"Nothing to compact: the summaries of phase {result.settled.prepared.phase.key} "
                f"are {report.tokens_original} tokens, and the least a compacted summary can "
                f"say is {report.tokens_output}; they stay as they are (nothing written)")  # fmt: skip
    verb = "Would write" if dry_run else "Wrote"
    lines = [result.text] if dry_run else []
    lines.append(
        f"{verb} {data['path']}: ratio {report.ratio:.2f} ({report.tokens_output} of "
        f"{report.tokens_original} tokens); kept {len(result.facts.requirement_ids)} requirement "
        f"id(s) and {len(result.facts.paths)} path(s); repaired {len(result.repaired)}; "
        f"engine {result.engine}{_fallback_note(result)}"
    )
    lines += usage_lines(data["usage"], verbose)
    return "\n".join(lines)


def _fallback_note(result: CompactResult) -> str:
    """` (fell back: decisions, verification from the offline engine)` or ` (fell back)`."""
    if not result.fell_back:
        return ""
    offline = [name for name, s in result.settled.sections.items() if s["fallback"]]
    if not offline or len(offline) == len(result.settled.sections):
        return " (fell back)"
    return f" (fell back: {', '.join(offline)} from the offline engine)"


def suggest_result(c: Common) -> CommandResult:
    from legion_llm.memory.phases.find import completed_without_compaction, phase_specs

    phases = completed_without_compaction(c.root)
    rows = [{"phase": spec, "folder": _rel(p.folder, c), "name": p.name,
             "summaries": len(p.summaries)}
            for p, spec in zip(phases, phase_specs(phases, c.root), strict=True)]  # fmt: skip
    if rows:
        message = (f"💡 {len(rows)} completed phase(s) have uncompacted summaries: "
                   + ", ".join(f"Phase {r['phase']} ({r['summaries']})" for r in rows)
                   + ". Compact with `legion-llm compact PHASE`.")  # fmt: skip
    else:
        message = "No completed phase is waiting for compaction."
    return CommandResult("compact", {"suggest": True, "phases": rows, "message": message}, message)


def verify_compaction_cmd(
    phase: PhaseArg, root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False
) -> None:
    """Check an existing COMPACTED.md against its originals: missing and invented ids and paths,
    and whether its verdicts, deliverables, file rows and decisions are grounded."""
    c = common(root, today, json_)
    finish(verify_result(c, _phase(c, phase)), c)


def verify_result(c: Common, found: Phase) -> CommandResult:
    """`verify-compaction PHASE` for the CLI and the MCP server (exit code 1 when it fails)."""
    from legion_llm.pipeline.compact.run import check_compacted

    _, checked = check_compacted(found)
    data = {"phase": found.key, "path": _rel(found.compacted_path, c), **checked.as_dict()}
    code = 0 if checked.ok else 1
    return CommandResult("verify-compaction", data, _verify_human(data, checked), [], code)


_GROUNDING_LABELS = {
    "ungrounded-verdict": "ungrounded verdicts",
    "placeholder": "placeholders",
    "unknown-plan": "unknown plans",
    "wrong-plan": "text under the wrong plan",
    "ungrounded-text": "text the summaries do not support",
    "unknown-path": "file rows for paths the summaries do not list",
    "unknown-requirement": "verdicts for requirements of other phases",
}


def _verify_human(data: dict[str, Any], checked: Checked) -> str:
    report = checked
    verdict = "OK" if checked.ok else "FAILED"
    lines = [f"{data['path']}: {verdict}; ratio {report.ratio:.2f} "
             f"({report.tokens_output} of {report.tokens_original} tokens)"]  # fmt: skip
    listed = {
        "missing requirement ids": report.missing_ids,
        "missing paths": report.missing_paths,
        "invented requirement ids": report.invented_ids,
        "invented paths": report.invented_paths,
    }
    facts = checked.facts()
    for kind in dict.fromkeys(p.kind for p in facts):  # every kind, named or not
        listed[_GROUNDING_LABELS.get(kind, kind)] = [p.message for p in facts if p.kind == kind]
    listed |= {
        "missing sections": report.sections_missing,
        "extra sections": report.sections_extra,
        "plans never named": report.plans_missing,
        "missing frontmatter keys": report.frontmatter_missing,
        "form (repairable, not a failure)": [
            p.message for p in checked.grounding if p not in facts
        ],
    }
    sep = {label: "; " for label in [*_GROUNDING_LABELS.values(), *(p.kind for p in facts)]}
    sep["form (repairable, not a failure)"] = "; "
    lines += [f"{label}: {sep.get(label, ', ').join(items)}"
              for label, items in listed.items() if items]  # fmt: skip
    return "\n".join(lines)  # FAILED has a line of its own here: ok is false only with one


def phase_context_cmd(
    phase: PhaseArg, root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False
) -> None:
    """The phase's COMPACTED.md when it exists, else its plan summaries."""
    c = common(root, today, json_)
    finish(phase_context_result(c, _phase(c, phase)), c)


def phase_context_result(c: Common, found: Phase) -> CommandResult:
    from legion_llm.memory.phases.find import phase_context

    context = phase_context(found)
    data = {"phase": found.key, "folder": _rel(found.folder, c), "source": context.source,
            "files": [_rel(f, c) for f in context.files], "text": context.text}  # fmt: skip
    return CommandResult("phase-context", data, context.text.rstrip("\n"))
