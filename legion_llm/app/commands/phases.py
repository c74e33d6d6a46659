"""Phases: compact one (verified), list the completed ones waiting for it, compact them all
(directly, or as one Message Batch), verify a COMPACTED.md, a phase's context.

The work is in legion_llm.memory.phases.find (finding the phase, ROADMAP status) and
legion_llm.pipeline.compact.run (compaction, verification).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.batch import BatchOptions, EngineChoice, submit_result, submit_then_wait
from legion_llm.app.context import Common
from legion_llm.app.host import HostStep, MakeStep
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, open_session, usage_lines
from legion_llm.errors import InputError

if TYPE_CHECKING:
    from legion_llm.memory.phases.find import Phase
    from legion_llm.pipeline.batch.record import BatchRecord
    from legion_llm.pipeline.batch.run import BatchJob
    from legion_llm.pipeline.compact.run import Checked, CompactResult


def find(c: Common, spec: str) -> Phase:
    """The phase `spec` names (number, folder name or path) in the project."""
    from legion_llm.memory.phases.find import find_phase

    return find_phase(c.root, spec)


def _rel(path: Path, c: Common) -> str:
    return str(path.relative_to(c.root)) if path.is_relative_to(c.root) else str(path)


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
                        submit_cli=f"legion-llm compact {found.key}", submit_tool="phase_compact")  # fmt: skip

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


def phase_context_result(c: Common, found: Phase) -> CommandResult:
    from legion_llm.memory.phases.find import phase_context

    context = phase_context(found)
    data = {"phase": found.key, "folder": _rel(found.folder, c), "source": context.source,
            "files": [_rel(f, c) for f in context.files], "text": context.text}  # fmt: skip
    return CommandResult("phase-context", data, context.text.rstrip("\n"))


def compact_all_result(
    c: Common,
    options: BatchOptions,
    *,
    engine: str | None,
    model: str | None,
    max_cost: float | None,
    price: str | None = None,
    force: bool = False,
    verbose: bool = False,
) -> CommandResult:
    from legion_llm.pipeline.batch.compact import CompactAllJob

    job = CompactAllJob.pending(c.root, c.today)
    job.force = force
    if not job.phase_keys:
        text = "No completed phase is waiting for compaction."
        return CommandResult("compact", {"all": True, "phases": [], "message": text}, text)
    if not options.batch:
        return direct_result(c, job, open_session(c, engine, model, max_cost, price=price,
                                                    verbose=verbose))  # fmt: skip
    choice = EngineChoice(model, max_cost, engine, price)
    return submit_then_wait(c, job, choice, replace(options, force=force), compact_job)


def compact_all_submit(c: Common, choice: EngineChoice, *, force: bool) -> CommandResult:
    """Every pending phase submitted as one batch, without waiting (the MCP tool: a call never
    waits for a batch to end); `force` overrides the phases' preconditions."""
    from legion_llm.pipeline.batch.compact import CompactAllJob

    job = CompactAllJob.pending(c.root, c.today)
    job.force = force
    return submit_result(c, job, choice)


def direct_result(c: Common, job: Any, session: LLMSession) -> CommandResult:
    from legion_llm.pipeline.batch.compact import compact_all_direct

    rows = compact_all_direct(job, session.engine)
    usage = session.usage()
    data = {"all": True, "batch": False, "outcomes": rows, "usage": usage}
    lines = [_row_line(row) for row in rows]
    lines += usage_lines(usage, session.verbose)
    failed = [r for r in rows if r["status"] == "failed"]
    code = max((int(r.get("exit_code", 1)) for r in failed), default=0)
    errors = [f"error: {r['label']}: {r['reason']}" for r in failed]
    return CommandResult("compact", data, "\n".join(lines), [*session.warnings, *errors], code)


def _row_line(row: dict[str, Any]) -> str:
    where = row.get("path") or row.get("reason") or ""
    return f"{row['label']}: {row['status']}; {where}; ${row['cost_usd']:.4f}"


def compact_job(c: Common, record: BatchRecord) -> BatchJob:
    """The `compact --all --batch` job a record holds, rebuilt from its options."""
    from datetime import date

    from legion_llm.pipeline.batch.compact import CompactAllJob

    options = record.options
    return CompactAllJob(c.root, date.fromisoformat(options["today"]),
                         list(options["phases"]), bool(options.get("force")))  # fmt: skip
