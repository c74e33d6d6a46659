"""What a completed mission or Legion phase says, read deterministically for learning extraction.

A mission folder (mission-control `/debrief` archive, or `.mission-control/missions/`) holds the
mission state (`mission.json` or `active.json`), a JSONL event log and task cards (`tasks/T<n>.json`
with their `result`). A Legion phase folder holds `NN-PP-SUMMARY.md` files and `NN-REVIEW.md`.

`read_mission` returns the documents the engine reads (as text) and the findings the offline
engine distils: failures with their error text and the note or result that fixed them, model
escalations, notes and reviewer findings of task results, researcher turn counts, and from
phases the `## Issues Encountered` items, `**Conventions established**` and the review's blockers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.memory.files import read_problem, read_text
from legion_llm.memory.signatures.topics import words
from legion_llm.memory.untrusted import UntrustedInputError, load_json

STATE_FILES = ("mission.json", "active.json", "state.json")
_NONE = re.compile(r"^\s*(?:none|n/a|nothing|-)\.?\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*$")


@dataclass
class Finding:
    kind: str  # failure | escalation | note | finding | research | issue | convention | blocker
    text: str
    where: str = ""
    error: str = ""


@dataclass
class MissionInput:
    source: str
    kind: str  # mission | phase
    goal: str
    documents: list[tuple[str, str]] = field(default_factory=list)  # only ever appended to
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _built: dict[str, tuple[int, Any]] = field(default_factory=dict, repr=False, compare=False)

    def _once(self, name: str, build: Callable[[], Any]) -> Any:
        """`build()`, computed again only when a document was added: every proposal is checked
        against the whole input, which must not cost the input's size each time."""
        stamp, value = self._built.get(name, (-1, None))
        if stamp != len(self.documents):
            value = build()
            self._built[name] = (len(self.documents), value)
        return value

    @property
    def text(self) -> str:
        return str(self._once("text", lambda: "\n".join(text for _, text in self.documents)))

    @property
    def lowered(self) -> str:
        return str(self._once("lowered", lambda: self.text.lower()))

    @property
    def known_words(self) -> frozenset[str]:
        """The input's content words (signatures/topics.py `words`)."""
        found: frozenset[str] = self._once("words", lambda: frozenset(words(self.text)))
        return found

    def render(self) -> str:
        return "\n\n".join(f"=== {name} ===\n{text.strip()}" for name, text in self.documents)


def read_mission(folder: Path, root: Path | None = None) -> MissionInput:
    """Read a mission or phase folder. A file that cannot be read (not a regular file, a link out
    of `root`, not UTF-8, JSON past the bounds of memory/untrusted.py) is one warning and skipped."""
    reader = _Reader(root)
    if folder_kind(folder) == "mission":
        return _read_mission_folder(folder, reader)
    return _read_phase_folder(folder, reader)


def folder_kind(folder: Path) -> str:
    """ "mission" or "phase": what read_mission would read there, or its one-line refusal (so a
    command can say it before it opens an engine)."""
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    if any((folder / name).exists() for name in STATE_FILES) or (folder / "tasks").is_dir():
        return "mission"
    if list(folder.glob("*-SUMMARY.md")) or list(folder.glob("*-REVIEW.md")):
        return "phase"
    raise InputError(
        f"{folder} is neither a mission folder (mission.json, log.jsonl, tasks/) "
        "nor a Legion phase folder (NN-PP-SUMMARY.md, NN-REVIEW.md)"
    )


# ---------------------------------------------------------------- missions


class _Reader:
    """Reads the files of one mission through the one reader (memory/files.py), warning once
    per file that is skipped."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.warnings: list[str] = []

    def text(self, path: Path, shown: str | None = None) -> str | None:
        try:
            return read_text(path, root=self.root) or ""
        except (OSError, UnicodeDecodeError) as exc:
            self.warnings.append(f"Warning: {shown or path.name} {read_problem(exc)}; skipped.")
            return None

    def json(self, path: Path, shown: str | None = None) -> Any:
        text = self.text(path, shown)
        try:
            return load_json(text) if text else None
        except UntrustedInputError as exc:
            self.warnings.append(f"Warning: {shown or path.name} {exc}; skipped.")
        except json.JSONDecodeError as exc:
            self.warnings.append(f"Warning: {shown or path.name} is not JSON ({exc}); skipped.")
        return None


def _read_mission_folder(folder: Path, reader: _Reader) -> MissionInput:
    warnings = reader.warnings
    state_file = next((folder / n for n in STATE_FILES if (folder / n).exists()), None)
    state = reader.json(state_file) if state_file else None
    state = state if isinstance(state, dict) else {}
    source = str(state.get("id") or folder.name)
    status = str(state.get("status", "completed"))
    if not status.startswith("completed") and status != "archived":
        warnings.append(f"Warning: mission {source} has status {status!r}, not completed.")
    result = MissionInput(source, "mission", str(state.get("goal", "")), warnings=warnings)
    if state:
        result.documents.append((state_file.name if state_file else "state", _pretty(state)))
    events = _events(folder, result, reader)
    tasks = _tasks(folder, result, reader)
    found = [*_failures(events, tasks), *_results(tasks), *_research(events, tasks)]
    result.findings = _once_each(found)
    return result


def _once_each(findings: list[Finding]) -> list[Finding]:
    """The findings in order, each the first time it occurs (a task that failed 2,000 times with
    the same error and the same retry note is one finding, not 2,000)."""
    seen: dict[tuple[str, str, str, str], Finding] = {}
    for finding in findings:
        seen.setdefault((finding.kind, finding.text, finding.where, finding.error), finding)
    return list(seen.values())


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _events(folder: Path, result: MissionInput, reader: _Reader) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        text = reader.text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                event = load_json(line)
            except UntrustedInputError as exc:
                result.warnings.append(f"Warning: {path.name} line {number} {exc}; skipped.")
                continue
            except json.JSONDecodeError:
                result.warnings.append(f"Warning: {path.name} line {number} is not JSON; skipped.")
                continue
            if isinstance(event, dict):
                events.append(event)
        result.documents.append((path.name, text))
    return events


def _tasks(folder: Path, result: MissionInput, reader: _Reader) -> dict[str, dict[str, Any]]:
    tasks: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "tasks").glob("*.json"), key=lambda p: _task_order(p.stem)):
        task = reader.json(path, f"tasks/{path.name}")
        if isinstance(task, dict):
            tasks[str(task.get("id") or path.stem)] = task
            result.documents.append((f"tasks/{path.name}", _pretty(task)))
    for path in sorted(folder.glob("*.md")):
        text = reader.text(path)
        if text is not None:
            result.documents.append((path.name, text))
    return tasks


def _task_order(stem: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", stem)
    return (int(digits) if digits else 0, stem)


def _name(tasks: dict[str, dict[str, Any]], task_id: str) -> str:
    return str(tasks.get(task_id, {}).get("name") or task_id)


def result_of(task: dict[str, Any]) -> dict[str, Any]:
    value = task.get("result")
    if isinstance(value, dict):
        return value
    return {"summary": str(value)} if value else {}


def _failures(events: list[dict[str, Any]], tasks: dict[str, dict[str, Any]]) -> list[Finding]:
    """Per task: its errors, then what fixed them (the last retry note, else its result)."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_task.setdefault(str(event.get("task", "")), []).append(event)
    found = []
    for task_id, items in by_task.items():
        errors = [e for e in items if e.get("error")]
        if not errors or not any(e.get("event") == "task_completed" for e in items):
            continue
        escalations = [e for e in items if e.get("event") == "model_escalated"]
        name = _name(tasks, task_id)
        if escalations:
            last = escalations[-1]
            text = f"{last.get('from')} -> {last.get('to')}: {last.get('reason', '')}".strip()
            found.append(Finding("escalation", text, name, str(errors[-1]["error"])))
            continue
        summary = str(result_of(tasks.get(task_id, {})).get("summary", ""))
        at = [i for i, e in enumerate(items) if e.get("error")]  # positions: linear, and right
        for n, start in enumerate(at):  # when two error events are equal
            stop = at[n + 1] if n + 1 < len(at) else len(items)
            notes = [
                str(e.get("note", ""))
                for e in items[start:stop]
                if e.get("event") == "retry" and e.get("note")
            ]
            found.append(Finding("failure", notes[-1] if notes else summary, name,
                                 str(items[start]["error"])))  # fmt: skip
    return found


def _results(tasks: dict[str, dict[str, Any]]) -> list[Finding]:
    found = []
    for task in tasks.values():
        result = result_of(task)
        name = str(task.get("name") or task.get("id") or "")
        for note in _strings(result.get("notes")):
            found.append(Finding("note", note, name, str(result.get("summary", ""))))
        for item in _strings(result.get("findings")):
            found.append(Finding("finding", item, name))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return []


def _research(events: list[dict[str, Any]], tasks: dict[str, dict[str, Any]]) -> list[Finding]:
    """Researchers with and without starting paths, and the turns each took."""
    runs = []
    logged: dict[str, Any] = {}
    for event in events:  # the first logged turn count of each task
        if isinstance(event.get("task"), str) and event.get("turns"):
            logged.setdefault(event["task"], event["turns"])
    for task_id, task in tasks.items():
        if "research" not in str(task.get("agentType", "")).lower():
            continue
        turns = result_of(task).get("turns") or logged.get(task_id)
        prompt = str(task.get("deliverable", ""))
        if isinstance(turns, int):
            runs.append((turns, prompt, str(task.get("name") or task_id)))
    with_paths = [r for r in runs if "/" in r[1]]
    without = [r for r in runs if "/" not in r[1]]
    if not with_paths or not without:
        return []
    fast, slow = min(with_paths), max(without)
    if slow[0] < 2 * fast[0]:
        return []
    text = (
        f'The researcher given starting paths ({fast[2]}: "{fast[1]}") finished in {fast[0]} '
        f'turns; the one without them ({slow[2]}: "{slow[1]}") took {slow[0]} turns.'
    )
    return [Finding("research", text, fast[2])]


# ---------------------------------------------------------------- Legion phases


def _read_phase_folder(folder: Path, reader: _Reader) -> MissionInput:
    result = MissionInput(f"phase-{folder.name}", "phase", folder.name, warnings=reader.warnings)
    for path in sorted(folder.glob("*-SUMMARY.md")) + sorted(folder.glob("*-REVIEW.md")):
        text = reader.text(path)
        if text is None:
            continue
        result.documents.append((path.name, text))
        sections = markdown_sections(text)
        if path.name.endswith("-REVIEW.md"):
            for key, body in sections.items():
                if "blocker" in key:
                    result.findings += [Finding("blocker", b, path.name) for b in _items(body)]
            continue
        for key, body in sections.items():
            if key.startswith("issues"):
                result.findings += [Finding("issue", b, path.name) for b in _items(body)]
            if key.startswith("handoff"):
                result.findings += _conventions(body, path.name)
    return result


def markdown_sections(text: str) -> dict[str, str]:
    """Lower-cased heading -> the text under it (up to the next heading of any level)."""
    sections: dict[str, str] = {}
    current: str | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        match = _HEADING.match(line)
        if match:
            current = match.group(2).strip().lower()
            sections.setdefault(current, "")
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def _items(body: str) -> list[str]:
    """Bullet items (continuation lines joined), else paragraphs; "None." yields nothing."""
    items: list[str] = []
    for line in body.split("\n"):
        stripped = line.strip()
        if re.match(r"^[-*+]\s+|^\d+[.)]\s+", stripped):
            items.append(re.sub(r"^[-*+]\s+|^\d+[.)]\s+", "", stripped))
        elif stripped and items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped
        elif stripped and not items and not stripped.startswith(("|", "**")):
            items.append(stripped)
    return [item for item in items if not _NONE.match(item)]


def _conventions(body: str, where: str) -> list[Finding]:
    found = []
    for line in body.split("\n"):
        match = re.search(r"\*\*Conventions established\*\*\s*:\s*(.+)$", line, re.IGNORECASE)
        if match and not re.match(r"^\s*none\b", match.group(1), re.IGNORECASE):
            found.append(Finding("convention", match.group(1).strip(), where))
    return found
