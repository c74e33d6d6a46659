"""`legion-llm briefing` and `legion-llm prune`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from legion_llm.cli.common import CommandResult, Common, JsonOpt, RootOpt, TodayOpt, common, finish
from legion_llm.cli.reads import briefing_result as briefing_result  # the MCP tool's and demo's


def briefing(root: RootOpt = None, today: TodayOpt = None, json_: JsonOpt = False) -> None:
    """Session briefing: recent high-signal outcomes, top agents, record count.

    Score is importance × recency; success rate and avg importance are over each agent's records."""
    from legion_llm.cli.fast import briefing as run  # the same call the fast path makes

    code = run(root, today, json_)
    if code:
        raise typer.Exit(code)


def prune_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show what would move.")] = False,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Archive old, low-importance outcomes to ARCHIVE.md (spec section 7.5)."""
    c = common(root, today, json_)
    finish(prune_result(c, dry_run), c)


def prune_result(c: Common, dry_run: bool) -> CommandResult:
    from legion_llm.memory.outcomes.prune import prune

    settings = c.settings()
    report = prune(c.paths, settings, c.today, dry_run=dry_run)
    warnings = list(settings.warnings) + report.warnings
    if report.plan.total <= settings.prune_threshold and report.plan.candidates:
        warnings.append(
            f"Note: OUTCOMES.md has {report.plan.total} records, not over the threshold "
            f"({settings.prune_threshold}); pruning because it was asked for."
        )
    data: dict[str, Any] = {
        "dry_run": dry_run,
        "applied": report.applied,
        "archived": [r.id for r in report.plan.candidates],
        "remaining": report.remaining,
        "preserved_high_importance": report.plan.high_importance,
        "preserved_current_phase": report.plan.current_phase_count,
        "current_phase": report.plan.current_phase,
        "archive_total": report.archive_total,
        "report": report.text(),
    }
    return CommandResult("prune", data, report.text(), warnings)
