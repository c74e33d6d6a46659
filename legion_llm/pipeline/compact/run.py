"""Semantic phase compaction (memory-manager Section 12) that provably keeps every id and path.

    prepare   (deterministic) read the plan summaries, extract requirement ids, paths, plans
    propose   the engine fills a PhaseDigest (Claude, or the offline extractive step); a phase
              too large for one call is proposed plan by plan (a huge plan in parts) and merged
    verify    render the exact COMPACTED.md text and check recall, inventions and length;
              on a miss, or a ratio above 0.50, re-ask once listing what is wrong
    repair    insert what is still missing in its section (Verification, Files Modified) and
              strike what was invented, each with a warning
    write     atomically, only when verification passes; originals are never touched

Nothing is ever truncated: text that does not fit one call is split, never cut.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError, LegionError
from legion_llm.llm.budget import pack_chunks
from legion_llm.llm.engine import Answer, Engine
from legion_llm.llm.tokens import count_tokens, with_safety
from legion_llm.memory.files import atomic_write, locked, or_print, read_text
from legion_llm.memory.phases.extract import PhaseFacts, normalise, phase_facts
from legion_llm.memory.phases.find import Phase
from legion_llm.memory.redact import project_redactor, text_hits, write_warning
from legion_llm.pipeline.compact.offline import (
    LEVELS,
    MAX_RATIO,
    PROMPT,
    TARGET_RATIO,
    CompactContext,
    PlanDoc,
    digest_at,
)
from legion_llm.pipeline.compact.render import Header, PhaseDigest, merge, render
from legion_llm.pipeline.compact.repair import repair
from legion_llm.pipeline.compact.split import chunk_facts, prompt_variables, split_doc
from legion_llm.pipeline.compact.verify import (
    Sources,
    VerifyReport,
    originals_tokens,
    verify_document,
)

CALL_CAP_TOKENS = 30_000  # per call: keeps each answer inside the output limit at the 0.40 target
OUTPUT_CAP_TOKENS = 16_000
PROMPT_ROOM_TOKENS = 1_500  # the prompt file's own text, tool overhead and a re-ask's feedback


class CompactionError(LegionError):
    """A compacted summary failed verification even after the re-ask and the repair."""


@dataclass(frozen=True)
class Prepared:
    phase: Phase
    facts: PhaseFacts
    docs: tuple[PlanDoc, ...]
    roadmap_text: str | None
    tokens_original: int
    sources: Sources


def prepare(phase: Phase) -> Prepared:
    """Read the plan summaries (never modified) and extract what must survive."""
    texts = [(pid, path.name, normalise(read_text(path) or "")) for pid, path in phase.summaries]
    facts = phase_facts(texts, phase.roadmap.requirement_ids)
    roadmap = read_text(phase.roadmap.path) if phase.roadmap.path else None
    docs = tuple(PlanDoc(plan, text) for plan, (_, _, text) in zip(facts.plans, texts, strict=True))
    summaries = [text for _, _, text in texts]
    sources = Sources.build(summaries, roadmap, facts, _own_files(phase))
    return Prepared(phase, facts, docs, roadmap, originals_tokens(summaries), sources)


def check_compacted(phase: Phase) -> tuple[str, VerifyReport]:
    """Verify the phase's existing COMPACTED.md (made by us or by anyone) against its originals."""
    text = read_text(phase.compacted_path)
    if text is None:
        raise InputError(f"{phase.compacted_path} does not exist (run `legion-llm compact`)")
    prep = prepare(phase)
    report = verify_document(normalise(text), prep.facts, prep.sources,
                             tokens_original=prep.tokens_original)  # fmt: skip
    return text, report


def _own_files(phase: Phase) -> list[str]:
    """Names a compacted summary may cite: its originals and the ROADMAP, as names and paths."""
    paths = [path for _, path in phase.summaries]
    if phase.roadmap.path:
        paths.append(phase.roadmap.path)
    names = [p.name for p in paths]
    return names + [str(p.relative_to(phase.root)) for p in paths if p.is_relative_to(phase.root)]


def precondition_problems(phase: Phase) -> list[str]:
    """Why the spec's preconditions do not hold (empty when they do)."""
    problems = []
    if not phase.roadmap.complete:
        where = "ROADMAP.md" if phase.roadmap.found else "ROADMAP.md (the phase is not in it)"
        problems.append(f"phase {phase.key} is not marked complete in {where}")
    if phase.missing_summaries:
        listed = ", ".join(phase.missing_summaries)
        problems.append(f"plan(s) {listed} have a PLAN but no SUMMARY")
    return problems


@dataclass
class CompactResult:
    path: Path
    text: str
    report: VerifyReport
    facts: PhaseFacts
    repaired: list[str]
    warnings: list[str]
    answers: list[dict[str, Any]]
    engine: str
    written: bool = False
    forced_reason: str | None = None
    chunks: int = 1

    @property
    def fell_back(self) -> bool:
        return any(a["fallback_reason"] for a in self.answers)

    def as_dict(self) -> dict[str, Any]:
        """The --json data of `compact` (the CLI adds `usage`)."""
        return {
            "path": str(self.path),
            "ratio": self.report.ratio,
            "requirement_ids": list(self.facts.requirement_ids),
            "paths": list(self.facts.paths),
            "missing_after_repair": self.report.missing_ids + self.report.missing_paths,
            "repaired": self.repaired,
            "engine": self.engine,
            "fell_back": self.fell_back,
            "written": self.written,
            "forced": self.forced_reason is not None,
            "tokens_original": self.report.tokens_original,
            "tokens_output": self.report.tokens_output,
            "chunks": self.chunks,
            "answers": self.answers,
        }


@dataclass
class _Run:
    prep: Prepared
    engine: Engine
    header: Header
    answers: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def compact_phase(
    phase: Phase,
    engine: Engine,
    *,
    today: date,
    force: bool = False,
    write: bool = True,
    call_budget: int | None = None,
) -> CompactResult:
    """Compact one phase; writes `{NN}-COMPACTED.md` when `write` and verification passes."""
    problems = precondition_problems(phase)
    if not phase.summaries:
        raise InputError(f"phase {phase.key} ({phase.folder}) has no plan SUMMARY files")
    if problems and not force:
        raise InputError("; ".join(problems) + " (pass --force to compact anyway)",
                         data={"problems": problems})  # fmt: skip
    exists = phase.compacted_path.exists()
    if exists and write and not force:
        raise InputError(f"{phase.compacted_path} exists; pass --force to replace it")
    prep = prepare(phase)
    run = _Run(prep, engine, header_for(prep, today, _forced_reason(force, problems, exists)))
    run.warnings += [f"warning: {p} (--force)" for p in problems]
    digest = _propose(run, _budget(engine, call_budget), len(prep.docs))
    return _finish(run, digest, write)


def _forced_reason(force: bool, problems: list[str], exists: bool) -> str | None:
    if not force:
        return None
    notes = problems + (["replaced the existing compacted summary"] if exists else [])
    return "; ".join(notes) or "--force given; every precondition held"


def header_for(prep: Prepared, today: date, forced_reason: str | None = None) -> Header:
    """What the pipeline decides for the rendered file: names, date, the --force note."""
    phase = prep.phase
    names = tuple(path.name for _, path in phase.summaries)
    return Header(phase.slug, phase.key, phase.name, names, prep.facts.plans, today, forced_reason)


def _budget(engine: Engine, explicit: int | None) -> int | None:
    if explicit is not None:
        return explicit
    limit = engine.input_budget(OUTPUT_CAP_TOKENS)
    return None if limit is None else min(limit, CALL_CAP_TOKENS)


def _propose(run: _Run, budget: int | None, plans: int) -> PhaseDigest:
    chunks = _chunks(run.prep, budget)
    digests = [_ask_chunk(run, chunk, single=len(chunks) == 1) for chunk in chunks]
    if len(chunks) > 1:
        run.warnings.append(
            f"notice: the phase is too large for one call; compacted {plans} plan(s) "
            f"in {len(chunks)} parts and merged"
        )
    return digests[0] if len(digests) == 1 else merge(digests)


def _chunks(prep: Prepared, budget: int | None) -> list[tuple[PlanDoc, ...]]:
    """All plans in one call when they fit, else plan by plan (long plans in parts), packed."""
    if budget is None:
        return [prep.docs]
    listed = prompt_variables(prep.phase, prep.docs, prep.facts, 0)
    lists = "\n".join(v for k, v in listed.items() if k != "summaries")
    overhead = with_safety(count_tokens(lists)) + PROMPT_ROOM_TOKENS
    count = _counter()
    if overhead + count("\n".join(d.text for d in prep.docs)) <= budget:
        return [prep.docs]
    parts = [part for doc in prep.docs for part in split_doc(doc, budget - overhead, count)]
    grouped = pack_chunks([p.text for p in parts], budget, count, overhead=overhead)
    chunks, index = [], 0
    for group in grouped:
        chunks.append(tuple(parts[index : index + len(group)]))
        index += len(group)
    return chunks


def _counter() -> Any:
    def count(text: str) -> int:
        return with_safety(count_tokens(text))

    return count


def _ask_chunk(run: _Run, docs: tuple[PlanDoc, ...], *, single: bool) -> PhaseDigest:
    prep = run.prep
    facts = prep.facts if single else chunk_facts(docs)
    tokens = originals_tokens([d.text for d in docs])
    header = Header(run.header.phase_slug, run.header.phase_key, run.header.phase_name,
                    run.header.summaries, tuple(d.facts for d in docs), run.header.compacted)  # fmt: skip

    def measure(digest: PhaseDigest) -> int:
        return count_tokens(render(header, digest))

    ctx = CompactContext(docs, facts.requirement_ids, facts.paths, tokens, measure)
    variables = prompt_variables(prep.phase, docs, facts, math.ceil(tokens * TARGET_RATIO))
    first = _ask(run, variables, ctx, tokens, reask=False)
    report = verify_document(render(header, first.output), facts, prep.sources,
                             tokens_original=tokens, strict=True)  # fmt: skip
    if (report.ok and report.ratio <= MAX_RATIO) or first.engine == "offline":
        return first.output
    feedback = _feedback(report, tokens)
    second = _ask(run, {**variables, "feedback": feedback}, ctx, tokens, reask=True)
    return second.output


def _ask(
    run: _Run, variables: dict[str, str], ctx: CompactContext, tokens: int, *, reask: bool
) -> Answer[PhaseDigest]:
    limit = run.engine.input_budget(OUTPUT_CAP_TOKENS)
    max_tokens = None if limit is None else min(OUTPUT_CAP_TOKENS, 4_096 + int(tokens * 0.6))
    answer = run.engine.ask(PhaseDigest, PROMPT, variables, context=ctx, max_tokens=max_tokens)
    run.answers.append({**answer.provenance(), "reask": reask,
                        "plans": [d.facts.id + (f" ({d.part})" if d.part else "") for d in ctx.docs]})  # fmt: skip
    return answer


def _feedback(report: VerifyReport, tokens: int) -> str:
    lines = [f"- {p}" for p in report.problems()]
    if report.ratio > MAX_RATIO:
        lines.append(
            f"- the document was about {report.tokens_output} tokens, {report.ratio:.2f} of the "
            f"originals; keep it under {int(tokens * TARGET_RATIO)} tokens"
        )
    return "Your previous proposal had these problems; fix all of them:\n" + "\n".join(lines)


def _finish(run: _Run, digest: PhaseDigest, write: bool) -> CompactResult:
    prep = run.prep
    fallback = offline_digest(prep, run.header)
    digest, repaired = repair(digest, prep.facts, prep.sources, fallback, run.header)
    text = render(run.header, digest)
    report = verify_document(text, prep.facts, prep.sources,
                             tokens_original=prep.tokens_original, strict=True)  # fmt: skip
    run.warnings += [f"warning: repaired: {r}" for r in repaired]
    if not report.ok:
        raise CompactionError(
            "the compacted summary still fails verification: " + "; ".join(report.problems()),
            data={"verify": report.as_dict()},
        )
    if not report.in_band():
        run.warnings.append(
            f"warning: length ratio {report.ratio:.2f} is outside the 0.30-0.50 target"
        )
    text = _redacted(run, text)
    result = CompactResult(prep.phase.compacted_path, text, report, prep.facts, repaired,
                           run.warnings, run.answers, _engine_label(run),
                           forced_reason=run.header.forced_reason)  # fmt: skip
    result.chunks = len({tuple(a["plans"]) for a in run.answers if not a["reask"]})
    if write:
        _write(prep.phase, text, run.header.forced_reason is not None)
        result.written = True
    return result


def _redacted(run: _Run, text: str) -> str:
    """The text to write (and show): secrets the originals held replaced by markers."""
    redactor = project_redactor(run.prep.phase.root)
    done = redactor.redact(text)
    name = run.prep.phase.compacted_path.name
    run.warnings += write_warning(redactor, text_hits(text, done.findings), name)
    return done.text


def _engine_label(run: _Run) -> str:
    engines = list(dict.fromkeys(a["engine"] for a in run.answers))
    return "+".join(engines) or run.engine.name


def offline_digest(prep: Prepared, header: Header, level: int = 1) -> PhaseDigest:
    """The offline step's digest of the whole phase (the repair's source of missing lines)."""

    def measure(digest: PhaseDigest) -> int:
        return count_tokens(render(header, digest))

    ctx = CompactContext(prep.docs, prep.facts.requirement_ids, prep.facts.paths,
                         prep.tokens_original, measure)  # fmt: skip
    return digest_at(ctx, LEVELS[level])


def _write(phase: Phase, text: str, force: bool) -> None:
    """Atomic write under the folder's lock; an existing file is replaced only with --force. A
    write that fails raises WriteFailedError holding the text (the CLI prints it, exit 3)."""
    path = phase.compacted_path
    with (
        or_print(f"could not write {path}", text, {"path": str(path)}),
        locked(phase.folder, root=phase.root),
    ):
        if path.exists() and not force:
            raise InputError(f"{path} exists; pass --force to replace it")
        atomic_write(path, text, root=phase.root)
