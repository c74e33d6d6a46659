"""Error matching with the close candidates judged by an engine in one call: FakeEngine for the
logic and the grounding of its answer, respx through the real SDK for the Claude call."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.engine import Notices
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.knowledge.read import ERRORS, parse_knowledge, read_knowledge
from legion_llm.memory.knowledge.store import add_knowledge
from legion_llm.memory.signatures.match import JUDGE_FLOOR
from legion_llm.pipeline.errmatch import (
    PROMPT,
    CandidateVerdict,
    MatchVerdicts,
    answer_error,
    engine_decider,
    match_error,
    offline_verdicts,
)
from legion_llm.project import MemoryPaths
from tests.llm.conftest import body, error_reply, message, stream_reply

STORED = "Error: Cannot find module 'express'<br>Require stack:<br>- /srv/app/server.js"
ROUTES = "Error: Cannot find module 'routes/api'<br>Require stack:<br>- /srv/app/index.js"
BAND_QUERY = "Error: Cannot find module 'expres'"  # a typo: two stored errors are close, none exact
EXACT_QUERY = (  # the stored output again (another path, a stack frame more): an exact match
    "Error: Cannot find module 'express'\nRequire stack:\n- /home/dev/shop/app.js\n"
    "    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15)"
)
FIX = "npm install express (it was missing from package.json)"
ERRORS_TEXT = ERRORS.template + (
    f"| E-001 | 2026-03-01 | main | {STORED} | {FIX} | dev | true | npm |\n"
    "| E-002 | 2026-03-02 | main | ModuleNotFoundError: No module named 'yaml' | pip install pyyaml | dev | true | python |\n"
    f"| E-003 | 2026-03-03 | main | {ROUTES} | import it by a relative path | dev | true | npm |\n"
)


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, offline_verdicts)
    return reg


def records() -> list[Any]:
    return parse_knowledge(ERRORS, Path("ERRORS.md"), ERRORS_TEXT).records


def verdicts(match: int, *same: int) -> MatchVerdicts:
    said = [CandidateVerdict(candidate=n, same_root_cause=n in same, reason="r") for n in (1, 2)]
    return MatchVerdicts(verdicts=said, match=match)


def verdict_reply(match: int) -> httpx.Response:
    block = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "record_match_verdicts",
        "input": {
            "verdicts": [
                {"candidate": 1, "same_root_cause": match == 1, "reason": "peer conflict"}
            ],
            "match": match,
        },
    }
    return stream_reply(message([block], usage={"input_tokens": 400, "output_tokens": 30}))


def test_close_candidates_are_judged_in_one_call_and_exact_ones_need_none() -> None:
    fake = FakeEngine()
    fake.enqueue(verdicts(2, 2))
    judged = match_error(records(), BAND_QUERY, fake, limit=3)
    assert [j.match.candidate.key for j in judged] == ["E-001", "E-003", "E-002"]
    assert (
        not judged[0].match.exact and judged[1].match.score >= JUDGE_FLOOR > judged[2].match.score
    )
    assert len(fake.requests) == 1  # both close candidates in one call, the far one not sent
    user = fake.requests[0].prompt.user
    assert "Candidate 1:" in user and "Candidate 2:" in user and "Candidate 3:" not in user
    assert FIX in user and "pip install pyyaml" not in user
    chosen = [j for j in judged if j.same]
    assert [(j.match.candidate.key, j.decided_by) for j in chosen] == [("E-003", "claude")]
    assert judged[2].decided_by == "none"  # not sent: the offline verdict stands
    [exact] = match_error(records(), EXACT_QUERY, fake, limit=1)
    assert (exact.decided_by, exact.same) == ("exact", True)
    assert len(fake.requests) == 1  # no call when the best is exact


def test_the_model_can_say_none() -> None:
    fake = FakeEngine().enqueue(verdicts(0, 1, 2))  # "same" verdicts but no pick: none
    judged = match_error(records(), BAND_QUERY, fake, limit=3)
    assert not any(j.same for j in judged)
    assert [j.decided_by for j in judged] == ["claude", "claude", "none"]


def test_an_unlisted_pick_is_ignored_and_unjudged_candidates_keep_the_offline_verdict() -> None:
    fake = FakeEngine().enqueue(MatchVerdicts(verdicts=[], match=9))
    judged = match_error(records(), BAND_QUERY, fake, limit=3)
    assert [j.decided_by for j in judged] == [
        "offline"
        if j.match.band == "ambiguous"
        else ("none" if j.match.band == "none" else "fuzzy")
        for j in judged
    ]


def test_claude_judges_over_http(api: respx.MockRouter, claude: Any) -> None:
    route = api.post("/v1/messages").mock(side_effect=[verdict_reply(1)])
    engine = claude()
    judged = match_error(records(), BAND_QUERY, engine, limit=3)
    assert [(j.match.candidate.key, j.decided_by) for j in judged if j.same] == [
        ("E-001", "claude")
    ]
    sent = body(route.calls[0])
    user = sent["messages"][0]["content"]
    user_text = user if isinstance(user, str) else user[0]["text"]
    assert BAND_QUERY in user_text and FIX in user_text and "Candidate 2:" in user_text
    usage = engine.meter.as_dict(engine.name)
    assert usage["calls"] == 1 and usage["input_tokens"] == 400


def test_api_failure_falls_back_to_the_offline_rule(
    api: respx.MockRouter, claude: Any, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(return_value=error_reply(500))
    engine = claude("auto")
    offline = match_error(records(), BAND_QUERY, None, limit=3)
    judged = match_error(records(), BAND_QUERY, engine, limit=3)
    assert [(j.same, j.decided_by) for j in judged] == [(j.same, j.decided_by) for j in offline]
    assert route.call_count >= 2  # retried before giving up
    assert len(collected.messages) == 1 and "offline" in collected.messages[0]
    calls = route.call_count
    match_error(records(), BAND_QUERY, engine, limit=3)
    assert route.call_count == calls  # Claude stays off for the rest of the run


def test_store_never_merges_in_the_confirm_band_and_a_model_can_only_refuse(
    tmp_path: Path,
) -> None:
    paths = MemoryPaths(tmp_path)
    paths.memory_dir.mkdir(parents=True)
    paths.errors.write_text(ERRORS_TEXT)
    fake = FakeEngine()
    fake.enqueue(verdicts(1, 1))  # a model that would say "the same": never asked here
    values = {"error_signature": BAND_QUERY, "fix": "other", "agent": "dev"}
    day = date(2026, 4, 1)
    stored = add_knowledge(paths, ERRORS, values, today=day, branch="main",
                           decide=engine_decider(fake))  # fmt: skip
    assert (stored.action, stored.record.id) == ("added", "E-004")
    found = answer_error(records(), BAND_QUERY, None)
    assert found.answer == "confirm"  # the band where a new entry is stored, never merged
    assert (stored.close, stored.close_confidence) == (found.matches[0].candidate.key,
                                                       found.confidence[0])  # fmt: skip
    assert fake.requests == [] and fake.pending == 1
    # a fix-band error that is not exact merges offline; a model is asked and may refuse it
    near = "ModuleNotFoundError: No module named 'yaml' while importing settings"
    merged = add_knowledge(paths, ERRORS, {**values, "error_signature": near}, today=day,
                           branch="main")  # fmt: skip
    assert (merged.action, merged.record.id, merged.decided_by) == ("updated", "E-002",
                                                                    "confidence")  # fmt: skip
    assert merged.record.values["fix"].endswith("; also: other")  # its fix added, never lost
    fake = FakeEngine()
    fake.enqueue(MatchVerdicts(verdicts=[], match=0))  # "none of them"
    refused = add_knowledge(paths, ERRORS, {**values, "error_signature": near}, today=day,
                            branch="main", decide=engine_decider(fake))  # fmt: skip
    assert (refused.action, refused.record.id, refused.close) == ("added", "E-005", "E-002")
    assert len(fake.requests) == 1
    assert len(read_knowledge(ERRORS, paths.errors).records) == 5


def test_cli_errors_match_json_and_stdin(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    empty = cli("errors", "match", "anything", "--json", "--engine", "offline", "--root", project)
    assert empty.exit_code == 0 and empty.json["data"]["matches"] == []
    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "ERRORS.md").write_text(ERRORS_TEXT)
    result = cli("errors", "match", EXACT_QUERY, "--json", "--engine", "offline", "--root", project)
    data = result.json["data"]
    hit = data["matches"][0]
    assert list(hit) == ["id", "signature", "fix", "resolved", "score", "confidence", "shown",
                         "evidence"]  # fmt: skip
    assert (data["answer"], data["decided_by"], data["shown"]) == ("fix", "exact", 1)
    assert (hit["id"], hit["fix"], hit["shown"]) == ("E-001", FIX, True)
    assert 0.0 <= hit["confidence"] <= 1.0 and [m["shown"] for m in data["matches"][1:]] == [
        False, False]  # fmt: skip
    assert set(hit["evidence"]) == {"shared", "conflicting", "missing_in_query",
                                    "missing_in_stored"}  # fmt: skip
    assert data["usage"]["engine"] == "offline"
    human = cli("errors", "match", EXACT_QUERY, "--engine", "offline", "--root", project)
    assert human.stdout.splitlines()[0].startswith("fix: E-001 applies (confidence ")
    monkeypatch.setattr("sys.stdin", io.StringIO(
        "Traceback (most recent call last):\n  File \"run.py\", line 1\n"
        "ModuleNotFoundError: No module named 'yaml'\n"))  # fmt: skip
    piped = cli("errors", "match", "--stdin", "--json", "--engine", "offline", "--root", project)
    assert [m["id"] for m in piped.json["data"]["matches"]][:1] == ["E-002"]
    assert piped.json["data"]["answer"] == "fix"
    assert cli("errors", "match", "--root", project).exit_code == 2
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    nothing = cli("errors", "match", "--stdin", "--root", project)
    assert nothing.exit_code == 2 and "--stdin read no error text" in nothing.stderr


def test_a_cost_cap_below_one_call_lets_the_offline_rule_decide(
    api: respx.MockRouter, claude: Any, collected: Notices
) -> None:
    route = api.post("/v1/messages").mock(side_effect=[verdict_reply(0)])
    engine = claude(max_cost_usd=0.0)
    offline = match_error(records(), BAND_QUERY, None, limit=3)
    judged = match_error(records(), BAND_QUERY, engine, limit=3)
    assert [(j.same, j.decided_by) for j in judged] == [(j.same, j.decided_by) for j in offline]
    assert route.call_count == 0
    assert any("offline rule decides the close calls" in m for m in collected.messages)


def test_without_a_model_every_verdict_is_the_rule_the_eval_measures() -> None:
    """`errors match` offline decides as `eval errors` measures it, in every band: a shared
    telling name below the band is accepted by both (it was refused by `errors match` alone)."""
    from legion_llm.evals.errors import load_dataset
    from legion_llm.memory.signatures.match import (
        Candidate,
        Match,
        SignatureIndex,
        decide_offline,
    )
    from legion_llm.pipeline.errmatch import judge_verdicts

    dataset = load_dataset(Path(__file__).parents[2] / "fixtures" / "errors")
    index = SignatureIndex(Candidate(m.id, m.text) for m in dataset.messages[::2])
    bands: set[str] = set()
    for query in dataset.messages[1::2]:
        ranked = index.rank(query.text, limit=5, without=query.id)
        bands |= {m.band for m in ranked}
        assert judge_verdicts(None, query.text, ranked) == [decide_offline(m) for m in ranked]
    assert bands == {"match", "ambiguous", "none"}
    close = Match(
        Candidate("E-1", "FATAL: Peer authentication failed"), 0.25, "none", agreed=("auth=peer",)
    )
    assert decide_offline(close)
    assert judge_verdicts(None, "fatal: peer authentication failed", [close]) == [True]


@pytest.mark.subprocess
def test_cli_answers_confirm_and_none_in_one_line_and_add_names_the_close_entry(
    cli: Any, project: Path
) -> None:
    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "ERRORS.md").write_text(ERRORS_TEXT)
    args = ("--engine", "offline", "--root", project)
    confirm = cli("errors", "match", BAND_QUERY, "--json", *args).json["data"]
    assert confirm["answer"] == "confirm" and 1 <= confirm["shown"] <= 3
    shown = [m["id"] for m in confirm["matches"] if m["shown"]]
    assert shown == [m["id"] for m in confirm["matches"][: confirm["shown"]]]
    line = cli("errors", "match", BAND_QUERY, *args).stdout.splitlines()[0]
    assert (
        line == f"confirm: not sure; check which of {', '.join(shown)} applies before using its fix"
    )
    one = cli("errors", "match", BAND_QUERY, "--limit", "1", "--json", *args).json["data"]
    assert len(one["matches"]) == 1 and one["shown"] == 1
    none = cli("errors", "match", "Segmentation fault (core dumped) in libfoo", *args)
    assert none.stdout.splitlines()[0].startswith("none: no stored fix applies")
    added = cli("errors", "add", "--signature", BAND_QUERY, "--fix", "fix the typo",
                "--agent", "dev", "--json", *args).json["data"]  # fmt: skip
    assert added["action"] == "added" and added["close"]["id"] == shown[0]
    assert len(read_knowledge(ERRORS, memory / "ERRORS.md").records) == 4
