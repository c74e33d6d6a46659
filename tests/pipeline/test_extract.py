"""Learning extraction: reading missions and phases, the rules, de-duplication and reinforcement,
writes that stay in the memory folder; FakeEngine for the logic, respx for Claude's path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.errors import InputError
from legion_llm.llm.engine import Engine, OfflineEngine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.llm.testing import FakeEngine
from legion_llm.memory.learnings.read import read_learnings
from legion_llm.pipeline.learnings.extract import (
    PROMPT,
    LearningProposals,
    ProposedLearning,
    extract_offline,
    run_extract,
)
from legion_llm.pipeline.learnings.mission import read_mission
from legion_llm.project import MemoryPaths
from tests.llm.conftest import body, message, stream_reply

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "missions" / "project"
ARCHIVE = ".mission-control/missions/archive"
INVOICE = f"{ARCHIVE}/mission-2026-02-03-invoice-pdf"
CSV = f"{ARCHIVE}/mission-2026-03-15-csv-import"
NOW = "2026-04-05T12:00:00Z"


@pytest.fixture
def registry() -> OfflineRegistry:
    reg = OfflineRegistry()
    reg.register(PROMPT, extract_offline)
    return reg


@pytest.fixture
def project(tmp_path: Path) -> MemoryPaths:
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    return MemoryPaths(root)


def memory(paths: MemoryPaths) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(paths.learnings_dir.glob("*.md"))}


def proposal(**changes: Any) -> ProposedLearning:
    values: dict[str, Any] = {
        "title": "Papa.parse dynamicTyping drops the leading zero of postal codes",
        "body": "With `dynamicTyping: true`, Papa.parse turns 02139 into the number 2139. Parse with "
        "`dynamicTyping: false` and coerce per column with the zod schema.",
        "category": "gotcha",
        "tags": ["papaparse", "csv-import"],
        "confidence": "medium",
    }
    values.update(changes)
    return ProposedLearning(**values)


def extract(paths: MemoryPaths, case: str, *items: ProposedLearning, **kwargs: Any) -> Any:
    engine = FakeEngine().enqueue(LearningProposals(learnings=list(items)))
    return run_extract(paths, paths.root / case, engine, now=NOW, **kwargs)


# ---------------------------------------------------------------- reading the input


def test_a_mission_archive_is_read_into_documents_and_findings() -> None:
    mission = read_mission(PROJECT / INVOICE)
    assert (mission.source, mission.kind) == ("mission-2026-02-03-invoice-pdf", "mission")
    assert mission.goal.startswith("Generate invoice PDFs")
    assert [name for name, _ in mission.documents] == [
        "mission.json", "log.jsonl", "tasks/T1.json", "tasks/T2.json", "tasks/T3.json",
        "tasks/T4.json",
    ]  # fmt: skip
    kinds = [(f.kind, f.where) for f in mission.findings]
    assert kinds == [
        ("failure", "Render the invoice PDF with Puppeteer"),
        ("failure", "Store the PDF and attach it to the invoice email"),
        ("note", "Find how invoice emails are rendered and sent"),
        ("finding", "Review the invoice PDF change"),
    ]
    first = mission.findings[0]
    assert "libnss3.so" in first.error and first.text.startswith("The node:20-slim base image")


def test_escalations_research_and_phases_are_findings() -> None:
    reindex = read_mission(PROJECT / f"{ARCHIVE}/mission-2026-02-17-search-reindex")
    assert reindex.findings[0].kind == "escalation"
    assert reindex.findings[0].text.startswith("haiku -> sonnet: two attempts")
    audit = read_mission(PROJECT / f"{ARCHIVE}/mission-2026-03-02-auth-audit")
    (research,) = audit.findings
    assert (
        research.kind == "research" and "6 turns" in research.text and "17 turns" in research.text
    )
    phase = read_mission(PROJECT / ".planning/phases/04-notifications")
    assert (phase.source, phase.kind) == ("phase-04-notifications", "phase")
    assert [f.kind for f in phase.findings] == ["issue", "convention", "blocker"]  # 04-02: "None."


def test_a_folder_that_is_neither_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="neither a mission folder"):
        read_mission(tmp_path)


def test_broken_log_lines_and_task_files_warn_and_do_not_stop(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    (folder / "tasks").mkdir(parents=True)
    (folder / "mission.json").write_text(json.dumps({"id": "m-1", "goal": "g", "status": "active"}))
    (folder / "log.jsonl").write_text('{"event": "task_started"}\nnot json\n')
    (folder / "tasks" / "T1.json").write_text("{broken")
    mission = read_mission(folder)
    assert mission.source == "m-1" and len(mission.warnings) == 3
    assert any("status 'active'" in w for w in mission.warnings)


# ---------------------------------------------------------------- rules


def test_a_verified_new_learning_is_written_with_the_mission_as_source(
    project: MemoryPaths,
) -> None:
    result = extract(project, CSV, proposal())
    (planned,) = result.plan
    assert planned.action == "new" and planned.repairs == []
    back = {item.file: item for item in read_learnings(project.learnings_dir).learnings}
    written = back[planned.learning.file]
    assert written.source == "mission-2026-03-15-csv-import" and written.extracted_at == NOW
    assert planned.learning.file == "papa-parse-dynamictyping-drops-the-leading-zero-of-postal.md"


def test_high_confidence_on_a_first_sighting_is_lowered_unless_a_reproducible_gotcha(
    project: MemoryPaths,
) -> None:
    pattern = proposal(category="pattern", confidence="high",
                       title="Stream rows with COPY FROM STDIN through pg-copy-streams",
                       body="Use `COPY customers_staging FROM STDIN` via pg-copy-streams.",
                       tags=["postgres", "copy"])  # fmt: skip
    quoted = proposal(confidence="high", body="The test failed with `expected { postalCode: 2139 } "
                      "to deeply equal { postalCode: '02139' }`; parse with `dynamicTyping: false`.")  # fmt: skip
    result = extract(project, CSV, pattern, quoted)
    first, second = result.plan
    assert first.learning.confidence == "medium"
    assert first.repairs == ["confidence high -> medium (a first sighting)"]
    assert second.action == "new" and second.learning.confidence == "high"


@pytest.mark.parametrize(
    ("changes", "action", "expect"),
    [({"tags": ["code", "misc"]}, "rejected", "needs 2-5 tags, not 0"),
     ({"tags": ["PapaParse", "CSV Import", "code"]}, "new", "tags ['PapaParse', 'CSV Import', 'code'] -> ['papaparse', 'csv-import']"),
     ({"title": "Be careful with imports"}, "rejected", "the title is not specific"),
     ({"body": "Imports can cause problems. Import from the right place."}, "rejected",
      "the body names no file, command or error text found in the mission"),
     ({"title": "Never parse CSV with dynamicTyping enabled", "category": "pattern"}, "new",
      "category pattern -> gotcha (the title describes a trap)")],
)  # fmt: skip
def test_rules_reject_or_repair(
    project: MemoryPaths, changes: dict[str, Any], action: str, expect: str
) -> None:
    before = memory(project)
    (planned,) = extract(project, CSV, proposal(**changes)).plan
    assert planned.action == action
    assert expect in (planned.reason if action == "rejected" else "; ".join(planned.repairs))
    assert (memory(project) == before) is (action == "rejected")


def test_the_same_topic_reinforces_the_existing_file(project: MemoryPaths) -> None:
    same = proposal(title="Compose Postgres listens on 5433, not 5432",
                    body="Tests failed with `ECONNREFUSED 127.0.0.1:5432`: `packages/api/.env.test` "
                    "had the default port; the compose Postgres is on 5433.",
                    tags=["postgres", "docker"])  # fmt: skip
    before = memory(project)
    (planned,) = extract(project, CSV, same).plan
    assert planned.action == "reinforce" and planned.learning.file in (
        "gotchas.md",
        "docker-postgres-port.md",
    )
    after = memory(project)
    assert set(after) == set(before)  # no new file
    changed = [name for name in after if after[name] != before[name]]
    assert changed == [planned.learning.file]


def test_a_second_confirmation_raises_medium_to_high_and_merges(project: MemoryPaths) -> None:
    again = proposal(title="Build @tidepool/shared before the API tests in CI",
                     body="CI failed with `Cannot find module '@tidepool/shared'` (TS2307) until "
                     "`.github/workflows/ci.yml` ran `pnpm --filter @tidepool/shared build` first.",
                     category="pattern", tags=["pnpm", "ci"])  # fmt: skip
    (planned,) = extract(project, f"{ARCHIVE}/mission-2026-02-17-search-reindex", again).plan
    assert planned.action == "reinforce" and planned.learning.file == "build-shared-before-api.md"
    text = (project.learnings_dir / "build-shared-before-api.md").read_text()
    assert "source: mission-2026-02-17-search-reindex\n" in text and "confidence: high\n" in text
    assert f"extractedAt: {NOW}\n" in text and "  - ci\n" in text and "  - pnpm\n" in text
    assert "`packages/api` imports the compiled output" in text  # the old facts stay
    assert "Seen again in mission-2026-02-17-search-reindex:" in text and "ci.yml" in text


def test_the_same_mission_twice_changes_nothing(project: MemoryPaths) -> None:
    items = [proposal(), proposal(title="Compose Postgres listens on 5433, not 5432",
                                  body="`ECONNREFUSED 127.0.0.1:5432` from `packages/api/.env.test`.",
                                  tags=["postgres", "docker"])]  # fmt: skip
    first = extract(project, CSV, *items)
    assert [p.action for p in first.plan] == ["new", "reinforce"]
    snapshot = memory(project)
    second = extract(project, CSV, *items)
    assert [p.action for p in second.plan] == ["already-recorded", "already-recorded"]
    assert memory(project) == snapshot


def test_related_but_distinct_becomes_a_new_file_with_distinct_tags(project: MemoryPaths) -> None:
    related = proposal(title="COPY FROM a server file reads inside the Postgres container",
                       body="`COPY customers FROM '/tmp/customers-import.csv'` is read by the database "
                       "server in its docker container, not by the API; use `FROM STDIN`.",
                       tags=["prisma", "docker", "postgres", "playwright"])  # fmt: skip
    (planned,) = extract(project, CSV, related).plan
    assert planned.action == "new" and planned.related_to == "gotchas.md"
    assert planned.learning.tags[:4] == ["prisma", "docker", "postgres", "playwright"]
    assert len(planned.learning.tags) == 5  # one more tag, so it differs from gotchas.md's


def test_distinct_adds_a_title_tag_only_when_the_tag_sets_are_equal() -> None:
    from legion_llm.memory.learnings.read import Learning
    from legion_llm.pipeline.learnings.extract import _distinct

    mine = Learning("Meilisearch waitForTask before swapping", "b", ["search", "tests"], "m", NOW,
                    "medium", "gotcha")  # fmt: skip
    other = Learning("x", "b", ["tests", "search"], "n", NOW, "medium", "gotcha")
    assert _distinct(mine, other).tags == ["search", "tests", "meilisearch"]
    assert _distinct(mine, Learning("x", "b", ["search"], "n", NOW, "low", "gotcha")) is mine


def test_dry_run_plans_and_writes_nothing(project: MemoryPaths) -> None:
    before = memory(project)
    result = extract(project, CSV, proposal(), dry_run=True)
    assert result.dry_run and result.plan[0].action == "new" and memory(project) == before
    assert result.to_dict()["written"][0]["file"] is None


def test_a_hostile_title_stays_inside_the_memory_folder(project: MemoryPaths) -> None:
    hostile = proposal(title="../../../Papa.parse dynamicTyping escapes /etc/passwd")
    (planned,) = extract(project, CSV, hostile).plan
    assert planned.learning.file == "papa-parse-dynamictyping-escapes-etc-passwd.md"
    assert (project.learnings_dir / planned.learning.file).is_file()
    assert not (project.root.parent / "papa-parse-dynamictyping-escapes-etc-passwd.md").exists()


def test_a_mission_outside_the_project_is_refused(project: MemoryPaths, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    shutil.copytree(PROJECT / CSV, outside)
    with pytest.raises(InputError, match="outside the project root"):
        run_extract(project, outside, FakeEngine(), now=NOW)


def test_offline_extraction_of_a_phase(project: MemoryPaths, registry: OfflineRegistry) -> None:
    result = run_extract(project, project.root / ".planning/phases/05-rate-limits",
                         OfflineEngine(registry), now=NOW)  # fmt: skip
    (planned,) = result.plan
    assert planned.action == "new" and planned.learning.category == "gotcha"
    assert "app.set('trust proxy', 1)" in planned.learning.body
    assert planned.learning.source == "phase-05-rate-limits"
    assert 2 <= len(planned.learning.tags) <= 5


# ---------------------------------------------------------------- Claude over HTTP (respx)


def tool(learnings: list[dict[str, Any]]) -> httpx.Response:
    block = {"type": "tool_use", "id": "toolu_1", "name": "record_learning_proposals",
             "input": {"learnings": learnings}}  # fmt: skip
    return stream_reply(message([block], usage={"input_tokens": 3000, "output_tokens": 400}))


def test_claude_reply_duplicating_an_existing_learning_writes_no_new_file(
    api: respx.MockRouter, claude: Callable[..., Engine], project: MemoryPaths
) -> None:
    duplicate = proposal(
        title="Vitest needs --root when run from the repository root",
        body="`pnpm vitest` at the top printed `No test files found, exiting with code 1`; "
        "`pnpm vitest run --root packages/api` worked.",
        tags=["vitest", "testing"], confidence="high",
    ).model_dump()  # fmt: skip
    vague = proposal(title="Testing tips", body="Tests are important.", tags=["code"]).model_dump()
    route = api.post("/v1/messages").mock(return_value=tool([duplicate, vague]))
    engine = claude(fallback_offline=False)
    before = memory(project)
    result = run_extract(
        project, project.root / ".planning/phases/04-notifications", engine, now=NOW
    )
    sent = body(route.calls[0])
    assert sent["tool_choice"]["name"] == "record_learning_proposals"
    assert "=== 04-01-SUMMARY.md ===" in sent["messages"][0]["content"][-1]["text"]
    assert (
        "- Vitest needs --root when started from the repository root [gotcha, high"
        in (sent["messages"][0]["content"][-1]["text"])
    )
    assert [p.action for p in result.plan] == ["reinforce", "rejected"]
    assert result.plan[0].learning.file == "vitest-root-flag.md"
    after = memory(project)
    assert set(after) == set(before)  # neither reply made a file
    assert [n for n in after if after[n] != before[n]] == ["vitest-root-flag.md"]
    assert engine.meter.as_dict("anthropic")["calls"] == 1


def test_offline_titles_are_cut_at_a_clause_never_on_a_dangling_word() -> None:
    from legion_llm.pipeline.learnings.offline import MAX_TITLE, title_of

    long = (
        "Build large exports in the worker (src/worker/jobs/audit_export.py) and send the user a "
        "signed link by email when the file is ready, because the web tier times out"
    )
    assert title_of(long) == "Build large exports in the worker (src/worker/jobs/audit_export.py)"
    cut = title_of("word " * 40 + "to the end")
    assert len(cut) <= MAX_TITLE and cut.split()[-1].lower() not in {"a", "the", "to", "of"}
    assert title_of("Short title. More text follows") == "Short title"


# ---------------------------------------------------------------- grounding (issue 11)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("x `packages/api/src/imports/customers.ts`", "the title or body is a placeholder"),
        ("n/a — `packages/api/.env.test`", "the title or body is a placeholder"),
        ("TBD `packages/api/.env.test`",
         "the body is generic: beyond the names it quotes it says nothing the mission shows"),
        ("Be careful with `packages/api/src/imports/customers.ts` and test it properly.",
         "the body is generic: beyond the names it quotes it says nothing the mission shows"),
        ("Always check `packages/api/src/imports/customers.ts`; use the right settings.",
         "the body is generic: beyond the names it quotes it says nothing the mission shows"),
        # terse but specific: an error message the mission shows, or its own facts
        ("`expected { postalCode: 2139 } to deeply equal { postalCode: '02139' }`.", None),
        ("Papa.parse with `dynamicTyping: true` turned postal codes into numbers; "
         "parse them as strings.", None),
        ("Papa.parse with `dynamicTyping: true` turned postal codes into numbers. " * 60,
         "the body is 4319 characters long (at most 4000: a learning is a few paragraphs)"),
    ],
)  # fmt: skip
def test_placeholder_and_generic_bodies_are_refused(
    project: MemoryPaths, body: str, reason: str | None
) -> None:
    before = memory(project)
    (planned,) = extract(project, CSV, proposal(body=body)).plan
    if reason is None:
        assert planned.action == "new", planned.reason
    else:
        assert planned.action == "rejected" and planned.reason == reason
        assert memory(project) == before
