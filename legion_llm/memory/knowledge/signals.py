"""What /legion:plan needs in one call, and the topic search across every memory file.

Each part degrades to empty on its own when its file is missing or broken (one warning per
broken file). Nothing outside the project root is read except Claude Code's own memory file for
this project (spec §14: advisory, read only, never written).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

from legion_llm.memory.files import read_text
from legion_llm.memory.knowledge.learn_entries import parse_learn_entries
from legion_llm.memory.knowledge.read import KINDS, PATTERNS, PREFERENCES, read_knowledge
from legion_llm.memory.knowledge.recall import (
    KnowledgeQuery,
    TopicHit,
    recall_knowledge,
    recall_topic,
)
from legion_llm.memory.outcomes.read import read_outcomes
from legion_llm.memory.outcomes.recall import agent_scores, archetype_scores
from legion_llm.project import MemoryPaths

SIGNAL_WEIGHTS = {"positive": 1.0, "corrective": 0.5, "negative": -1.0}
CLAUDE_NOTE_CHARS = 2000  # about 500 tokens, the spec's budget for this advisory context


def claude_code_memory_path(root: Path, home: Path | None = None) -> Path:
    """~/.claude/projects/<project path with every non-alphanumeric character as '-'>/memory/MEMORY.md
    ($CLAUDE_CONFIG_DIR replaces ~/.claude, as in Claude Code)."""
    base = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else None
    base = base or (home or Path.home()) / ".claude"
    folder = re.sub(r"[^A-Za-z0-9]", "-", str(root.resolve()))
    return base / "projects" / folder / "memory" / "MEMORY.md"


def claude_code_note(root: Path, home: Path | None = None) -> dict[str, Any]:
    path = claude_code_memory_path(root, home)
    try:  # the one file read outside the project root (Claude Code's own note, read-only)
        text = read_text(path, contained=False)
    except (OSError, UnicodeDecodeError):
        text = None
    if not text or not text.strip():
        return {"path": None, "note": ""}
    note = text.strip()
    if len(note) > CLAUDE_NOTE_CHARS:
        note = note[:CLAUDE_NOTE_CHARS].rsplit("\n", 1)[0].rstrip() + "\n…"
    return {"path": str(path), "note": note}


def preference_boosts(records: list[Any], agents: list[str]) -> dict[str, dict[str, Any]]:
    """Per agent: signal counts and preference_boost = (positive + 0.5·corrective − negative) × 0.5."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(SIGNAL_WEIGHTS, 0))
    wanted = {a.lower() for a in agents}
    for record in records:
        agent = record.values.get("agent", "").strip()
        signal = record.values.get("signal", "").strip().lower()
        if agent and signal in SIGNAL_WEIGHTS and (not wanted or agent.lower() in wanted):
            counts[agent][signal] += 1
    return {
        agent: {
            **c,
            "preference_boost": round(sum(SIGNAL_WEIGHTS[s] * n for s, n in c.items()) * 0.5, 4),
        }
        for agent, c in sorted(counts.items())
    }


def planning_signals(
    paths: MemoryPaths,
    task_types: list[str],
    agents: list[str],
    today: date,
    home: Path | None = None,
) -> tuple[dict[str, Any], list[str]]:
    outcomes = read_outcomes(paths.outcomes)
    patterns = read_knowledge(PATTERNS, paths.patterns)
    preferences = read_knowledge(PREFERENCES, paths.preferences)
    records = outcomes.records
    if agents:
        wanted = {a.lower() for a in agents}
        scores = [
            s for s in agent_scores(records, task_types, today) if s["agent"].lower() in wanted
        ]
    else:
        scores = agent_scores(records, task_types, today)
    data = {
        "task_types": task_types,
        "agent_scores": scores,
        "archetype_scores": archetype_scores(records, task_types, today),
        "preference_boosts": preference_boosts(preferences.records, agents),
        "patterns": recall_knowledge(patterns.records, KnowledgeQuery(tags=task_types), today),
        "claude_code": claude_code_note(paths.root, home),
    }
    warnings = outcomes.warnings + patterns.warnings + preferences.warnings
    return data, warnings


def topic_hits(paths: MemoryPaths) -> tuple[list[TopicHit], list[str]]:
    """Everything `recall TOPIC` searches: the three knowledge bases, OUTCOMES.md and RETRO.md."""
    hits: list[TopicHit] = []
    warnings: list[str] = []
    for kind in KINDS.values():
        loaded = read_knowledge(kind, paths.memory_dir / kind.file_name)
        warnings += loaded.warnings
        for r in loaded.records:
            body = "\n".join(
                v
                for c, v in r.values.items()
                if c not in ("id", "date", "branch", "tags", kind.title_column)
            )
            hits.append(TopicHit(kind.file_name, r.id, r.title, r.tags, body, r.date))
    outcomes = read_outcomes(paths.outcomes)
    warnings += outcomes.warnings
    for o in outcomes.records:
        body = " ".join((o.agent, o.task_type, o.outcome, o.plan))
        hits.append(TopicHit("OUTCOMES.md", o.id or "", o.summary, o.tags, body, o.date))
    hits += _retro_hits(paths.retro)
    return hits, warnings


def _retro_hits(path: Path) -> list[TopicHit]:
    """RETRO.md: learn-style entries, else one hit per `## ` section (tags from a Tags line)."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError):
        return []
    if not text:
        return []
    entries = parse_learn_entries(text)
    if entries:
        return [TopicHit("RETRO.md", e.id, e.title, e.tags, e.body, e.date) for e in entries]
    hits = []
    for number, section in enumerate(re.split(r"(?m)^## ", text)[1:], start=1):
        title, _, body = section.partition("\n")
        tags = re.search(r"(?im)^\W*tags\W*:\s*(.+)$", body)
        tag_list = [t.strip() for t in tags.group(1).split(",")] if tags else []
        when = re.search(r"\d{4}-\d{2}-\d{2}", title + body)
        hits.append(
            TopicHit(
                "RETRO.md",
                f"RETRO-{number}",
                title.strip(),
                tag_list,
                body,
                when.group(0) if when else "",
            )
        )
    return hits


def search_topic(
    paths: MemoryPaths, topic: str, limit: int
) -> tuple[list[dict[str, Any]], list[str]]:
    hits, warnings = topic_hits(paths)
    return recall_topic(hits, topic, limit), warnings
