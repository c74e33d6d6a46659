"""`eval distill --corpus` through a careless stand-in model, the real SDK and the loopback fake,
on every real project under ../shared/realworld*: what the offline engine holds by construction
holds for a model's proposals too (tests/fakes/distill_models.py lists its mistakes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPORA, NO_CORPUS, copy_corpus
from tests.fakes import FakeMessagesAPI
from tests.fakes.distill_models import CarelessDistiller

pytestmark = [pytest.mark.skipif(not CORPORA, reason=NO_CORPUS), pytest.mark.corpus]
KEY = "sk-ant-test-careless-distill-0000000"


def test_a_careless_model_writes_no_status_no_file_list_nothing_unsupported_no_repeat(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = copy_corpus(tmp_path / "corpus")
    model = CarelessDistiller()
    out = tmp_path / "log.json"
    with FakeMessagesAPI(responder=model) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = cli("eval", "distill", "--corpus", corpus, "--engine", "anthropic",
                     "--max-cost", "100", "--root", tmp_path, "--out", out, "--json")  # fmt: skip
    data = result.json["data"]
    summary = data["summary"]
    assert result.exit_code == 0 and data["passed"], data["failed_gates"]
    assert model.calls > 0 and summary["errors"] == 0
    assert summary["not_patterns"] == summary["unsupported"] == summary["near_duplicates"] == 0
    assert summary["second_run_written"] == 0 and summary["oracle_flags"] == 0
    # the model's good pattern is the declared entry, so most of what is declared is written;
    # its tags are the same two words on every pattern, so two short patterns of one project
    # can look alike to the topic matcher and the second is refused (measured 0.90: a refusal,
    # never a wrong row; a model's recall is reported, not gated)
    assert summary["written"] > 0 and summary["recall"] >= 0.85
    # every careless answer had five mistakes beside its good pattern: all refused
    assert summary["skipped"] >= 5 * (summary["written"] // 2)
    assert data["usage"]["engine"] == "anthropic"
