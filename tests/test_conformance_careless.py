"""Compaction through a careless stand-in model, the real SDK and the loopback fake, on every
real phase of every corpus under ../shared/realworld*: the invariant holds for a model as it does offline.

The stand-in (tests/fakes/compaction_models.py) answers like a competent but careless model:
its own words, every fifth id and path dropped, a sibling path invented, evidence that quotes
the summaries without naming the plan, a clause of its own appended to a deliverable (`cached
in Redis for 24 hours`: a fact no summary states), placeholder change texts, an item padded
past its limit. Each is repaired for free (the invented fact by cutting its clause), so a file
is written and verified for every phase, and the model's text is kept on nearly every one
(`eval compaction --corpus` gates the share that falls back).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.evals.compaction_corpus import corpus_gates, corpus_phases
from legion_llm.memory.phases.find import find_phase
from tests.conftest import CORPORA, NO_CORPUS, copy_corpus
from tests.fakes import FakeMessagesAPI
from tests.fakes.compaction_models import CorpusModel

pytestmark = [pytest.mark.skipif(not CORPORA, reason=NO_CORPUS), pytest.mark.corpus]
KEY = "sk-ant-test-careless-000000000000"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_corpus(tmp_path_factory.mktemp("careless"))


def phases_of(corpus: Path) -> list[Any]:
    found = []
    for _, folder in corpus_phases(corpus):
        root = folder
        while not (root / ".planning").is_dir():
            root = root.parent
        found.append(find_phase(root, str(folder)))
    return found


@pytest.mark.parametrize("reask", ["fix", "missing"])
def test_a_careless_model_gets_a_verified_file_on_every_real_phase(
    cli: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reask: str
) -> None:
    model = CorpusModel(phases_of(corpus), {"careless": True, "reask": reask})
    with FakeMessagesAPI(responder=model) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = cli("eval", "compaction", "--corpus", corpus, "--engine", "anthropic",
                     "--root", tmp_path, "--json")  # fmt: skip
        calls = len(api.calls())
    data = result.json["data"]
    summary, gate = data["summary"], corpus_gates()["max_fallback_share"]
    assert result.exit_code == 0 and data["passed"], data["failed_gates"]
    assert summary["errors"] == 0 and summary["verified"] == summary["phases"] >= 60
    assert summary["ratio_max"] <= 1.0
    assert summary["fallback_share"] <= gate
    assert all(p["engine"] != "offline" for p in data["phases"])  # the model's text is written
    # every fault of this model is form, repaired for free: no phase pays for a second call
    # (a phase too large for one call is asked part by part: more calls, none of them a re-ask)
    assert model.reasked == 0 and calls >= summary["phases"]


def test_a_lazy_first_answer_is_asked_once_and_then_kept(
    cli: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = CorpusModel(phases_of(corpus), {"lazy_first": True})
    with FakeMessagesAPI(responder=model) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        result = cli("eval", "compaction", "--corpus", corpus, "--engine", "anthropic",
                     "--root", tmp_path, "--json")  # fmt: skip
    data = result.json["data"]
    assert result.exit_code == 0 and data["summary"]["verified"] == data["summary"]["phases"]
    assert model.reasked == data["summary"]["phases"]  # one re-ask each, never more
    assert data["summary"]["fallback_share"] <= corpus_gates()["max_fallback_share"]
