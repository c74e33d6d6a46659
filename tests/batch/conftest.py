"""A project with pending phases, the loopback fake with its Message Batches endpoints, and a
responder that answers each compaction request with a proposal for the phase it names."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.phases.find import completed_without_compaction
from legion_llm.pipeline.batch.record import batches_dir, load_record
from tests.conftest import FIXTURES, CliResult
from tests.fakes import FakeMessagesAPI, RecordedRequest, Reply
from tests.fakes.batches import BATCH_ITEM_PATH, FakeBatches
from tests.pipeline.compaction_cases import copy_case, good_digest

TODAY = "2026-11-30"
PHASE_LINE = re.compile(r"Phase ([0-9.]+): ")


def user_text(body: Any) -> str:
    return json.dumps(body.get("messages") if isinstance(body, dict) else body)


@dataclass
class World:
    """One project, the fake API and its batches, and the CLI run against them."""

    root: Path
    api: FakeMessagesAPI
    batches: FakeBatches
    run: Any
    digests: dict[str, dict[str, Any]] = field(default_factory=dict)

    def cli(self, *args: str | Path) -> CliResult:
        return self.run(*args, "--root", self.root, "--today", TODAY)

    def json(self, *args: str | Path) -> Any:
        result = self.cli(*args, "--json")
        assert result.stdout, result.stderr
        return result.json

    def direct_calls(self) -> list[RecordedRequest]:
        return self.api.calls("/v1/messages")

    def record(self, batch_id: str) -> Any:
        return load_record(self.root, batch_id)

    def compacted(self) -> dict[str, Path]:
        return {p.parent.name: p for p in sorted(self.root.rglob("*-COMPACTED.md"))}

    def respond(self, request: RecordedRequest) -> Reply | None:
        found = PHASE_LINE.search(user_text(request.body))
        digest = self.digests.get(found.group(1)) if found else None
        return Reply.answer(digest) if digest is not None else None


def merged(tmp_path: Path, cases: Sequence[str]) -> Path:
    """One project holding the phases of several fixture projects (their ROADMAPs appended)."""
    root = copy_case(cases[0], tmp_path)
    for other in cases[1:]:
        source = FIXTURES / "phases" / other / ".planning"
        shutil.copytree(source / "phases", root / ".planning" / "phases", dirs_exist_ok=True)
        roadmap = root / ".planning" / "ROADMAP.md"
        roadmap.write_text(roadmap.read_text() + "\n" + (source / "ROADMAP.md").read_text())
    return root


MakeWorld = Callable[..., World]


@pytest.fixture
def make_world(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeWorld]:
    """make_world(case or cases, **FakeBatches options) -> a World (the fake runs until the end
    of the test; ANTHROPIC_BASE_URL points at it)."""
    with contextlib.ExitStack() as stack:

        def make(case: str | Sequence[str] = BILLING, **batch_options: Any) -> World:
            root = copy_case(case, tmp_path) if isinstance(case, str) else merged(tmp_path, case)
            digests = {p.key: json.loads(good_digest(p).model_dump_json())
                       for p in completed_without_compaction(root)}  # fmt: skip
            api = stack.enter_context(FakeMessagesAPI())
            world = World(root, api, FakeBatches(api, **batch_options), cli, digests)
            api.responder = world.respond
            monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
            monkeypatch.setenv("LEGION_LLM_MAX_ATTEMPTS", "1")
            return world

        yield make


BILLING = "legion-spec-billing-exports"  # phases 2 (one plan) and 3 (three plans) are pending


@pytest.fixture
def world(make_world: MakeWorld) -> World:
    return make_world()


FOUR_PHASES = ("legion-spec-billing-exports", "decimal-phase")  # phases 2, 3, 6 and 6.1


def submitted(world: World, *extra: str) -> str:
    """Submit `compact --all --batch`; the batch id."""
    data = world.json("compact", "--all", "--batch", *extra)
    assert data["ok"], data
    return str(data["data"]["batch_id"])


def record_files(root: Path) -> list[Path]:
    folder = batches_dir(root)
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


BATCH_ITEM = BATCH_ITEM_PATH
