"""Careless and embellishing stand-in models over generated phases (not the real corpus):
through the real SDK and the loopback fake, every row distill writes passes both readers
(tests/pipeline/test_distill_properties.py `row_problems`), and no name, number, path,
identifier or version a model added is written unless a cited summary states it."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from legion_llm.evals.distill_corpus import as_cited, read_summary
from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import Engine, Notices
from legion_llm.llm.factory import select_engine
from legion_llm.llm.offline import OfflineRegistry
from legion_llm.memory.knowledge.read import PATTERNS, read_knowledge
from legion_llm.pipeline.distill import PROMPT, distill_offline, run_distill
from legion_llm.project import MemoryPaths
from legion_llm.records import split_list
from tests.fakes import FakeMessagesAPI
from tests.fakes.compaction_models import request_text
from tests.fakes.distill_models import CarelessDistiller
from tests.fakes.messages_api import RecordedRequest
from tests.fakes.replies import Reply
from tests.pipeline.test_distill_properties import row_problems
from tests.strategies.summaries import SummaryPhase, summary_phases, write_phase

pytestmark = pytest.mark.slow
TODAY = date(2026, 12, 1)
KEY = "sk-ant-test-generated-distill-00000"
ADDITIONS = {  # what an embellishing model appends, and the marker looked for in what is written
    "number": (" within 250 ms", "250"),
    "product": (" using Memcached", "Memcached"),
    "identifier": (" via `cacheKeyFor()`", "cacheKeyFor"),
    "path": (" in src/lib/cache.ts", "src/lib/cache.ts"),
    "version": (" on Node 22", "Node 22"),
}
_GROUP = re.compile(r"^## Group \S+ \((.*)\)$")
_CITE = re.compile(r"cite ([^)]*)$")
_ENTRY = re.compile(r"^- plan (\S+) \| phase \S+ \| (.*?) \| status .*? \| .*? \| "
                    r"(?:established|marked|decision|deviation): (.*)$")  # fmt: skip


@dataclass
class Embellisher:
    """For each group of summary entries: its lead entry, with `addition` appended to the
    Pattern or to the Context."""

    addition: str
    where: str

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.path != "/v1/messages" or not isinstance(request.body, dict):
            return None
        patterns: list[dict[str, Any]] = []
        for block in request_text(request).split("\n## Group ")[1:]:
            lines = ("## Group " + block).strip().split("\n")
            head = _GROUP.match(lines[0])
            cite = _CITE.search(head.group(1)) if head else None
            entry = next((m for line in lines[1:] if (m := _ENTRY.match(line))), None)
            if cite is None or entry is None:
                continue
            plan, name, text = entry.groups()
            pattern, context = text, f"Plan {plan} ({name})"
            if self.where == "pattern":
                pattern += self.addition
            else:
                context += "," + self.addition
            patterns.append({"pattern": pattern, "context": context,
                             "reuse_criteria": f"Reuse on work like {name}",
                             "source": [i.strip() for i in cite.group(1).split(",")],
                             "tags": ["pattern", "reuse"]})  # fmt: skip
        return Reply.answer({"patterns": patterns})


def engine_on(base_url: str) -> Engine:
    registry = OfflineRegistry()
    registry.register(PROMPT, distill_offline)
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": base_url}
    config = resolve_llm_config({"max_cost_usd": 100}, env=env)
    return select_engine("anthropic", config, env=env, registry=registry,
                         notices=Notices(sink=None), claude_options={"sleep": lambda s: None})  # fmt: skip


def problems_with(phase: SummaryPhase, model: Any, markers: list[str]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="legion-llm-models-gen-") as folder, \
            FakeMessagesAPI(responder=model) as api:  # fmt: skip
        written = write_phase(phase, Path(folder))
        paths = MemoryPaths(written.root)
        run_distill(paths, engine_on(api.base_url), today=TODAY, phases=[phase.phase_spec])
        records = read_knowledge(PATTERNS, paths.patterns).records
        rows = [{k: str(v) for k, v in r.values.items()} for r in records]
        problems = row_problems(written, rows)
        texts = {plan: as_cited(path.parent, read_summary(path))
                 for plan, path in written.files.items()}  # fmt: skip
        for row in rows:
            said = "\n".join(texts.get(i, "") for i in split_list(row.get("source", "")))
            text = " ".join(row.get(k, "") for k in ("pattern", "context", "reuse_criteria"))
            problems += [f"{marker!r} written, no cited summary states it: {row}"
                         for marker in markers if marker in text and marker not in said]  # fmt: skip
        return problems


@settings(max_examples=8, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(phase=summary_phases())
def test_no_model_invention_is_written_on_generated_phases(phase: SummaryPhase) -> None:
    problems = problems_with(phase, CarelessDistiller(), ["Redis", "24 hours", "Kubernetes"])
    for addition, marker in ADDITIONS.values():
        for where in ("pattern", "context"):
            problems += problems_with(phase, Embellisher(addition, where), [marker])
    assert problems == [], "\n".join(problems)
