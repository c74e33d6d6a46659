"""Properties of the phase generator itself: what it records is true of what it writes.

These tests read the written files back as plain text; they never use the product.
"""

from __future__ import annotations

import ast
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.strategies import phases
from tests.strategies.phases import (
    LANGUAGES,
    GeneratedPhase,
    PhaseSpec,
    occurs_as_id,
    phase_specs,
    related,
    render_files,
    spec_features,
    truth_problems,
    write_phase,
)

FAST = settings(max_examples=60, derandomize=True, deadline=None, database=None)
# The coverage run only draws and renders (no files): a larger budget stays cheap.
COVERAGE = settings(max_examples=300, derandomize=True, deadline=None, database=None)


@contextmanager
def written(spec: PhaseSpec) -> Iterator[GeneratedPhase]:
    with tempfile.TemporaryDirectory(prefix="phase-gen-") as folder:
        yield write_phase(spec, Path(folder))


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def summaries_of(phase: GeneratedPhase) -> list[str]:
    return [read(phase.phase_dir / name) for name in phase.summary_files]


def every_file_of(phase: GeneratedPhase) -> list[str]:
    return [read(p) for p in phase.root.rglob("*") if p.is_file()]


@FAST
@given(phase_specs())
def test_the_phase_folder_holds_exactly_the_recorded_files(spec: PhaseSpec) -> None:
    with written(spec) as phase:
        assert phase.phase_dir == phase.root / phase.phase_arg
        assert phase.phase_dir.is_dir()
        on_disk = {
            p.relative_to(phase.phase_dir).as_posix()
            for p in phase.phase_dir.rglob("*")
            if p.is_file()
        }
        assert on_disk == set(phase.summary_files) | set(phase.non_summary_files)
        assert not set(phase.summary_files) & set(phase.non_summary_files)
        assert len(set(phase.summary_files)) == len(phase.summary_files) >= 1
        assert all(name.endswith("SUMMARY.md") for name in phase.summary_files)
        token = phases.phase_token(phase.phase_number)
        assert f"{token}-" in phase.phase_dir.name
        assert sorted(phase.written_files) == sorted(
            p.relative_to(phase.root).as_posix() for p in phase.root.rglob("*") if p.is_file()
        )


@FAST
@given(phase_specs())
def test_requirement_ids_are_where_the_truth_says(spec: PhaseSpec) -> None:
    with written(spec) as phase:
        summaries = summaries_of(phase)
        everything = every_file_of(phase)
        assert phase.reported_ids <= phase.declared_ids
        for req_id in phase.declared_ids:
            assert any(occurs_as_id(req_id, text) for text in everything), req_id
        for req_id in phase.reported_ids:
            assert any(occurs_as_id(req_id, text) for text in summaries), req_id
        for req_id in phase.declared_ids - phase.reported_ids:
            assert not any(occurs_as_id(req_id, text) for text in summaries), req_id
        assert phase.passed_ids <= phase.reported_ids
        assert phase.unfinished_ids <= phase.reported_ids
        assert not phase.passed_ids & phase.unfinished_ids


@FAST
@given(phase_specs())
def test_decoys_and_foreign_ids_are_written_but_never_declared(spec: PhaseSpec) -> None:
    with written(spec) as phase:
        summaries = summaries_of(phase)
        everything = every_file_of(phase)
        assert not phase.decoy_ids & phase.declared_ids
        assert not phase.foreign_ids & phase.declared_ids
        for token in phase.decoy_ids:
            assert any(occurs_as_id(token, text) for text in everything), token
            assert not any(related(token, i) for i in phase.declared_ids), token
        for req_id in phase.foreign_ids:
            assert not any(occurs_as_id(req_id, text) for text in summaries), req_id


@FAST
@given(phase_specs())
def test_listed_paths_are_verbatim_in_summaries(spec: PhaseSpec) -> None:
    with written(spec) as phase:
        summaries = summaries_of(phase)
        assert len(set(phase.listed_paths)) == len(phase.listed_paths)
        for path in phase.listed_paths:
            assert any(path in text for text in summaries), path
        for path in phase.prose_only_paths:
            assert path not in phase.listed_paths
            assert any(path in text for text in summaries), path
        for path in phase.distractor_only_paths:
            assert path not in phase.listed_paths and path not in phase.prose_only_paths
        assert not set(phase.foreign_paths) & set(phase.listed_paths)
        assert phase.originals_chars == sum(len(text) for text in summaries)


@settings(max_examples=20, derandomize=True, deadline=None, database=None)
@given(phase_specs())
def test_a_spec_writes_identical_bytes_every_time(spec: PhaseSpec) -> None:
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        first, second = write_phase(spec, Path(one)), write_phase(spec, Path(two))
        files = sorted(p.relative_to(one) for p in Path(one).rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(two) for p in Path(two).rglob("*") if p.is_file())
        for relative in files:
            assert (Path(one) / relative).read_bytes() == (Path(two) / relative).read_bytes()
        assert first.declared_ids == second.declared_ids
        assert first.listed_paths == second.listed_paths


REQUIRED_FEATURES = (
    {f"container:{c}" for c in ("phases", "milestone", "archive")}
    | {f"summary-naming:{n}" for n in ("phase-plan", "plan-only", "single")}
    | {
        f"plan-naming:{n}"
        for n in ("phase-plan", "plan-after", "both", "plan-only", "single", "none")
    }
    | {f"sibling:{s}" for s in ("none", "other-milestone", "current-phases", "same-folder")}
    | {
        "layout:decimal",
        "layout:prefixed",
        "layout:letter-suffix",
        "layout:unlisted",
        "layout:gap-plan",
        "layout:unicode-slug",
    }
    | {f"heading-language:{lang}" for lang in LANGUAGES}
    | {f"prose-language:{lang}" for lang in LANGUAGES}
    | {f"style:{s}" for s in ("gsd", "legion", "freeform", "tiny")}
    | {f"size:{s}" for s in ("tiny", "small", "medium", "large")}
    | {f"frontmatter:{f}" for f in ("full", "compact", "none")}
    | {f"status:{s}" for s in ("complete", "partial", "warnings", "failed")}
    | {f"status-style:{s}" for s in phases.STATUS_STYLES}
    | {f"channel:{c}" for c in ("fm", "body-line", "covered", "prose")}
    | {"tone:done", "tone:partial", "ids:unreported"}
    | {f"req-key:{k}" for k in phases.REQ_KEYS}
    | {f"req-style:{s}" for s in ("flow", "block", "quoted", "commented")}
    | {f"list:{k}" for k in phases.FM_LIST_KINDS + phases.BODY_LIST_KINDS}
    | {f"list-key:{k}" for k in phases.KEY_FILES_KEYS + phases.FLAT_KEYS}
    | {f"decoy:{k}" for k in phases.DECOY_KINDS}
    | {f"distractor:{k}" for k in (*phases.DISTRACTOR_KINDS, "evidence")}
    | {f"roadmap:{s}" for s in ("gsd", "legion", "blockquote", "checklist")}
    | {"requirements-doc:top", "requirements-doc:milestone"}
    | {f"id:{s}" for s in phases.ID_SHAPES}
    | {f"path:{s}" for s in phases.PATH_SHAPES}
    | {"path:bulk", "path:same-name-two-folders", "path:nested-and-bare"}
    | {"paths:prose-only", "paths:distractor-only", "crlf", "bom"}
    | {"summary:one-line", "summary:about-20kb", "plans:1", "plans:8"}
)


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_generator_writes_every_language(language: str) -> None:
    seen: set[str] = set()

    @settings(max_examples=25, derandomize=True, deadline=None, database=None)
    @given(phase_specs((language,)))
    def collect(spec: PhaseSpec) -> None:
        seen.update(spec_features(spec))

    collect()
    assert {f"heading-language:{language}", f"prose-language:{language}"} <= seen


@pytest.mark.slow
def test_the_generator_reaches_every_dimension() -> None:
    seen: set[str] = {
        f"{kind}-language:{lang}" for kind in ("heading", "prose") for lang in LANGUAGES
    }  # fmt: skip (the test above: every language)

    @COVERAGE
    @given(phase_specs())
    def collect(spec: PhaseSpec) -> None:
        seen.update(spec_features(spec))
        seen.add(f"plans:{len(spec.plans)}")
        files = render_files(spec)
        folder = phases.phase_folder(spec)
        for plan in spec.plans:
            text = files[f"{folder}/{plan.summary_name}"]
            if text.count("\n") <= 3:
                seen.add("summary:one-line")
            if len(text.encode("utf-8")) >= 16_000:
                seen.add("summary:about-20kb")
            assert len(text.encode("utf-8")) < 32_000

    collect()
    missing = REQUIRED_FEATURES - seen
    assert not missing, sorted(missing)


@FAST
@given(phase_specs())
def test_the_self_check_agrees_with_the_strategy(spec: PhaseSpec) -> None:
    assert truth_problems(spec, render_files(spec)) == []


def test_the_generator_is_written_apart_from_the_product() -> None:
    source = Path(phases.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    standard = {"__future__", "collections", "dataclasses", "functools", "pathlib", "re", "typing"}
    assert imported <= standard | {"hypothesis", "unicodedata"}, imported
