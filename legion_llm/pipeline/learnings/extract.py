"""Mission learnings: propose -> verify the rules -> de-duplicate -> write or report the plan.

prepare (mission_input.py): read the completed mission or Legion phase folder (inside the project).
engine: `extract-learnings` proposes learnings (Claude), or the offline step distils one per
finding (extract_offline.py).
verify (here, deterministic): tags are repaired to 2-5 lowercase specific tags or the learning is
rejected; the title must carry two content words of the input and the body must name a file,
command or error text found in the input; a placeholder title or body, or a body whose own words
(the names it quotes aside) hold fewer than three content words of the input, is rejected; a learning titled as a trap ("Never ...", "Avoid ...")
is a gotcha; `high` on a first sighting is lowered to `medium` unless the learning is a gotcha
quoting exact error text or a command from the input.
de-duplicate (memory/topics.py, the error matcher's family): the same topic as an existing
learning reinforces it (memory/learnings_write.py), unless that mission is already its source;
a related but distinct topic becomes a new file whose tags differ from the related one's.
write: new files with generated names and in-place reinforcements, all inside
`.mission-control/memory/`; `dry_run` only reports the plan. The engine is asked without a lock;
de-duplication and the writes then happen under the folder's one lock, against the learnings as
they are at that moment, so runs of one mission at the same time write each learning once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from legion_llm.llm.engine import Engine
from legion_llm.llm.offline import OfflineCall, offline_step
from legion_llm.memory.files import locked, require_inside
from legion_llm.memory.learnings.read import Learning, LearningSet, read_learnings, tag_problems
from legion_llm.memory.learnings.write import apply, confirmed_by, reinforce, rewrite, write_new
from legion_llm.memory.redact import Hit, Redactor, project_redactor, write_warning
from legion_llm.memory.signatures.topics import TopicIndex, identifiers, topic_terms, words
from legion_llm.memory.terms import content_terms, is_placeholder
from legion_llm.pipeline.learnings.mission import MissionInput, read_mission
from legion_llm.pipeline.learnings.offline import propose, usable_tag
from legion_llm.project import MemoryPaths

PROMPT = "extract-learnings"
Category = Literal["pattern", "gotcha", "architecture", "tooling", "prompt"]
_TRAP = re.compile(r"^(?:never|don'?t|do not|avoid|beware)\b|\b(?:gotcha|pitfall|trap)\b", re.I)
_QUOTED = re.compile(r"`([^`\n]{8,})`|\"([^\"\n]{8,})\"|'([^'\n]{8,})'|^ {4}(\S.{7,})$", re.M)


class ProposedLearning(BaseModel):
    """One learning extracted from the mission."""

    title: str = Field(description="A specific title naming the tool, file, command or error.")
    body: str = Field(
        description="1-3 short paragraphs: specific, actionable, facts from the input."
    )
    category: Category = Field(description="pattern, gotcha, architecture, tooling or prompt.")
    tags: list[str] = Field(description="2 to 5 lowercase keywords a mission goal would contain.")
    confidence: Literal["low", "medium", "high"] = Field(description="See the rules.")


class LearningProposals(BaseModel):
    """The learnings worth keeping from this mission; empty when there are none."""

    learnings: list[ProposedLearning] = Field(description="The learnings, possibly none.")


@offline_step(PROMPT)
def extract_offline(call: OfflineCall) -> LearningProposals:
    return LearningProposals(learnings=[ProposedLearning(**item) for item in propose(call)])


@dataclass
class Planned:
    action: str  # new | reinforce | already-recorded | rejected
    learning: Learning
    reason: str = ""
    repairs: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    related_to: str | None = None
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.action, **self.learning.to_dict()}
        data["body"] = self.learning.body
        data["file"] = self.learning.file or None
        for name in ("reason", "repairs", "changes", "related_to", "score"):
            value = getattr(self, name)
            if value:
                data[name] = value
        return data


@dataclass
class ExtractResult:
    source: str
    kind: str
    dry_run: bool
    plan: list[Planned] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    prompt_sha256: str | None = None

    def of(self, *actions: str) -> list[dict[str, Any]]:
        return [p.to_dict() for p in self.plan if p.action in actions]

    def to_dict(self) -> dict[str, Any]:
        return {
            "mission": self.source,
            "kind": self.kind,
            "dry_run": self.dry_run,
            "written": self.of("new"),
            "reinforced": self.of("reinforce"),
            "skipped": self.of("already-recorded", "rejected"),
            "prompt_sha256": self.prompt_sha256,
        }


# ---------------------------------------------------------------- verify


def check_rules(
    proposal: ProposedLearning, mission: MissionInput
) -> tuple[Learning | None, list[str], str]:
    """(learning with repairs applied, the repairs, why it is rejected or "")."""
    repairs: list[str] = []
    tags = clean_tags(proposal.tags)
    if tags != proposal.tags:
        repairs.append(f"tags {proposal.tags} -> {tags}")
    title, body = " ".join(proposal.title.split()), proposal.body.strip()
    category: str = proposal.category
    if category != "gotcha" and _TRAP.search(title):
        repairs.append(f"category {category} -> gotcha (the title describes a trap)")
        category = "gotcha"
    learning = Learning(title, body, tags, mission.source, "", proposal.confidence, category)
    problems = tag_problems(tags)
    if problems:
        return None, repairs, "; ".join(problems)
    if not title or len(title) > 120:
        return None, repairs, "the title must be one line of 1-120 characters"
    if len(body) > MAX_BODY_CHARS:
        return None, repairs, (f"the body is {len(body)} characters long (at most "
                               f"{MAX_BODY_CHARS}: a learning is a few paragraphs)")  # fmt: skip
    known = mission.known_words
    if len(set(words(title)) & known) < 2:
        return (
            None,
            repairs,
            "the title is not specific (fewer than two of its words occur in the mission)",
        )
    if not input_names(body, mission.text):
        return None, repairs, "the body names no file, command or error text found in the mission"
    generic = _placeholder_or_generic(title, body, mission.text)
    if generic:
        return None, repairs, generic
    return learning, repairs, ""


MAX_BODY_CHARS = 4000  # `learnings load` fits several learnings into its 2,000-token budget

# advice any learning could give: not evidence that a body says something specific
_ADVICE = content_terms(
    "careful carefully properly correct correctly sure important remember check checks verify "
    "test tests testing config configuration setting settings code good best practice always "
    "never avoid use using thing things way ways step steps"
)


def _placeholder_or_generic(title: str, body: str, source_text: str) -> str:
    """Why a learning is a stand-in (`x`, "TBD") or generic advice around a quoted name ("Be
    careful with `src/app.py` and test it properly"), or "". A body is specific when it quotes
    an error message or a command the input holds, or when its own words (the names it quotes
    aside) share at least two content words with the input beyond generic advice."""
    if is_placeholder(title) or is_placeholder(body):
        return "the title or body is a placeholder"
    haystack = source_text.lower()
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(body)]
    if any(" " in q.strip() and q.strip().lower() in haystack for q in quoted):
        return ""
    plain = body
    for name in sorted(input_names(body, source_text), key=len, reverse=True):
        plain = plain.replace(name, " ")
    own = (content_terms(plain) - _ADVICE) & content_terms(source_text)
    if len(own) < 2:
        return "the body is generic: beyond the names it quotes it says nothing the mission shows"
    return ""


def clean_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        value = re.sub(r"\s+", "-", tag.strip().lower())
        if value and value not in out and not tag_problems([value, "x-ok"]):
            out.append(value)
    return out[:5]


def input_names(text: str, source_text: str) -> list[str]:
    """Identifiers and quoted texts of `text` that occur in the mission's input."""
    haystack = source_text.lower()
    names = identifiers(text) + [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    return [n for n in names if len(n) >= 3 and n.lower().strip() in haystack]


def reproducible(learning: Learning, mission: MissionInput) -> bool:
    """A gotcha quoting exact error text or a command that the input shows."""
    haystack = mission.lowered
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(learning.body)]
    return learning.category == "gotcha" and any(q.strip().lower() in haystack for q in quoted)


# ---------------------------------------------------------------- de-duplicate


def learning_terms(title: str, body: str, tags: list[str]) -> str:
    return topic_terms(f"{title}\n{body}", extra=tags)


class Deduper:
    """The existing learnings (and those planned in this run) as one topic index."""

    def __init__(self, existing: list[Learning]) -> None:
        self.items: dict[str, Learning] = {}
        for learning in existing:
            self.items[f"{learning.file}#{learning.doc}.{learning.section}"] = learning

    def _index(self) -> TopicIndex:
        return TopicIndex(
            (key, learning_terms(item.title, item.body, item.tags))
            for key, item in self.items.items()
        )

    def place(self, learning: Learning, source: str, now: str) -> Planned:
        ranked = self._index().rank(learning_terms(learning.title, learning.body, learning.tags))
        same = [m for m in ranked if m.same]
        for match in same:
            if confirmed_by(self.items[match.key], source):
                found = self.items[match.key]
                return Planned("already-recorded", replace(learning, file=found.file),
                               reason=f"{found.file or 'a learning of this run'} already holds it "
                               f"from {source}", score=match.score)  # fmt: skip
        if same:
            return self._reinforce(same[0].key, learning, source, now, same[0].score)
        related = ranked[0] if ranked and ranked[0].related else None
        planned = Planned("new", replace(learning, source=source, extracted_at=now))
        if related is not None:
            planned.related_to, planned.score = self.items[related.key].file, related.score
            planned.learning = _distinct(planned.learning, self.items[related.key])
        self.items[f"new-{len(self.items)}"] = planned.learning
        return planned

    def _reinforce(
        self, key: str, learning: Learning, source: str, now: str, score: float
    ) -> Planned:
        existing = self.items[key]
        done = reinforce(existing, source=source, extracted_at=now, tags=learning.tags,
                         body=learning.body)  # fmt: skip
        assert done is not None  # a same-source match was handled by the caller
        self.items[key] = done.learning
        return Planned("reinforce", done.learning, changes=list(done.changes), score=score)


def _distinct(learning: Learning, related: Learning) -> Learning:
    """A new learning next to a related one must not carry exactly the same tags: the first
    usable word of its title that is not a tag yet is added (the fifth tag at most)."""
    if {t.lower() for t in learning.tags} != {t.lower() for t in related.tags}:
        return learning
    words_ = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9-]{2,}", learning.title)]
    extra = next((w for w in words_ if usable_tag(w) and w not in learning.tags), None)
    if extra is None:
        return learning
    return replace(learning, tags=[*learning.tags[:4], extra])


# ---------------------------------------------------------------- run


def run_extract(
    paths: MemoryPaths, folder: Path, engine: Engine, *, now: str, dry_run: bool = False
) -> ExtractResult:
    mission = read_mission(require_inside(folder, paths.root), paths.root)
    existing = read_learnings(paths.learnings_dir)
    result = ExtractResult(mission.source, mission.kind, dry_run)
    result.warnings = [*mission.warnings, *existing.warnings]
    variables = {
        "source": mission.source,
        "mission": mission.render(),
        "existing_learnings": render_existing(existing),
    }
    answer = engine.ask(LearningProposals, PROMPT, variables, context=mission)
    result.prompt_sha256 = answer.prompt_sha256
    redactor = project_redactor(paths.root)
    if dry_run:
        result.plan = _plan(answer.output.learnings, mission, existing, now)
        _redact_report(result, redactor, ".mission-control/memory/ (dry run)")
        return result
    with locked(paths.learnings_dir, root=paths.root):
        # Decide against the folder as it is now (another run may have written since the read
        # above), and write before anyone else may decide: concurrent runs write once.
        current = read_learnings(paths.learnings_dir)
        result.warnings = [*mission.warnings, *current.warnings]
        result.plan = _plan(answer.output.learnings, mission, current, now)
        _write(paths, current, result)
    _redact_report(result, redactor, None)
    return result


def _redact_report(result: ExtractResult, redactor: Redactor, target: str | None) -> None:
    """What the report repeats of each proposal, redacted as a write would redact it: a skipped or
    rejected one (and, in a dry run, every one) is never written, so nothing else redacts it. A
    dry run warns as a write would; written ones were redacted (and warned about) by the write."""
    hits: list[Hit] = []
    for planned in result.plan:
        planned.learning, found = redactor.record(planned.learning)
        hits += found
        planned.reason = redactor.text(planned.reason)
        planned.repairs = [redactor.text(item) for item in planned.repairs]
        planned.changes = [redactor.text(item) for item in planned.changes]
    if target is not None:
        result.warnings += write_warning(redactor, hits, target)


def _plan(
    proposals: list[ProposedLearning], mission: MissionInput, existing: LearningSet, now: str
) -> list[Planned]:
    deduper = Deduper(existing.learnings)
    return [_plan_one(proposal, mission, deduper, now) for proposal in proposals]


def _plan_one(
    proposal: ProposedLearning, mission: MissionInput, deduper: Deduper, now: str
) -> Planned:
    learning, repairs, reason = check_rules(proposal, mission)
    if learning is None:
        rejected = Learning(proposal.title, proposal.body, proposal.tags, mission.source, now,
                            proposal.confidence, proposal.category)  # fmt: skip
        return Planned("rejected", rejected, reason=reason, repairs=repairs)
    planned = deduper.place(learning, mission.source, now)
    planned.repairs = repairs + planned.repairs
    high = planned.action == "new" and planned.learning.confidence == "high"
    if high and not reproducible(planned.learning, mission):
        planned.learning = replace(planned.learning, confidence="medium")
        planned.repairs.append("confidence high -> medium (a first sighting)")
    return planned


def render_existing(existing: LearningSet) -> str:
    if not existing.learnings:
        return "(none)"
    return "\n".join(
        f"- {item.title} [{item.category}, {item.confidence}; tags: {', '.join(item.tags)}]"
        for item in existing.learnings
    )


def _write(paths: MemoryPaths, existing: LearningSet, result: ExtractResult) -> None:
    folder, touched = paths.learnings_dir, set()
    for planned in result.plan:
        if planned.action == "new":
            planned.learning = write_new(
                folder, paths.root, planned.learning, result.warnings, lock=False
            )
        elif planned.action == "reinforce":
            apply(existing.files[planned.learning.file], planned.learning)
            touched.add(planned.learning.file)
    for name in sorted(touched):
        rewrite(folder, paths.root, existing.files[name], result.warnings, lock=False)
