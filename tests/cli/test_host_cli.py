"""The host engine through the CLI: `--prepare`, then `--proposal`, for compact, distill and
learnings extract, on copies of the demo project. Good proposals are what the offline engine
would answer (so they verify); bad ones are lazy, invalid or aimed at changed inputs."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from legion_llm.app.commands.distill import distill_maker
from legion_llm.app.commands.learnings import extract_maker
from legion_llm.app.commands.phases import compact_maker
from legion_llm.app.context import Common
from legion_llm.app.host import MakeStep, record
from legion_llm.errors import InputError
from legion_llm.llm.prompts import load_prompt
from legion_llm.memory.phases.find import find_phase
from tests.pipeline.compaction_cases import fingerprint

TODAY = "2026-06-15"
MISSION = ".mission-control/missions/archive/mission-2026-06-12-audit-export"
COMPACTED = ".planning/phases/03-fx-rates/03-COMPACTED.md"


def offline_answers(root: Path, make: MakeStep) -> list[dict[str, Any]]:
    """What the offline engine answers for each question of the step: proposals that verify."""
    recorder, _ = record(make(Common(root.resolve(), date.fromisoformat(TODAY), True), None))
    return [answer.model_dump() for answer in recorder.offline_answers]


def lazy(value: Any, key: str | None = None) -> Any:
    """Every free-text string replaced by "x" (enums and plan ids kept): schema-valid, useless."""
    if key in ("verdict", "plan_id", "plans", "category", "confidence"):
        return value
    if isinstance(value, str):
        return "x"
    if isinstance(value, list):
        return [lazy(item, key) for item in value]
    if isinstance(value, dict):
        return {k: lazy(v, k) for k, v in value.items()}
    return value


def prepare(cli: Any, root: Path, *args: str) -> dict[str, Any]:
    result = cli(*args, "--prepare", "--root", root, "--today", TODAY, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json["command"].endswith("--prepare")
    data: dict[str, Any] = result.json["data"]
    return data


def submit(cli: Any, root: Path, ticket: str, proposal: Any, *args: str) -> Any:
    path = root / "proposal.json"
    path.write_text(json.dumps({"ticket": ticket, "proposal": proposal}), encoding="utf-8")
    try:
        return cli(*args, "--proposal", path, "--root", root, "--json")
    finally:
        path.unlink()


def test_compact_prepare_hands_over_the_prompt_and_writes_nothing(
    cli: Any, demo_project: Path
) -> None:
    before = fingerprint(demo_project)
    request = prepare(cli, demo_project, "compact", "3")
    assert set(request) == {"ticket", "step", "instructions", "schema", "inputs",
                            "budget_tokens", "submit"}  # fmt: skip
    assert request["ticket"].startswith("lt2.") and request["step"] == "compact"
    assert request["instructions"] == load_prompt("compact-phase").system
    assert "FX-01" in request["inputs"] and "src/fx/importer.py" in request["inputs"]
    assert set(request["schema"]["required"]) >= {"deliverables", "files", "verification"}
    assert request["budget_tokens"] > 0 and "phase_compact" in request["submit"]
    assert fingerprint(demo_project) == before and not (demo_project / COMPACTED).exists()
    again = prepare(cli, demo_project, "compact", "3")
    assert again["ticket"] == request["ticket"]  # the same inputs, the same ticket


def test_a_good_proposal_is_verified_and_written_as_host(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (proposal,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    result = submit(cli, demo_project, ticket, proposal, "compact", "3")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["engine"] == "host" and data["written"] is True and data["fell_back"] is False
    assert data["usage"]["engine"] == "host" and data["usage"]["estimated_cost_usd"] == 0
    assert cli("verify-compaction", "3", "--root", demo_project, "--json").exit_code == 0
    header = (demo_project / COMPACTED).read_text(encoding="utf-8")
    assert f"compacted: {TODAY}" in header  # the date it was prepared with


def test_verdicts_written_as_the_digest_prints_them_are_accepted(
    cli: Any, demo_project: Path
) -> None:
    """An agent that copies `PASS` / `NOT VERIFIED` from a digest is not refused for the case."""
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (proposal,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    items = proposal["verification"]
    assert items
    said = {item["requirement_id"]: item["verdict"] for item in items}
    for item in items:
        item["verdict"] = item["verdict"].upper().replace(" ", "_")
    result = submit(cli, demo_project, ticket, proposal, "compact", "3")
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["engine"] == "host" and result.json["data"]["fell_back"] is False
    written = (demo_project / COMPACTED).read_text(encoding="utf-8")
    for requirement, verdict in said.items():
        assert requirement in written and verdict.upper() in written


def test_a_lazy_proposal_gets_problems_and_nothing_is_written(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (good,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    result = submit(cli, demo_project, ticket, lazy(good), "compact", "3")
    assert result.exit_code == 1 and result.json["ok"] is False
    data = result.json["data"]
    assert data["ticket"] == ticket and data["written"] is False and data["engine"] == "host"
    # the problems a model must fix (placeholders); what repair fixes (the dropped FX-01 in a
    # section that is not redone) is not asked for
    assert any("is a placeholder" in problem for problem in data["problems"])
    assert not any("FX-01" in problem for problem in data["problems"])
    sections = {detail["section"] for detail in data["details"]}
    assert {"deliverables", "files"} <= sections  # the step's own records, per section
    assert any(d["kind"] == "placeholder" and not d["repairable"] for d in data["details"])
    assert not (demo_project / COMPACTED).exists()
    human = submit(cli, demo_project, ticket, lazy(good), "compact", "3")
    assert human.exit_code == 1


def test_a_proposal_that_does_not_match_the_schema(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    result = submit(cli, demo_project, ticket, {"deliverables": "none"}, "compact", "3")
    assert result.exit_code == 1
    (problem,) = result.json["data"]["problems"]
    assert problem.startswith("the proposal does not match the schema: deliverables:")
    assert not (demo_project / COMPACTED).exists()


def test_a_ticket_for_changed_inputs_is_refused(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (proposal,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    summary = demo_project / ".planning/phases/03-fx-rates/03-01-SUMMARY.md"
    summary.write_text(summary.read_text(encoding="utf-8") + "\n- one more line\n", "utf-8")
    result = submit(cli, demo_project, ticket, proposal, "compact", "3")
    assert result.exit_code == 1 and result.json["ok"] is False
    assert result.stderr.strip() == (
        "error: the ticket no longer matches phase 3: its inputs changed since it was "
        "prepared; prepare again and propose from the new request"
    )
    assert not (demo_project / COMPACTED).exists()


@pytest.mark.parametrize(
    ("ticket", "message"),
    [("hello", "that is not a legion-llm ticket (a ticket starts with 'lt2.')"),
     ("lt2.!!!", "the ticket is damaged or was edited (its signature does not match); "
                 "prepare again"),
     ("lt1.eyJ9", "the ticket was made by an older legion-llm (lt1.); prepare again")],
)  # fmt: skip
def test_a_damaged_ticket_is_one_line(
    cli: Any, demo_project: Path, ticket: str, message: str
) -> None:
    result = submit(cli, demo_project, ticket, {}, "compact", "3")
    assert result.exit_code == 1 and result.stderr.strip() == f"error: {message}"


def test_a_ticket_is_for_one_step_and_one_phase(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    other = submit(cli, demo_project, ticket, {}, "distill")
    assert other.exit_code == 1 and "the ticket is for `compact`, not `distill`" in other.stderr
    edited = ticket  # an edited phase in the ticket's arguments breaks its digest
    assert "damaged" in submit(cli, demo_project, edited[:-3] + "abc", {}, "compact", "3").stderr


def test_proposal_on_stdin_with_the_ticket_option(
    cli: Any, demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (proposal,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(proposal)))
    result = cli("compact", "3", "--proposal", "-", "--ticket", ticket, "--root", demo_project,
                 "--dry-run", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.json["data"]["engine"] == "host" and result.json["data"]["written"] is False
    assert not (demo_project / COMPACTED).exists()


def test_prepare_out_writes_the_request_inside_the_root(cli: Any, demo_project: Path) -> None:
    result = cli("compact", "3", "--prepare", "--out", "req.json", "--root", demo_project)
    assert result.exit_code == 0 and "Wrote the request to req.json" in result.stdout
    request = json.loads((demo_project / "req.json").read_text(encoding="utf-8"))
    assert request["ticket"].startswith("lt2.") and "inputs" in request
    outside = cli("compact", "3", "--prepare", "--out", "/tmp/../etc/req.json", "--root",
                  demo_project)  # fmt: skip
    assert outside.exit_code != 0 and "outside" in outside.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [(("--prepare", "--proposal", "x.json"), "--prepare and --proposal do not go together"),
     (("--out", "x.json"), "--out goes with --prepare")],
)  # fmt: skip
def test_host_usage_errors(
    cli: Any, demo_project: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("compact", "3", *args, "--root", demo_project)
    assert result.exit_code == 2 and message in result.stderr


def test_final_keeps_what_verifies_and_writes(cli: Any, demo_project: Path) -> None:
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (good,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    result = submit(cli, demo_project, ticket, lazy(good), "compact", "3", "--final")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["written"] is True and data["missing_after_repair"] == []
    # settle takes the placeholder sections from the offline engine, and repair rebuilds the
    # verdicts for ids that are all "x" and drops agents "x": nothing written is the host's
    assert data["fell_back"] is True and data["engine"] == "offline"
    assert data["sections"]["verification"]["source"] == "offline"
    assert data["sections"]["deliverables"]["source"] == "offline"
    assert "): x" not in (demo_project / COMPACTED).read_text(encoding="utf-8")
    assert cli("verify-compaction", "3", "--root", demo_project, "--json").exit_code == 0


@pytest.mark.subprocess
def test_distill_round_trip(cli: Any, demo_project: Path) -> None:
    patterns = demo_project / ".planning/memory/PATTERNS.md"
    request = prepare(cli, demo_project, "distill")
    assert request["instructions"] == load_prompt("distill-patterns").system
    answers = offline_answers(demo_project, distill_maker(None))
    bad = [{"patterns": [{**answers[0]["patterns"][0], "source": ["O-999"]}]}]
    refused = submit(cli, demo_project, request["ticket"], bad[0], "distill")
    assert refused.exit_code == 1 and not patterns.exists()
    assert refused.json["data"]["problems"] == [
        f"pattern {answers[0]['patterns'][0]['pattern']!r}: cites O-999, which does not exist in "
        "OUTCOMES.md or ARCHIVE.md"
    ]
    result = submit(cli, demo_project, request["ticket"], answers[0], "distill")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert len(data["written"]) == len(answers[0]["patterns"]) >= 1
    assert data["usage"]["engine"] == "host" and patterns.is_file()
    assert data["written"][0]["id"].startswith("P-")


@pytest.mark.subprocess
def test_a_ticket_names_no_path_the_command_was_not_given(
    cli: Any, demo_project: Path, tmp_path: Path
) -> None:
    """distill's ticket keeps its --catalog; a submit (the MCP tool has no catalog at all) reads
    only the catalog it was given itself, never one an edited ticket names."""
    from legion_llm.llm.host.ticket import decode_ticket

    request = prepare(cli, demo_project, "distill")
    (answer,) = offline_answers(demo_project, distill_maker(None))
    prepared = decode_ticket(request["ticket"], "distill")
    outside = tmp_path / "outside-the-root.md"
    edited = replace(prepared, args={**prepared.args, "catalog": str(outside)}).encode()
    result = submit(cli, demo_project, edited, answer, "distill")
    assert result.exit_code == 1 and not (demo_project / ".planning/memory/PATTERNS.md").exists()
    assert result.stderr.strip() == (
        f"error: the ticket was prepared with --catalog {outside}, this submit has none"
    )
    outside.write_text("# an agent catalog of the user's own\n", encoding="utf-8")
    own = prepare(cli, demo_project, "distill", "--catalog", str(outside))["ticket"]
    assert decode_ticket(own, "distill").args["catalog"] == str(outside)
    same = submit(cli, demo_project, own, answer, "distill", "--catalog", str(outside))
    assert same.exit_code == 0, same.stderr


def test_learnings_extract_round_trip(cli: Any, demo_project: Path) -> None:
    folder = demo_project / ".mission-control/memory"
    before = sorted(p.name for p in folder.iterdir())
    request = prepare(cli, demo_project, "learnings", "extract", MISSION)
    assert request["instructions"] == load_prompt("extract-learnings").system
    (answer,) = offline_answers(demo_project, extract_maker(demo_project / MISSION, TODAY))
    vague = {"learnings": [{**answer["learnings"][0], "title": "Be careful"}]}
    refused = submit(cli, demo_project, request["ticket"], vague, "learnings", "extract", MISSION)
    assert refused.exit_code == 1 and sorted(p.name for p in folder.iterdir()) == before
    assert "the title is not specific" in refused.json["data"]["problems"][0]
    result = submit(cli, demo_project, request["ticket"], answer, "learnings", "extract", MISSION)
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert data["usage"]["engine"] == "host" and (data["written"] or data["reinforced"])
    assert sorted(p.name for p in folder.iterdir()) != before or data["reinforced"]


@pytest.mark.subprocess
def test_errors_match_hands_close_calls_to_the_agent_when_no_model_judged(
    cli: Any, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.llm.claude_stub import StubClaude, answer
    from tests.pipeline.test_errmatch import BAND_QUERY, ERRORS_TEXT, STORED

    memory = project / ".planning/memory"
    memory.mkdir()
    (memory / "ERRORS.md").write_text(ERRORS_TEXT, encoding="utf-8")
    result = cli("errors", "match", BAND_QUERY, "--json", "--root", project)
    assert result.exit_code == 0
    ask = result.json["data"]["to_judge"]
    assert ask["instructions"] == load_prompt("error-match").system
    assert ask["schema"]["required"] == ["verdicts", "match"]
    assert result.json["data"]["answer"] == "confirm"  # only a confirm is handed over
    shown = [m["id"] for m in result.json["data"]["matches"] if m["shown"]]
    assert [(c["number"], c["id"]) for c in ask["candidates"]] == list(enumerate(shown, start=1))
    signatures = {m["id"]: m["signature"] for m in result.json["data"]["matches"]}
    assert BAND_QUERY in ask["inputs"] and STORED.startswith("Error: Cannot find module")
    assert all(signatures[i].split("<br>")[0] in ask["inputs"] for i in shown)
    stub = StubClaude(tmp_path / "bin").script(
        answer(
            {"verdicts": [{"candidate": 1, "same_root_cause": True, "reason": "typo"}], "match": 1}
        )
    )
    monkeypatch.setenv("PATH", stub.on_path())
    judged = cli("errors", "match", BAND_QUERY, "--json", "--root", project)
    hit = judged.json["data"]["matches"][0]
    assert (hit["id"], judged.json["data"]["decided_by"]) == (shown[0], "claude")  # a model
    assert judged.json["data"]["answer"] == "fix"  # judged the confirm: its pick is the fix
    assert "to_judge" not in judged.json["data"]


def _forged(ticket: str, **args: Any) -> str:
    """The ticket with its arguments edited and re-signed as the first version did: with a
    plain sha256 anyone can recompute (here: with no key at all)."""
    import base64
    import hashlib

    body, _, _ = ticket[4:].partition(".")
    data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    data["args"].update(args)
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    digest = hashlib.sha256(raw).hexdigest()
    return f"lt2.{base64.urlsafe_b64encode(raw).decode().rstrip('=')}.{digest}"


def test_an_edited_force_cannot_replace_a_compacted_file(cli: Any, demo_project: Path) -> None:
    """Issue 25, point 5: an edited `force: true` replaced an existing COMPACTED.md."""
    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    (answer,) = offline_answers(demo_project, compact_maker(find_phase(demo_project, "3"), False))
    assert submit(cli, demo_project, ticket, answer, "compact", "3").exit_code == 0
    written = (demo_project / COMPACTED).read_bytes()
    result = submit(cli, demo_project, _forged(ticket, force=True), answer, "compact", "3")
    assert result.exit_code == 1 and result.stderr.strip() == (
        "error: the ticket is damaged or was edited (its signature does not match); prepare again"
    )
    assert (demo_project / COMPACTED).read_bytes() == written


def test_a_forged_timestamp_is_refused_and_learnings_stay(cli: Any, demo_project: Path) -> None:
    """A 70,000-character `now` made `learnings load` drop from 5 learnings to 2."""
    ticket = prepare(cli, demo_project, "learnings", "extract", MISSION)["ticket"]
    forged = submit(cli, demo_project, _forged(ticket, now="9" * 70_000), [],
                    "learnings", "extract", MISSION)  # fmt: skip
    assert forged.exit_code == 1 and "signature does not match" in forged.stderr


def test_a_signed_ticket_out_of_bounds_is_refused() -> None:
    """Bounds hold even for a ticket this machine signed (a bug upstream, say)."""
    from legion_llm.llm.host.ticket import Ticket

    keys = ("0" * 64,)
    with pytest.raises(InputError, match=r"^the ticket.s now is out of bounds; prepare again$"):
        Ticket("learnings extract", {"mission": "m", "now": "9" * 70_000, "today": TODAY},
               keys).encode()  # fmt: skip
    with pytest.raises(InputError, match="the ticket's force is out of bounds"):
        Ticket("compact", {"phase": "3", "force": "yes", "today": TODAY}, keys).encode()
    with pytest.raises(InputError, match="the ticket's arguments are not those of `distill`"):
        Ticket("distill", {"today": TODAY, "catalog": None, "extra": 1}, keys).encode()


def test_the_ticket_key_is_the_users_own_and_private(
    cli: Any, demo_project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import os
    import stat

    ticket = prepare(cli, demo_project, "compact", "3")["ticket"]
    key = Path(os.environ["XDG_DATA_HOME"]) / "legion-llm" / "ticket.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert not list(demo_project.rglob("*.key"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "another-user"))  # another key
    result = submit(cli, demo_project, ticket, {}, "compact", "3")
    assert result.exit_code == 1 and "signature does not match" in result.stderr


def test_a_ticket_nested_too_deeply_is_one_line(cli: Any, demo_project: Path) -> None:
    """Issue 25, point 10: a deep host ticket was a RecursionError (exit 70)."""
    import base64

    deep = base64.urlsafe_b64encode(b"[" * 100_000 + b"]" * 100_000).decode().rstrip("=")
    result = submit(cli, demo_project, f"lt2.{deep[:150_000]}.x", {}, "compact", "3")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "signature does not match" in result.stderr and "internal error" not in result.stderr
