"""Compaction holds on phases nobody has seen: properties over generated phases.

tests/strategies/phases.py invents phases of every shape the real corpus shows and more (ids,
paths, layouts, frontmatter spellings, languages, sizes) and records the truth from how it built
them; tests/oracle/compaction.py is a second reader written apart from the product. For every
generated phase, run as a user runs it (`compact FOLDER --engine offline --force`, then
`verify-compaction`; and on fewer of them through the careless stand-in model):

- a file is written and its own verify is OK (or, for summaries shorter than any compacted
  summary can be, nothing is written and `compact` says so);
- the independent oracle is satisfied (every declared id has its one verdict line and no other
  id has one, every listed file is a Files row once in its full form, no row names what the
  originals do not, no suffix rows, no longer than the originals);
- against the generator's truth: the verdict lines are exactly the declared ids, no decoy or
  foreign id has a verdict, every listed path is kept, an id no summary reports is NOT VERIFIED.

A fixed example budget and seed here (derandomize); `benchmarks/bench_compaction_properties.py`
runs the same properties over many more examples.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings

from legion_llm.entry import main
from legion_llm.memory.phases.find import find_phase
from tests.fakes import FakeMessagesAPI
from tests.fakes.compaction_models import PhaseModel
from tests.oracle.compaction import check
from tests.strategies.phases import GeneratedPhase, PhaseSpec, phase_specs, write_phase

pytestmark = pytest.mark.slow
EXAMPLES = 40
CARELESS_EXAMPLES = 15
KEY = "sk-ant-test-generated-0000000000"
_VERDICT_LINE = re.compile(r"^- (\S+): (PASS|FAIL|PARTIAL|NOT VERIFIED)\b", re.M)


def run(*args: str | Path) -> tuple[int, str, str]:
    """`legion-llm ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
    return code, out.getvalue(), err.getvalue()


def verdicts(text: str) -> dict[str, list[str]]:
    body = text.split("## Verification", 1)[-1]
    found: dict[str, list[str]] = {}
    for rid, verdict in _VERDICT_LINE.findall(body):
        found.setdefault(rid, []).append(verdict)
    return found


def compacted_file(phase: GeneratedPhase) -> Path:
    [path] = phase.phase_dir.glob("*-COMPACTED.md")
    return path


def truth_problems(phase: GeneratedPhase, text: str) -> list[str]:
    """What the written file gets wrong against the generator's recorded truth."""
    problems = []
    said = verdicts(text)
    if set(said) != set(phase.declared_ids):
        problems.append(f"verdicts for {sorted(said)} but declared {sorted(phase.declared_ids)}")
    problems += [f"{rid} has {len(v)} verdict lines" for rid, v in said.items() if len(v) > 1]
    wrong = (phase.decoy_ids | phase.foreign_ids) - phase.declared_ids
    problems += [f"{rid} is no requirement of this phase" for rid in sorted(set(said) & wrong)]
    unreported = phase.declared_ids - phase.reported_ids
    problems += [f"{rid}: {said[rid]} though no summary reports it" for rid in sorted(unreported)
                 if said.get(rid, ["NOT VERIFIED"]) != ["NOT VERIFIED"]]  # fmt: skip
    problems += [f"{rid} passed but written {said.get(rid)}" for rid in sorted(phase.passed_ids)
                 if said.get(rid) != ["PASS"]]  # fmt: skip
    problems += [f"listed file {p} is not kept" for p in phase.listed_paths if p not in text]
    return problems


def compact_and_check(spec: PhaseSpec, engine: str = "offline", keep: Path | None = None) -> None:
    """Compact one generated phase as a user does and hold every property on what is written
    (`engine`: `anthropic` asks the careless stand-in model through the real SDK; `keep`: the
    folder to write the phase in, left for a look)."""
    with tempfile.TemporaryDirectory(prefix="legion-llm-generated-") as folder:
        phase = write_phase(spec, keep or Path(folder))
        root = phase.root
        args = ("compact", phase.phase_arg, "--engine", engine, "--force", "--root", root)
        answered = None
        if engine == "offline":
            code, out, err = run(*args)
        else:
            model = PhaseModel(find_phase(root, phase.phase_arg), careless=True)
            with (
                FakeMessagesAPI(responder=model) as api,
                mock.patch.dict(
                    os.environ, {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
                ),
            ):
                code, out, err = run(*args)
            answered = model.answered
        assert code == 0, err
        if answered is not None and not out.startswith("Nothing to compact"):
            assert answered >= 1, "the model was never asked"
        if out.startswith("Nothing to compact"):  # its summaries are their own compaction
            assert not list(phase.phase_dir.glob("*-COMPACTED.md"))
            assert phase.originals_chars < 1_200, out
            return
        text = compacted_file(phase).read_text(encoding="utf-8")
        code, out, err = run("verify-compaction", phase.phase_arg, "--root", root)
        assert code == 0, out + err
        oracle = check(phase.phase_dir, root / ".planning", phase.phase_number, text)
        assert oracle == [], oracle
        wrong = truth_problems(phase, text)
        assert wrong == [], wrong


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(spec=phase_specs())
def test_every_generated_phase_compacts_to_a_file_both_readers_accept(spec: PhaseSpec) -> None:
    compact_and_check(spec)


@settings(max_examples=CARELESS_EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(spec=phase_specs())
def test_a_careless_models_answer_on_every_generated_phase_is_held_to_the_same_rules(
    spec: PhaseSpec,
) -> None:
    """The careless stand-in (tests/fakes/compaction_models.py: drops ids and paths, invents a
    sibling path, appends a clause naming what no summary states, pads, uses placeholders)
    through the real SDK and a loopback fake: the same file properties hold, and so no model
    entity is new (its own verify refuses one)."""
    compact_and_check(spec, engine="anthropic")


def _same(a: str, b: str) -> bool:
    """Equal as render writes a text: white space made single, a decision's closing period."""
    return " ".join(a.split()).rstrip(".") == " ".join(b.split()).rstrip(".")


@settings(max_examples=25, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(spec=phase_specs())
def test_what_render_writes_parse_reads_back_as_written(spec: PhaseSpec) -> None:
    """One reader for the writer: verify-compaction judges exactly the digest compact wrote."""
    from datetime import date

    from legion_llm.memory.phases.find import find_phase
    from legion_llm.pipeline.compact.parse import parse_document
    from legion_llm.pipeline.compact.prepare import header_for, offline_proposal, prepare
    from legion_llm.pipeline.compact.render import render

    with tempfile.TemporaryDirectory(prefix="legion-llm-roundtrip-") as folder:
        phase = write_phase(spec, Path(folder))
        prep = prepare(find_phase(phase.root, phase.phase_arg))
        header = header_for(prep, date(2026, 12, 7))
        digest = offline_proposal(prep, header)
        back = parse_document(render(header, digest)).digest
    assert [(d.plan_id, " ".join(d.summary.split())) for d in back.deliverables] == [
        (d.plan_id, " ".join(d.summary.split()) or "not recorded in the summary")
        for d in digest.deliverables]  # fmt: skip
    assert [(r.requirement_id, r.verdict) for r in back.verification] == [
        (r.requirement_id, r.verdict) for r in digest.verification]  # fmt: skip
    assert [f.path for f in back.files] == [f.path for f in digest.files if f.change != "\x00moved"]
    assert all(_same(a.decision, b.decision) and a.plan_id == b.plan_id
               for a, b in zip(back.decisions, digest.decisions, strict=True))  # fmt: skip
