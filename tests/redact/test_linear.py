"""The structures that keep redaction linear in the number of secrets (issue 25, point 9; the
timings are benchmarks/bench_redaction.py's): they answer what the quadratic scans answered."""

from __future__ import annotations

import random

from legion_llm.memory.redact import Redactor
from legion_llm.memory.redact.core import Finding, Lines, _Placer, _Spans
from tests.redact.samples import SAMPLES, sample


def test_lines_of_many_findings_are_those_counted_one_by_one() -> None:
    rng = random.Random(9)
    text = "".join(rng.choice("ab\n") for _ in range(5_000))
    lines = Lines(text)
    for start in range(0, len(text), 37):
        finding = Finding("x", start, start + 1)
        assert lines.of(finding) == finding.line(text)


def test_spans_cover_exactly_when_one_span_holds_the_range() -> None:
    rng = random.Random(10)
    spans = [(a, a + rng.randint(0, 40)) for a in (rng.randint(0, 1_000) for _ in range(200))]
    index = _Spans(spans)
    for _ in range(2_000):
        start = rng.randint(0, 1_050)
        end = start + rng.randint(1, 30)
        assert index.covers(start, end) == any(a <= start and end <= b for a, b in spans)


def test_placing_back_matches_the_walk_over_every_earlier_finding() -> None:
    earlier = [Finding("github-token", i * 100 + 10, i * 100 + 50) for i in range(50)]
    placer = _Placer(earlier)
    shift = len("[REDACTED:github-token]") - 40
    for i in range(50):  # a place right after the i-th marker, in the replaced text
        after = i * 100 + 10 + (i + 1) * shift + 40 + 5
        assert placer.back(after) == i * 100 + 55


def test_many_secrets_in_one_text_are_each_found_once() -> None:
    token = sample("github-token")
    text = "\n".join(f"row {i}: {s.text}" for i in range(300) for s in SAMPLES)
    done = Redactor().redact(text)
    assert not any(s.secret in done.text for s in SAMPLES)
    assert sum(f.kind == token.kind for f in done.findings) >= 300
    assert Redactor().find(done.text) == []  # redacting again finds nothing
