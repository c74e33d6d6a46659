"""Issue 22: the calibrated confidence, the three answers, their scores, and the fitting script."""

from __future__ import annotations

import importlib.util
import json
import math
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from legion_llm.evals.error_data import ErrorGroup, ErrorMessage, ErrorsDataset
from legion_llm.evals.error_scores import reliability
from legion_llm.evals.errors import answer_queries, answer_scores, run_errors_eval
from legion_llm.memory.signatures import confidence
from legion_llm.memory.signatures.confidence import Model, answer_of, answered, feature_values
from legion_llm.memory.signatures.match import Candidate, SignatureIndex, features

REPO = Path(__file__).resolve().parents[1]


def fit_script() -> ModuleType:
    path = REPO / "evals" / "tools" / "fit_confidence.py"
    spec = importlib.util.spec_from_file_location("fit_confidence_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_shipped_model_is_data_with_both_bands_and_every_feature() -> None:
    data = json.loads(confidence.DATA.read_text(encoding="utf-8"))
    fitted = confidence.model()
    assert 0.0 < fitted.confirm < fitted.fix <= 1.0
    assert (fitted.fix, fitted.confirm) == (data["bands"]["fix"], data["bands"]["confirm"])
    assert "fresh" not in data["fitted_on"] and data["bands_on"] == "dev"
    index = SignatureIndex([Candidate("a", "Error: connect ECONNREFUSED 127.0.0.1:5432")])
    query = "Error: connect ECONNREFUSED 127.0.0.1:5432"
    names = set(feature_values(features(query), index.rank(query), 0))
    assert names == set(fitted.coefficients)  # the script fitted what the module computes


def test_answer_of_the_bands() -> None:
    bands = Model({}, 0.0, fix=0.8, confirm=0.3)
    assert answer_of([0.85, 0.4], bands) == ("fix", 1)
    assert answer_of([0.79, 0.5, 0.31, 0.9], bands) == ("confirm", 3)  # at most three shown
    assert answer_of([0.6, 0.2, 0.5], bands) == ("confirm", 1)  # shown while they reach it
    assert answer_of([0.29], bands) == ("none", 0)
    assert answer_of([], bands) == ("none", 0)


def test_a_conflicting_name_lowers_the_confidence_and_an_exact_copy_raises_it() -> None:
    stored = [
        Candidate("pg", "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap"),
        Candidate("disk", "ENOSPC: no space left on device, write"),
    ]
    index = SignatureIndex(stored)
    same = "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect"
    other = "Error: connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap.afterConnect"
    hit = answered(features(same), index.rank(same))
    miss = answered(features(other), index.rank(other))
    assert hit.matches[0].candidate.key == "pg" and miss.matches[0].candidate.key == "pg"
    assert hit.confidence[0] > miss.confidence[0] + 0.3
    assert miss.answer != "fix"
    assert hit.confidence == sorted(hit.confidence, reverse=True)


def test_reliability_bins() -> None:
    bins = reliability([(0.05, False), (0.08, True), (0.95, True), (1.0, True), (0.55, False)])
    assert [(b["low"], b["count"]) for b in bins] == [(0.0, 2), (0.5, 1), (0.9, 2)]
    assert bins[0]["share_right"] == 0.5 and bins[2]["mean_confidence"] == pytest.approx(0.975)


def test_the_logistic_fit_recovers_known_weights() -> None:
    fit = fit_script()
    rng = random.Random(22)
    xs, ys = [], []
    for _ in range(3000):
        x = [rng.uniform(-1, 1), rng.uniform(-1, 1)]
        p = 1 / (1 + math.exp(-(0.5 + 2.0 * x[0] - 3.0 * x[1])))
        xs.append(x)
        ys.append(int(rng.random() < p))
    w = fit.fit_logistic(xs, ys, l2=0.01)
    assert w == pytest.approx([0.5, 2.0, -3.0], abs=0.35)


def test_the_fitting_script_refuses_the_fresh_split() -> None:
    fit = fit_script()
    with pytest.raises(SystemExit, match="held out"):
        fit.queries("fresh")


def _dataset() -> ErrorsDataset:
    groups = {
        "pg": ErrorGroup("pg", "node", "postgres down", "start postgres", ("redis",)),
        "redis": ErrorGroup("redis", "node", "redis down", "start redis", ("pg",)),
        "disk": ErrorGroup("disk", "node", "disk full", "free space"),
    }
    messages = (
        ErrorMessage("pg-01", "pg", "node", "Error: connect ECONNREFUSED 127.0.0.1:5432"),
        ErrorMessage("pg-02", "pg", "node", "Error: connect ECONNREFUSED 127.0.0.1:5432\n    at x"),
        ErrorMessage("redis-01", "redis", "node", "Error: connect ECONNREFUSED 127.0.0.1:6379"),
        ErrorMessage("disk-01", "disk", "node", "ENOSPC: no space left on device, write"),
        ErrorMessage("disk-02", "disk", "node", "ENOSPC: no space left on device, mkdir '/tmp/x'"),
    )
    return ErrorsDataset(messages, groups)


def test_answer_scores_count_each_answer_against_the_labels() -> None:
    fix, hard, failures = answer_queries(_dataset())
    assert failures == [] and [q.expected for q in fix] == ["pg", "disk"]
    assert {q.expected for q in hard} == {None}
    assert answer_scores(fix, hard).retrieval_recall == 1.0

    def always_confirm(text: str, query: object, ranked: object) -> confidence.Answered:
        found = answered(features(text), ranked)  # type: ignore[arg-type]
        return confidence.Answered("confirm", found.matches, found.confidence, 3)

    fix, hard, _ = answer_queries(_dataset(), always_confirm)
    asking = answer_scores(fix, hard)
    assert (asking.fix_answers, asking.fix_coverage, asking.hard_negative_fix) == (0, 0.0, 0.0)
    assert asking.confirm_recall == 1.0 and asking.confirm_share == 1.0

    def always_fix(text: str, query: object, ranked: object) -> confidence.Answered:
        found = answered(features(text), ranked)  # type: ignore[arg-type]
        return confidence.Answered(
            "fix", found.matches, found.confidence, 1 if found.matches else 0
        )

    fix, hard, _ = answer_queries(_dataset(), always_fix)
    careless = answer_scores(fix, hard)
    assert careless.hard_negative_fix == 1.0  # every hard negative took a look-alike's fix
    assert careless.fix_precision == 1.0 and careless.fix_coverage == 1.0
    assert careless.fix_precision_all == pytest.approx(2 / 5)  # 2 right of 2 + 3 wrong


def test_gates_on_the_three_answers_are_generic(tmp_path: Path) -> None:
    for name in ("groups", "node"):
        rows = _dataset().groups.values() if name == "groups" else _dataset().messages
        lines = [json.dumps(vars(r) if name == "node" else {
            "group": r.group, "ecosystem": r.ecosystem, "root_cause": r.root_cause,
            "fix": r.fix, "confusable_with": list(r.confusable_with)}) for r in rows]  # fmt: skip
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    definition = tmp_path / "errors.toml"
    definition.write_text(
        f'[splits.fresh]\npath = "{tmp_path}"\n\n[gates.fresh]\n'
        "fix_precision = 0.95\nmax_hard_negative_fix = 0.0\nconfirm_recall = 0.5\n"
    )
    [result] = run_errors_eval(definition=definition).splits
    assert set(result.gate_results()) == {"fix_precision", "max_hard_negative_fix",
                                          "confirm_recall"}  # fmt: skip
    assert result.gate_results()["max_hard_negative_fix"] == (result.answers.hard_negative_fix == 0)
