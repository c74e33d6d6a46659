"""Typed records shared by every layer.

Plain dataclasses, not pydantic: a plain recall parses every row of OUTCOMES.md and must start and
finish in well under a quarter of a second. Pydantic models live at the edges (MCP tool inputs,
LLM structured outputs), where the cost is paid only by the commands that need them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OUTCOME_VALUES = ("success", "partial", "failed")


def split_list(cell: str) -> list[str]:
    """A comma-separated cell -> its trimmed, non-empty items."""
    if not cell:
        return []
    items = [item.strip() for item in cell.split(",")]
    return items if "" not in items else [item for item in items if item]


def lowered(values: list[str]) -> set[str]:
    """Trimmed, lower-cased, non-empty: how tags, agents and task types are compared."""
    return {v.strip().lower() for v in values if v.strip()}


@dataclass(slots=True)
class OutcomeRecord:
    id: str | None
    date: str
    branch: str
    phase: str
    plan: str
    agent: str
    task_type: str
    outcome: str
    importance: int
    tags_text: str  # the Tags cell as written; `tags` splits it (only when asked: recall is hot)
    summary: str
    line_no: int | None = None  # where the row stands in its file; None for key:value sections

    @property
    def tags(self) -> list[str]:
        return split_list(self.tags_text)

    @property
    def agents(self) -> list[str]:
        return split_list(self.agent)

    @property
    def task_types(self) -> list[str]:
        return split_list(self.task_type)

    @property
    def id_number(self) -> int | None:
        return id_number(self.id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "date": self.date,
            "branch": self.branch,
            "phase": self.phase,
            "plan": self.plan,
            "agent": self.agent,
            "task_type": self.task_type,
            "outcome": self.outcome,
            "importance": self.importance,
            "tags": self.tags,
            "summary": self.summary,
        }


@dataclass(slots=True)
class Scored:
    """A record with its recall scores."""

    record: Any
    recency_weight: float
    score: float


def id_number(record_id: str | None) -> int | None:
    """'O-012' -> 12; 'PAT-003' -> 3; anything else -> None."""
    if not record_id:
        return None
    _, sep, digits = record_id.rpartition("-")
    return int(digits) if sep and digits.isdigit() else None


def format_id(prefix: str, number: int) -> str:
    """Zero-padded to at least 3 digits: O-007, O-1000."""
    return f"{prefix}-{number:03d}"
