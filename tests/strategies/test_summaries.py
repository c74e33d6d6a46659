"""Properties of the plan-summary generator itself (tests/strategies/summaries.py): it draws every
shape it claims, and what it records is true of what it writes.

These tests read the written files back as plain text; they never use the product.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from tests.strategies.summaries import (
    FAILED,
    PARTIAL,
    SUCCESS,
    SummaryPhase,
    summary_phases,
    write_phase,
)

COVERAGE = 200  # draws only, no files: a larger budget stays cheap
MUST_SHOW = (
    "flow", "block", "double_quoted", "single_quoted", "comma_in_quotes", "escaped_double_quote",
    "escaped_double_quote_flow", "doubled_single_quote_flow", "code", "colon", "number",
    "non_ascii", "statuslike", "long_entry", "folded_entry", "comment_in_list", "empty_list",
    "key_underscore", "no_frontmatter", "crlf", "bom", "over_3kb", "under_400b",
    "success", "partial", "failed", "status_bold", "status_bold_inside", "status_heading",
    "status_quote", "status_frontmatter", "status_none", "status_none_self_check_failed",
    "followed_plan", "key_decisions_frontmatter", "decisions_section", "decisions_see_frontmatter",
    "decision_restates_entry", "fix_line", "fix_gsd", "lessons", "conventions_line",
    "verification_ticks", "verification_count", "verification_self_check", "verification_none",
    "title_phase_plan", "title_plan_summary", "title_bare", "title_none",
    "shared", "shared_three", "shared_four_plus",
)  # fmt: skip
_seen: Counter[str] = Counter()


@settings(max_examples=COVERAGE, derandomize=True, database=None, deadline=None)
@given(phase=summary_phases())
def _draw_features(phase: SummaryPhase) -> None:
    _seen.update(phase.features)
    _seen[f"plans_{len(phase.plans)}"] += 1


@pytest.mark.slow  # about 1.4 s on its own
def test_the_generator_draws_every_shape_it_claims() -> None:
    """Over COVERAGE examples, at least one phase of each shape and of each plan count, so the
    generator cannot silently shrink its coverage."""
    _seen.clear()
    _draw_features()
    missing = [name for name in MUST_SHOW if not _seen[name]]
    assert missing == [], missing
    assert [n for n in range(1, 6) if not _seen[f"plans_{n}"]] == [], _seen


def words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


_STATUS = re.compile(
    r"^(?:>\s*)?(?:\*\*Status\*\*:|\*\*Status:\*\*|## Status:|status:)\s*(.+)$", re.M | re.I
)


def stated_outcome(text: str) -> str:
    """The outcome the text states, read by this test alone: its first status line, else a
    failed self-check, else success."""
    match = _STATUS.search(text)
    if match is None:
        return PARTIAL if "## Self-Check: FAILED" in text else SUCCESS
    value = match.group(1).lower()
    if "fail" in value or "block" in value:
        return FAILED
    return PARTIAL if "partial" in value or "warning" in value else SUCCESS


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(phase=summary_phases())
def test_what_the_generator_records_is_in_what_it_writes(phase: SummaryPhase) -> None:
    """The folder holds exactly the recorded summaries; each file's bytes are the recorded text
    (with CRLF and a BOM exactly when recorded); each declared entry's words are in its
    frontmatter; the status written states the recorded outcome; shared plans exist."""
    with tempfile.TemporaryDirectory(prefix="legion-llm-summary-gen-") as folder:
        written = write_phase(phase, Path(folder))
        assert written.phase_dir.name == f"{phase.number:02d}-{phase.slug}"
        on_disk = sorted(p.name for p in written.phase_dir.iterdir())
        assert on_disk == sorted(p.file_name for p in phase.plans)
        assert len(phase.plans) == len(set(phase.plan_ids)) and 1 <= len(phase.plans) <= 5
        for plan in phase.plans:
            data = written.files[plan.plan_id].read_bytes()
            assert data.startswith(b"\xef\xbb\xbf") == ("bom" in plan.features)
            assert (b"\r\n" in data) == ("crlf" in plan.features)
            assert data.decode("utf-8-sig").replace("\r\n", "\n") == plan.text
            assert plan.file_name == f"{plan.plan_id}-SUMMARY.md"
            front = plan.text.split("\n---\n", 1)[0] if plan.text.startswith("---\n") else ""
            for entry in plan.established:
                assert words(entry) in words(front), (plan.plan_id, entry)
            assert stated_outcome(plan.text) == plan.outcome, plan.plan_id
    for members in phase.shared:
        assert len(members) >= 2 and set(members) <= set(phase.plan_ids)
    assert all(e for _, e in phase.declared())
