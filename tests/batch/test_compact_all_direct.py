"""`compact --all` without --batch: each phase directly; an engine that cannot answer stops the
run with its own exit code and one line per failed phase, instead of every phase paying again."""

from __future__ import annotations

from tests.batch.conftest import MakeWorld
from tests.fakes import Reply


def test_every_pending_phase_is_written_directly(make_world: MakeWorld) -> None:
    world = make_world()
    result = world.cli("compact", "--all", "--engine", "anthropic", "--json")
    assert result.exit_code == 0, result.stderr
    rows = result.json["data"]["outcomes"]
    assert [r["case"] for r in rows] == ["2", "3"]
    assert all(r["status"] != "failed" and (world.root / r["path"]).is_file() for r in rows)
    assert len(world.compacted()) == 2 and "error: " not in result.stderr


def test_an_engine_that_is_down_stops_the_run_with_its_exit_code(make_world: MakeWorld) -> None:
    world = make_world()
    world.api.responder = lambda request: Reply.error(500)
    result = world.cli("compact", "--all", "--engine", "anthropic", "--json")
    assert result.exit_code == 4
    rows = {r["case"]: r for r in result.json["data"]["outcomes"]}
    assert rows["2"]["status"] == "failed" and rows["2"]["exit_code"] == 4
    assert rows["3"]["status"] == "not tried" and rows["3"]["cost_usd"] == 0
    assert rows["3"]["reason"].startswith("the engine stopped: ")
    assert len(world.direct_calls()) == 1  # phase 3 did not pay for the same failure again
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(f"error: {rows['2']['label']}: ")
    assert world.compacted() == {}
