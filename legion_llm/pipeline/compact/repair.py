"""Deterministic repair of a proposed digest: add what is missing, strike what was invented.

A requirement id missing from the Verification section gets the offline step's line for it (its
verdict and evidence come from the summaries); a path missing from the Files Modified table gets
the offline step's row. An id or path the originals never name is removed: its row goes, and
every mention in the text becomes `[removed: not in the originals]`. Each change is reported.
"""

from __future__ import annotations

import re
from typing import Any

from legion_llm.memory.phases.extract import PhaseFacts
from legion_llm.pipeline.compact.render import (
    FileItem,
    Header,
    PhaseDigest,
    RequirementItem,
    render,
)
from legion_llm.pipeline.compact.verify import Sources, verify_document

REMOVED = "[removed: not in the originals]"


def repair(
    digest: PhaseDigest,
    facts: PhaseFacts,
    sources: Sources,
    fallback: PhaseDigest,
    header: Header,
) -> tuple[PhaseDigest, list[str]]:
    """The digest with every miss filled in and every invention struck, and what was done."""
    report = verify_document(render(header, digest), facts, sources, tokens_original=1, strict=True)
    repaired: list[str] = []
    if report.invented_ids or report.invented_paths:
        digest = strike(digest, report.invented_ids, report.invented_paths)
        repaired += [f"removed {x}: the originals never name it" for x in report.invented()]
    if report.missing_ids:
        digest, notes = _add_requirements(digest, report.missing_ids, facts, fallback)
        repaired += notes
    if report.missing_paths:
        digest, notes = _add_files(digest, report.missing_paths, facts, fallback)
        repaired += notes
    return digest, repaired


def _add_requirements(
    digest: PhaseDigest, missing: list[str], facts: PhaseFacts, fallback: PhaseDigest
) -> tuple[PhaseDigest, list[str]]:
    known = {r.requirement_id: r for r in fallback.verification}
    kept = [r for r in digest.verification if r.requirement_id not in missing]
    added = [
        known.get(rid)
        or RequirementItem(requirement_id=rid, verdict="not verified", evidence="restored")
        for rid in missing
    ]
    order = {rid: i for i, rid in enumerate(facts.requirement_ids)}
    merged = sorted([*kept, *added], key=lambda r: order.get(r.requirement_id, len(order)))
    notes = [
        f"requirement {rid} added to Verification (the proposal left it out)" for rid in missing
    ]
    return digest.model_copy(update={"verification": merged}), notes


def _add_files(
    digest: PhaseDigest, missing: list[str], facts: PhaseFacts, fallback: PhaseDigest
) -> tuple[PhaseDigest, list[str]]:
    known = {f.path: f for f in fallback.files}
    kept = [f for f in digest.files if f.path not in missing]
    added = [known.get(p) or FileItem(path=p, change="named in the summaries") for p in missing]
    order = {path: i for i, path in enumerate(facts.paths)}
    merged = sorted([*kept, *added], key=lambda f: order.get(f.path, len(order)))
    notes = [f"path {p} added to Files Modified (the proposal left it out)" for p in missing]
    return digest.model_copy(update={"files": merged}), notes


def strike(digest: PhaseDigest, ids: list[str], paths: list[str]) -> PhaseDigest:
    """Remove rows keyed by an invented id or path; replace other mentions with REMOVED."""
    data = digest.model_dump()
    data["files"] = [f for f in data["files"] if f["path"] not in paths]
    data["verification"] = [r for r in data["verification"] if r["requirement_id"] not in ids]
    patterns = [
        rf"(?<![\w./\-]){re.escape(p)}(?![\w/\-])" for p in sorted(paths, key=len, reverse=True)
    ]
    patterns += [rf"(?<![\w.\-/]){re.escape(i)}(?![\w\-]|\.\d)" for i in ids]
    if patterns:
        data = _scrub(data, re.compile("|".join(patterns)))
    return PhaseDigest.model_validate(data)


def _scrub(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(REMOVED, value)
    if isinstance(value, list):
        return [_scrub(v, pattern) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, pattern) for k, v in value.items()}
    return value
