"""Stand-in models for compaction requests on the loopback fake: responders for FakeMessagesAPI.

    api = FakeMessagesAPI(responder=PhaseModel(phase))                 # answers perfectly
    api = FakeMessagesAPI(responder=PhaseModel(phase, careless=True))  # drops ~20%, invents one

A PhaseModel reads what a real model would read: the plans and ids listed in the request (the
prompt's context block) and the paths their summaries name, and answers with what a competent
model would write for exactly those plans. The text comes from the offline engine's extractive
digest of the same plans, put in the model's own words ("Delivered: ...", grounded in the
summaries by their content, not as excerpts), so a perfect answer passes review as it is.

A careless model, as careless as a competent one is on a long phase: drops every fifth listed
id and path, invents one sibling path of a real file (a Files row, and a sentence of a
deliverable naming it), and quotes the summaries as evidence without naming the plan (the
summary's own requirement line, `requirements-completed: [...]` for an id its frontmatter
lists). Every one of these is a form problem repair fixes for free. On a re-ask, `reask="fix"`
answers what it was told correctly, `reask="missing"` only restores what was missing.
`lazy_first` makes the first answer a placeholder digest (which needs a re-ask). A re-ask that
names the sections to redo gets only those sections, the others empty, as the prompt asks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from legion_llm.memory.phases.find import Phase
from legion_llm.pipeline.compact.offline import CompactContext, compact_extractive
from legion_llm.pipeline.compact.prepare import Prepared, prepare
from legion_llm.pipeline.compact.render import FileItem, PhaseDigest, RequirementItem, render
from legion_llm.pipeline.compact.split import chunk_facts
from legion_llm.pipeline.compact.verify import tokens_of
from tests.fakes.messages_api import RecordedRequest
from tests.fakes.replies import Reply

INVENTED = "src/made/up/helper.py"
SECTIONS = ("deliverables", "decisions", "files", "verification", "checks", "agents")
_PLAN_LINE = re.compile(
    r"^- ([^:\s]+): .*?(?:, (part (\d+) of \d+))?\)$",
    re.M,  # any plan id (`03-01`, `01b`, `2.1-04`)
)
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
    reask: str = "fix"  # or "missing": a re-ask restores only the missing ids and paths
    answered: int = 0
    reasked: int = 0
    prepared: Prepared = field(init=False)

    def __post_init__(self) -> None:
        self.prepared = prepare(self.phase)

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.path != "/v1/messages" or not isinstance(request.body, dict):
            return None
        text = request_text(request)
        self.answered += 1
        redo = _REDO.search(text)
        again = "Your previous proposal had these problems" in text
        self.reasked += again
        if self.lazy_first and self.answered == 1:
            digest = self.lazy(text)
        elif again and self.reask == "fix":
            digest = self.digest(text, careless=False)
        else:
            digest = self.digest(text)
        if redo:
            keep = {s.strip() for s in redo.group(1).split(",")}
            digest = digest.model_copy(update={s: [] for s in SECTIONS if s not in keep})
        return Reply.answer(json.loads(digest.model_dump_json()))

    def digest(self, text: str, careless: bool | None = None) -> PhaseDigest:
        """What a competent model writes for the plans, ids and paths this request lists."""
        plans = {m.group(1): int(m.group(3) or 1) for m in _PLAN_LINE.finditer(
            listed(text, "Plans:", "Requirement ids"))}  # fmt: skip
        ids = _ID_LINE.findall(listed(text, "Requirement ids that must appear", "Target length"))
        docs = tuple(d for d in self.prepared.docs if d.facts.id in plans)
        paths = chunk_facts(docs, self.prepared.facts).paths  # what the summaries it was sent name
        ctx = CompactContext(docs, tuple(ids), tuple(paths), sum(tokens_of(d.text) for d in docs),
                             lambda g: tokens_of(render_for(self.prepared, g)))  # fmt: skip
        digest = compact_extractive(ctx)
        later = {p for p, part in plans.items() if part > 1}  # a later part: said already
        digest = digest.model_copy(update={
            "deliverables": [d for d in digest.deliverables if d.plan_id not in later],
            "checks": [c for c in digest.checks if c.plan_id not in later],
        })  # fmt: skip
        digest = in_own_words(digest)
        careless = self.careless if careless is None else careless
        return self.carelessly(digest) if careless else digest

    def carelessly(self, digest: PhaseDigest) -> PhaseDigest:
        """Every fifth requirement and file dropped, one sibling path invented (a row and a
        sentence), evidence quoting the summaries without naming the plan; and, as the models
        seen on unseen phases did: a fact of its own appended to the second deliverable
        (`; responses are now cached in Redis for 24 hours`), every third change text a
        placeholder (`updated`, `n/a`), the last deliverable padded past its field's limit."""
        verification = [_quoted(r, self.prepared) for i, r in enumerate(digest.verification)
                        if i % 5 != 4]  # fmt: skip
        files = [f.model_copy(update={"change": PLACEHOLDERS[i % 2]}) if i % 3 == 2 else f
                 for i, f in enumerate(digest.files) if i % 5 != 4]  # fmt: skip
        invented = sibling(digest) or INVENTED
        files.append(FileItem(path=invented, change="helpers for the parsing above"))
        deliverables = list(digest.deliverables)
        if deliverables:
            first = deliverables[0]
            summary = f"{first.summary.rstrip('.')}. Shared helpers live in {invented}."
            deliverables[0] = first.model_copy(update={"summary": summary})
        if len(deliverables) > 1:
            second = deliverables[1]
            summary = f"{second.summary.rstrip('.')}; {EMBELLISHMENT}"
            deliverables[1] = second.model_copy(update={"summary": summary})
        if len(deliverables) > 2:
            last = deliverables[-1]
            padded = " ".join([last.summary.rstrip(".") + "."] * 8)
            deliverables[-1] = last.model_copy(update={"summary": padded})
        return digest.model_copy(update={"verification": verification, "files": files,
                                         "deliverables": deliverables})  # fmt: skip

    def lazy(self, text: str) -> PhaseDigest:
        """A schema-valid answer of placeholders (every text `x`) for the plans it was sent."""
        good = self.digest(text, careless=False)
        data: dict[str, Any] = json.loads(good.model_dump_json())
        for item in data["deliverables"]:
            item["summary"] = "x"
        for item in data["decisions"]:
            item["decision"] = item["rationale"] = "x"
        return PhaseDigest.model_validate(data)


# what a model adds of its own: names and numbers no summary states
EMBELLISHMENT = "responses are now cached in Redis for 24 hours"
PLACEHOLDERS = ("updated", "n/a")


def in_own_words(digest: PhaseDigest) -> PhaseDigest:
    """The deliverables as a model words them: the summary's content, not its sentence."""
    return digest.model_copy(update={"deliverables": [
        d.model_copy(update={"summary": f"Delivered: {d.summary[:1].lower()}{d.summary[1:]}"})
        for d in digest.deliverables]})  # fmt: skip


def sibling(digest: PhaseDigest) -> str | None:
    """A path next to a real one that no summary names (`src/lib/auth_helpers.ts`)."""
    real = next((f.path for f in digest.files if "/" in f.path and "." in f.path.rsplit("/")[-1]
                 and "*" not in f.path and "{" not in f.path), None)  # fmt: skip
    if real is None:
        return None
    folder, name = real.rsplit("/", 1)
    stem, ext = name.rsplit(".", 1)
    return f"{folder}/{stem}_helpers.{ext}"


def _quoted(item: RequirementItem, prep: Prepared) -> RequirementItem:
    """Evidence quoting the summary's own line for the id, without the plan id."""
    if item.verdict == "not verified":
        return item
    said = [r.text for p in prep.facts.plans for r in p.reports if r.id == item.requirement_id]
    if not said:
        return item
    quote = re.sub(r"\(?\b\d+(?:\.\d+)?-\d+[a-z]?\b\)?", "", said[0]).strip(" ;,")
    return item.model_copy(update={"evidence": quote[:200]})


def render_for(prep: Prepared, digest: PhaseDigest) -> str:
    from datetime import date

    from legion_llm.pipeline.compact.prepare import header_for

    return render(header_for(prep, date(2026, 11, 30)), digest)


@dataclass
class CorpusModel:
    """One stand-in model for every phase of a corpus: each request is answered by the
    PhaseModel of the phase whose summaries it carries (a `===== file =====` header and the
    first words of that summary identify it), so one engine can compact many phases."""

    phases: list[Phase]
    options: dict[str, Any] = field(default_factory=dict)
    models: list[PhaseModel] = field(init=False)

    def __post_init__(self) -> None:
        self.models = [PhaseModel(phase, **self.options) for phase in self.phases]

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.path != "/v1/messages" or not isinstance(request.body, dict):
            return None
        text = request_text(request)
        for model in self.models:  # a plan's file header and its first words (a large phase
            # is asked plan by plan: a request may carry any of its plans)
            if any(f"===== {d.facts.file}" in text and _opening(d.text) in text
                   for d in model.prepared.docs):  # fmt: skip
                return model(request)
        raise AssertionError("a request for no phase of the corpus")

    @property
    def reasked(self) -> int:
        return sum(m.reasked for m in self.models)


def _opening(text: str) -> str:
    """A summary's first line of substance, as it is sent."""
    return next((line for line in text.split("\n") if len(line.strip()) > 20), text[:80]).strip()
