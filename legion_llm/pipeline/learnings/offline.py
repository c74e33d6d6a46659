"""The offline engine's learning extraction: one learning per finding of the mission input.

Deterministic and conservative, following the extraction steps of mission-memory:
failures with their fix become gotchas (the error text quoted, the fix stated); model escalations
become patterns about agent and model choice; task-result notes and reviewer findings become
patterns (gotchas when they describe a failure); researcher turn counts become a prompt learning;
a phase's issues and review blockers become gotchas and its conventions patterns. Confidence is
`medium` (one mission, direct cause and effect); a second mission raises it through reinforcement.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from legion_llm.llm.offline import OfflineCall
from legion_llm.memory.learnings.read import TAG_RE, VAGUE_TAGS
from legion_llm.memory.learnings.write import drop_dangling
from legion_llm.memory.signatures.match import salient
from legion_llm.memory.signatures.topics import identifiers
from legion_llm.memory.terms import STOP_WORDS
from legion_llm.pipeline.learnings.mission import Finding, MissionInput

# Words that say nothing about what a learning is about (beyond the stop words).
_PLAIN = frozenset(
    {"error", "errors", "test", "tests", "file", "files", "task", "first", "second", "every",
     "before", "after", "because", "until", "instead", "fixed", "fails", "failed", "works",
     "module", "value", "number", "numbers", "line", "lines", "found", "start", "started",
     "type", "types", "read", "reads", "call", "calls", "once", "again", "them", "then",
     "there", "where", "while", "which", "what", "other", "each", "this", "that", "with",
     "from", "into", "onto", "ran", "run", "runs", "add", "added", "new", "customers", "job",
     "jobs", "data", "same", "mission", "agent", "agents", "model", "api", "src", "packages",
     "package", "node_modules", "repository", "root", "code", "http", "https", "true", "false",
     "filter", "generate", "example", "tmp", "dist", "lib", "test-d", "the", "usr", "app",
     "index", "main", "docs", "utc", "json", "yml", "yaml", "env", "dev", "prod", "staging",
     "us", "ci", "assertionerror", "typeerror", "exiting", "printed", "expected"}
)  # fmt: skip
_FAILURE_WORDS = re.compile(
    r"\b(?:fail\w*|error|broke\w*|crash\w*|twice|duplicate\w*|wrong|lost|never|must not|"
    r"hundreds|leak\w*|timed? out|refused)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r"(?<=[a-z0-9)`'\"])(?:; |: (?=[A-Z])|\. (?=[A-Z`])| - )")
MAX_TITLE = 90


def propose(call: OfflineCall) -> list[dict[str, Any]]:
    """Learnings (as plain dicts) for the mission input passed as the call's context."""
    mission: MissionInput = call.context
    out = []
    for finding in mission.findings:
        title, body, category = _BUILDERS[finding.kind](finding)
        tags = derive_tags(f"{title}\n{body}", mission.goal)
        out.append({"title": title, "body": body, "category": category, "tags": tags,
                    "confidence": "medium"})  # fmt: skip
    return out


def title_of(text: str) -> str:
    """The first clause of a text, at most MAX_TITLE characters, cut at a word."""
    first = _CLAUSE.split(" ".join(text.split()), maxsplit=1)[0].strip().rstrip(".;:,")
    if len(first) > MAX_TITLE:
        first = _shorten(first)
    if first.count("`") % 2:
        first = first.replace("`", "")
    return first[:1].upper() + first[1:] if re.match(r"[a-z]+\b(?![.(/_:-])", first) else first


def _shorten(text: str) -> str:
    """Cut a long clause at a word: at its last ", " or " and " past half the limit when there is
    one, and never on a dangling article or preposition."""
    cut = text[:MAX_TITLE].rsplit(" ", 1)[0]
    boundary = max(cut.rfind(", "), cut.rfind(" and "))
    if boundary > MAX_TITLE // 2:
        cut = cut[:boundary]
    return " ".join(drop_dangling(cut.rstrip(".;:,(").split())).rstrip(".;:,(")


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip()
    return text if text.endswith((".", "!", "?", "`")) else text + "."


_ERROR_WORDS = re.compile(r"error|cannot|can't|not found|no such|refused|failed|exception", re.I)


def _error_line(error: str) -> str:
    """The first salient line of an error text."""
    return _clip(salient(error).split("\n")[0])


def _error_lines(error: str) -> list[str]:
    """The salient lines and the lines naming an error, in order, at most three."""
    keep = set(salient(error).split("\n"))
    lines = [line.strip() for line in error.split("\n") if line.strip()]
    picked = [line for line in lines if line in keep or _ERROR_WORDS.search(line)]
    return [_clip(line) for line in (picked or lines)[:3]]


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= 240 else line[:240].rsplit(" ", 1)[0] + " ..."


def _failure(finding: Finding) -> tuple[str, str, str]:
    error = "\n".join(f"    {line}" for line in _error_lines(finding.error))
    fix = _fix_sentences(finding.text, finding.error)
    body = f'While working on "{finding.where}" the run failed with:\n\n{error}\n\n{fix}'
    return title_of(fix), body, "gotcha"


def _fix_sentences(text: str, error: str) -> str:
    """The note itself, or the sentences of a result summary that explain the failure."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(text.split()))
    if len(sentences) <= 2:
        return _sentence(text)
    keys = {w.lower() for w in re.findall(r"[A-Za-z][\w'-]{3,}", _error_line(error))}
    cause = re.compile(r"\b(?:until|because|instead|only after|must|does not|doesn't)\b", re.I)
    causes = [s for s in sentences if cause.search(s)]
    related = [
        s for s in sentences if keys & set(re.findall(r"\w+", s.lower())) and s not in causes
    ]
    picked = causes + related
    return " ".join(_sentence(s) for s in (picked or sentences[:2]))


def _escalation(finding: Finding) -> tuple[str, str, str]:
    low, _, rest = finding.text.partition(" -> ")
    high, _, reason = rest.partition(": ")
    task = finding.where[:1].lower() + finding.where[1:]
    title = f"Use {high}, not {low}, to {task}"
    body = (
        f'"{finding.where}" failed with {low} ({_error_line(finding.error)}) and was escalated to '
        f"{high}, which completed it. Reason recorded: {_sentence(reason)}"
    )
    return title_of(title), body, "pattern"


def _note(finding: Finding) -> tuple[str, str, str]:
    context = _first_sentence_with_identifier(finding.error)
    body = _sentence(finding.text) + (f" {context}" if context else "")
    return title_of(finding.text), body, _category_of(finding.text, "pattern")


def _first_sentence_with_identifier(text: str) -> str:
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(text.split())):
        if identifiers(sentence):
            return _sentence(sentence)
    return ""


def _category_of(text: str, default: str) -> str:
    return "gotcha" if _FAILURE_WORDS.search(text) else default


Builder = Callable[[Finding], tuple[str, str, str]]


def _plain(kind: str) -> Builder:
    def build(finding: Finding) -> tuple[str, str, str]:
        default = "pattern" if kind == "convention" else "gotcha"
        category = default if kind != "finding" else _category_of(finding.text, "pattern")
        return title_of(finding.text), _sentence(finding.text), category

    return build


def _research(finding: Finding) -> tuple[str, str, str]:
    body = (
        f"{finding.text} Name two or three starting files or folders in every research task "
        "instead of an open question."
    )
    return "Give researcher agents starting file paths", body, "prompt"


_BUILDERS: dict[str, Builder] = {
    "failure": _failure,
    "escalation": _escalation,
    "note": _note,
    "finding": _plain("finding"),
    "issue": _plain("issue"),
    "blocker": _plain("blocker"),
    "convention": _plain("convention"),
    "research": _research,
}


def derive_tags(text: str, goal: str = "", limit: int = 4) -> list[str]:
    """2-5 specific tags: the names the text uses (words of code spans, paths and flags, proper
    nouns such as Meilisearch, hyphenated package names), most used first; the goal's words only
    fill up to two."""
    scores: Counter[str] = Counter()
    for ident in identifiers(text):
        for word in re.findall(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*", ident):
            scores[word.lower()] += 2
    for found in re.finditer(r"(?<=[a-z,;(] )([A-Z][a-z]+[A-Za-z]*|[A-Z]{2,}[A-Za-z]*)\b", text):
        scores[found.group(1).lower()] += 2
    for found in re.finditer(r"\b[a-z][a-z0-9]+(?:-[a-z0-9]+)+\b", text):
        scores[found.group(0)] += 2
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    picked = [tag for tag, _ in ranked if usable_tag(tag)][:limit]
    for word in re.findall(r"[a-z][a-z0-9-]{3,}", goal.lower()):
        if len(picked) >= 2:
            break
        if usable_tag(word) and word not in picked:
            picked.append(word)
    return picked


def usable_tag(tag: str) -> bool:
    return (
        bool(TAG_RE.match(tag))
        and tag not in VAGUE_TAGS
        and tag not in STOP_WORDS
        and tag not in _PLAIN
        and not tag.isdigit()
        and len(tag) >= 3
    )
