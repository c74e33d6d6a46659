"""Pattern distillation from plan summaries holds on phases nobody has seen: properties over
generated phases.

tests/strategies/summaries.py invents one phase of 1-5 plan summaries (block and flow
`patterns-established:` lists, quoted or not, code, colons, numbers, non-ASCII prose, decisions,
fixed deviations, statuses, CRLF, a BOM, two to five plans establishing one approach) and
records the truth as it builds it (tests/strategies/test_summaries.py holds the generator to
it). For every generated phase, distilled offline from its
summaries alone (`run_distill(..., phases=[the phase])`) in a fresh temporary folder:

a. it raises nothing (the phase has a summary); a phase that does not exist is a LegionError
   with a one-line message;
b. every entry a plan that did not fail declares in `patterns-established` is written whole or
   quoted in some written row's Pattern or Context (compared as the corpus eval compares:
   `token_line`); an entry longer than a pattern holds, clause by clause;
c. every written row passes the independent second reader exactly as the corpus eval applies it
   (evals/distill_oracle.py through distill_corpus.oracle_flag: no status, no file list, nothing
   named that the summaries of the plans it cites do not state, no near-copy of an earlier row),
   passes the pipeline's own gates of that eval (not a status or a file list, no new entity),
   and cites only plans that exist;
d. a second run writes nothing;
e. a dry run writes no file, and shows the rows the real run then writes.

A fixed example budget and seed here (derandomize); `benchmarks/bench_distill_properties.py`
runs the same properties over many more examples with any seed, counts the problems by kind
and shrinks a kind to a small phase (`--shrink TEXT`).
"""

from __future__ import annotations

import re
import tempfile
import traceback
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from legion_llm.errors import LegionError
from legion_llm.evals.distill_corpus import as_cited, oracle_flag, read_summary
from legion_llm.llm.engine import OfflineEngine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.memory.entities import new_entities
from legion_llm.memory.knowledge.read import PATTERNS, read_knowledge
from legion_llm.memory.phases.patterns import established, source_of
from legion_llm.memory.phases.statements import token_line
from legion_llm.pipeline.distill import MAX_CHARS, PROMPT, distill_offline, run_distill
from legion_llm.pipeline.distill_sources import not_a_pattern, phase_names
from legion_llm.project import MemoryPaths
from legion_llm.records import split_list
from tests.strategies.summaries import (
    SummaryPhase,
    WrittenPhase,
    summary_phases,
    write_phase,
)

pytestmark = pytest.mark.slow
EXAMPLES = 100  # about 5 s when every property holds
TODAY = date(2026, 12, 1)
FIELDS = ("pattern", "context", "reuse_criteria")


def offline() -> OfflineEngine:
    registry = OfflineRegistry()
    registry.register(PROMPT, distill_offline)
    return OfflineEngine(registry=registry)


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _raised(what: str) -> str:
    lines = traceback.format_exc().strip().splitlines()
    return f"{what} raised: {' | '.join(lines[-6:])}"


def declared_problems(
    phase: SummaryPhase, rows: list[dict[str, str]], skipped: list[dict[str, str]]
) -> list[str]:
    """(b) every entry a plan that did not fail declares is in some row's Pattern or Context;
    each miss with what became of it (for the report)."""
    lines = [token_line(f"{r.get('pattern', '')} {r.get('context', '')}") for r in rows]
    problems = []
    texts = {p.plan_id: p.text for p in phase.plans}
    truth = {p.plan_id: p.outcome for p in phase.plans}
    for plan, entry in phase.declared():
        words = token_line(entry)
        if any(f" {words} " in f" {line} " for line in lines):
            continue
        if len(entry) > MAX_CHARS["pattern"] and all(  # past what a pattern holds: by clauses
            any(f" {token_line(c)} " in f" {line} " for line in lines)
            for c in re.split(r"(?<=[;.!?])\s+", entry)
            if token_line(c)
        ):
            continue
        refused = [s["reason"] for s in skipped  # the report cuts a long one with `…`
                   if words.startswith(token_line(s["pattern"].removesuffix("…")))]  # fmt: skip
        head = " ".join(words.split()[:6])
        outcome = source_of(plan, "", "", texts[plan]).outcome
        if outcome != truth[plan]:
            kind, detail = f"outcome read as {outcome}", f"built as {truth[plan]}"
        elif refused:
            kind, detail = "refused: " + refused[0].split(" (")[0].split(" of ")[0], refused[0]
        elif entry not in established(texts[plan]):
            kind, detail = "read otherwise", f"read as {established(texts[plan])}"
        elif not_a_pattern(entry):
            kind, detail = "taken for no pattern", f"it {not_a_pattern(entry)}"
        elif any(f" {head} " in f" {line} " for line in lines):
            kind, detail = "cut short", "a row holds its beginning only"
        else:
            kind, detail = "never proposed", "no group led or quoted it"
        problems.append(f"(b) declared entry not written or quoted [{kind}]: {plan}: {entry!r}; "
                        f"{detail}")  # fmt: skip
    return problems


def row_problems(written: WrittenPhase, rows: list[dict[str, str]]) -> list[str]:
    """(c) each row against the second reader and the corpus eval's own gates."""
    texts = {plan: as_cited(path.parent, read_summary(path))
             for plan, path in written.files.items()}  # as the corpus eval reads a summary  # fmt: skip
    problems: list[str] = []
    earlier: list[str] = []
    for number, values in enumerate(rows, 1):
        ids = [s for s in split_list(values.get("source", "")) if s]
        unknown = [i for i in ids if i not in texts]
        if not ids or unknown:
            problems.append(f"(c) cites a plan that does not exist: row {number} cites {ids}")
        said = "\n".join(texts[i] for i in ids if i in texts)
        known = [*ids, *phase_names(ids)]
        flag = oracle_flag(values, said, known, earlier)
        if flag:
            problems.append(f"(c) second reader: {flag} | row {number}: {values}")
        why = not_a_pattern(values.get("pattern", ""))
        if why:
            problems.append(f"(c) the pattern {why}: row {number}: {values.get('pattern')!r}")
        new = [e for k in FIELDS for e in new_entities(values.get(k, ""), said, known)]
        if new:
            problems.append(f"(c) names what its sources do not state: row {number}: {new}")
        earlier.append(values.get("pattern", ""))
    return problems


def distill_problems(written: WrittenPhase) -> list[str]:
    """Every property (module docstring) on one written phase: the problems found."""
    phase, root = written.phase, written.root
    paths = MemoryPaths(root)
    spec = [phase.phase_spec]
    before = snapshot(root)
    try:  # (e) the dry run
        preview = run_distill(paths, offline(), today=TODAY, dry_run=True, phases=spec)
    except Exception:
        return [_raised("(a) the dry run")]
    problems = [] if snapshot(root) == before else ["(e) the dry run wrote or changed a file"]
    try:  # (a) the run
        first = run_distill(paths, offline(), today=TODAY, phases=spec)
    except Exception:
        return [*problems, _raised("(a) distill")]
    records = read_knowledge(PATTERNS, paths.patterns).records
    rows = [{k: str(v) for k, v in r.values.items()} for r in records]
    if len(rows) != len(first.written):
        problems.append(f"(a) {len(first.written)} rows reported, {len(rows)} in PATTERNS.md")
    shown = [(w["pattern"], w["source"]) for w in preview.written]
    if shown != [(r.get("pattern"), r.get("source")) for r in rows]:
        problems.append(f"(e) the dry run showed {shown}, the run wrote "
                        f"{[(r.get('pattern'), r.get('source')) for r in rows]}")  # fmt: skip
    problems += declared_problems(phase, rows, first.skipped)
    problems += row_problems(written, rows)
    after = snapshot(root)
    try:  # (d) the second run
        second = run_distill(paths, offline(), today=TODAY, phases=spec)
    except Exception:
        return [*problems, _raised("(a) the second run")]
    if second.written or snapshot(root) != after:
        problems.append(f"(d) the second run wrote {[w['pattern'] for w in second.written]}")
    missing = str(phase.number % 99 + 1)  # a phase the project does not have
    try:
        run_distill(paths, offline(), today=TODAY, phases=[missing])
        problems.append(f"(a) phase {missing} does not exist, and distill raised nothing")
    except LegionError as exc:
        if "\n" in str(exc) or not str(exc).strip():
            problems.append(f"(a) phase {missing}: the message is not one line: {str(exc)!r}")
    except Exception:
        problems.append(_raised(f"(a) distill of the missing phase {missing}"))
    return problems


def check_phase(phase: SummaryPhase, keep: Path | None = None) -> list[str]:
    """Write `phase` in a fresh temporary folder (or in `keep`, left for a look) and hold every
    property on it."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        return distill_problems(write_phase(phase, keep))
    with tempfile.TemporaryDirectory(prefix="legion-llm-distill-gen-") as folder:
        return distill_problems(write_phase(phase, Path(folder)))


SETTINGS: dict[str, Any] = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=EXAMPLES, **SETTINGS)
@given(phase=summary_phases())
def test_every_generated_phase_distils_to_rows_both_readers_accept(phase: SummaryPhase) -> None:
    problems = check_phase(phase)
    assert problems == [], "\n".join(problems)
