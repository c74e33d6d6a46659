"""Stand-in models for compaction requests on the loopback fake: responders for FakeMessagesAPI.

    api = FakeMessagesAPI(responder=PhaseModel(phase))                 # answers perfectly
    api = FakeMessagesAPI(responder=PhaseModel(phase, careless=True))  # drops ~20%, invents one

A PhaseModel reads what a real model would read: the plans and ids listed in the request (the
prompt's context block) and the paths their summaries name, and answers with what a competent model would write for exactly
those plans. The text comes from the offline engine's extractive digest of the same plans (it is
grounded in the summaries, so a perfect answer passes review as it is). A careless model drops
every fifth listed id and path and invents one path (all of which repair fixes without a
re-ask); `lazy_first` makes the first answer a placeholder digest (which needs a re-ask). A re-ask
that names the sections to redo gets only those sections, the others empty, as the prompt asks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from legion_llm.memory.phases.find import Phase
from legion_llm.pipeline.compact.offline import CompactContext, compact_extractive
from legion_llm.pipeline.compact.prepare import Prepared, prepare
from legion_llm.pipeline.compact.render import FileItem, PhaseDigest, render
from legion_llm.pipeline.compact.split import chunk_facts
from legion_llm.pipeline.compact.verify import tokens_of
from tests.fakes.messages_api import RecordedRequest
from tests.fakes.replies import Reply

INVENTED = "src/made/up/helper.py"
SECTIONS = ("deliverables", "decisions", "files", "verification", "checks", "agents")
_PLAN_LINE = re.compile(r"^- (\d+(?:\.\d+)?-\d+[a-z]?): .*?(?:, (part (\d+) of \d+))?\)$", re.M)
_ID_LINE = re.compile(r"^- ([^:\n]+): (?:pass|partial|fail|not verified)\b", re.M)
_REDO = re.compile(r"Redo only these sections: ([a-z, ]+)\.")


def request_text(request: RecordedRequest) -> str:
    """The user turn of a Messages request as one text (its blocks joined)."""
    content = request.body["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n\n".join(block.get("text", "") for block in content)


def listed(text: str, heading: str, until: str) -> str:
    start = text.find(heading)
    end = text.find(until, start + 1)
    return text[start:end] if start >= 0 else ""


@dataclass
class PhaseModel:
    phase: Phase
    careless: bool = False
    lazy_first: bool = False
    answered: int = 0
    prepared: Prepared = field(init=False)

    def __post_init__(self) -> None:
        self.prepared = prepare(self.phase)

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.path != "/v1/messages" or not isinstance(request.body, dict):
            return None
        text = request_text(request)
        self.answered += 1
        digest = self.lazy() if self.lazy_first and self.answered == 1 else self.digest(text)
        redo = _REDO.search(text)
        if redo:
            keep = {s.strip() for s in redo.group(1).split(",")}
            digest = digest.model_copy(update={s: [] for s in SECTIONS if s not in keep})
        return Reply.answer(json.loads(digest.model_dump_json()))

    def digest(self, text: str) -> PhaseDigest:
        """What a competent model writes for the plans, ids and paths this request lists."""
        plans = {m.group(1): int(m.group(3) or 1) for m in _PLAN_LINE.finditer(
            listed(text, "Plans:", "Requirement ids"))}  # fmt: skip
        ids = _ID_LINE.findall(listed(text, "Requirement ids that must appear", "Target length"))
        docs = tuple(d for d in self.prepared.docs if d.facts.id in plans)
        paths = chunk_facts(docs).paths  # what the summaries it was sent name
        ctx = CompactContext(docs, tuple(ids), tuple(paths), sum(tokens_of(d.text) for d in docs),
                             lambda g: tokens_of(render_for(self.prepared, g)))  # fmt: skip
        digest = compact_extractive(ctx)
        later = {p for p, part in plans.items() if part > 1}  # a later part: said already
        digest = digest.model_copy(update={
            "deliverables": [d for d in digest.deliverables if d.plan_id not in later],
            "checks": [c for c in digest.checks if c.plan_id not in later],
        })  # fmt: skip
        return self.carelessly(digest) if self.careless else digest

    def carelessly(self, digest: PhaseDigest) -> PhaseDigest:
        """Every fifth requirement and file dropped, and one path that no summary names."""
        verification = [r for i, r in enumerate(digest.verification) if i % 5 != 4]
        files = [f for i, f in enumerate(digest.files) if i % 5 != 4]
        files.append(FileItem(path=INVENTED, change="helper for the fuzzy search"))
        return digest.model_copy(update={"verification": verification, "files": files})

    def lazy(self) -> PhaseDigest:
        """A schema-valid answer of placeholders (every text `x`)."""
        good = self.digest_for_all()
        data: dict[str, Any] = json.loads(good.model_dump_json())
        for item in data["deliverables"]:
            item["summary"] = "x"
        for item in data["decisions"]:
            item["decision"] = item["rationale"] = "x"
        return PhaseDigest.model_validate(data)

    def digest_for_all(self) -> PhaseDigest:
        prep = self.prepared
        ctx = CompactContext(prep.docs, prep.facts.requirement_ids, prep.facts.paths,
                             prep.tokens_original, lambda g: tokens_of(render_for(prep, g)))  # fmt: skip
        return compact_extractive(ctx)


def render_for(prep: Prepared, digest: PhaseDigest) -> str:
    from datetime import date

    from legion_llm.pipeline.compact.prepare import header_for

    return render(header_for(prep, date(2026, 11, 30)), digest)
