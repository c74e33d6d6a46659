"""CATALOG.md of the agent registry: agent -> division and task types (Section 1 tables only)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from legion_llm.errors import InputError
from legion_llm.memory.files import read_problem, read_text
from legion_llm.memory.table import parse_markdown
from legion_llm.records import split_list

DEFAULT_CATALOG = Path("skills/agent-registry/CATALOG.md")
_DIVISION_RE = re.compile(r"^###\s+(.+?)\s+Division\b", re.IGNORECASE)


@dataclass(frozen=True)
class CatalogAgent:
    id: str
    division: str
    task_types: tuple[str, ...]


def catalog_path(root: Path, option: Path | None) -> Path:
    """--catalog, else $LEGION_CATALOG, else skills/agent-registry/CATALOG.md under the root."""
    if option is not None:
        return option
    env = os.environ.get("LEGION_CATALOG")
    return Path(env) if env else root / DEFAULT_CATALOG


def named_catalog(root: Path, option: Path | None) -> Path:
    """The catalog an outcome's task type comes from (see `catalog_path`), checked when the user
    named it (--catalog or $LEGION_CATALOG): a file that is missing, a folder, not text, or holds
    no agent table is refused (InputError), since the record would silently get task type
    `general` and the importance of a first task of that type. The default path may be absent."""
    path = catalog_path(root, option)
    if option is None and not os.environ.get("LEGION_CATALOG"):
        return path
    name = "--catalog" if option is not None else "$LEGION_CATALOG"
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{name} {path} {read_problem(exc)}; nothing was written") from None
    if text is None:
        raise InputError(f"{name} {path} does not exist; nothing was written")
    if "\x00" in text:
        raise InputError(f"{name} {path} is not a text file; nothing was written")
    if not _agents_of(text):
        raise InputError(
            f"{name} {path} holds no agent table (a `### ... Division` heading over a table with "
            "ID and Task Types columns); nothing was written"
        )
    return path


def load_catalog(path: Path) -> dict[str, CatalogAgent]:
    """Agents of the `### X Division` tables; a missing or unreadable catalog is empty."""
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError):
        return {}
    return _agents_of(text) if text else {}


def _agents_of(text: str) -> dict[str, CatalogAgent]:
    doc = parse_markdown(text)
    division_at = _divisions_by_line(doc.lines)
    agents: dict[str, CatalogAgent] = {}
    for table in doc.tables:
        division = division_at.get(table.header_line)
        if division is None or "id" not in table.columns or "task_types" not in table.columns:
            continue
        for _, cells in doc.rows(table):
            agent_id = cells.get("id", "").strip("` ")
            if agent_id:
                types = tuple(split_list(cells.get("task_types", "")))
                agents[agent_id] = CatalogAgent(agent_id, division, types)
    return agents


def _divisions_by_line(lines: list[str]) -> dict[int, str]:
    """Line number -> the division heading it stands under (None after any other ## heading)."""
    division: str | None = None
    result: dict[int, str] = {}
    for i, line in enumerate(lines):
        match = _DIVISION_RE.match(line)
        if match:
            division = match.group(1).strip()
        elif line.startswith(("# ", "## ", "### ")):
            division = None
        if division is not None:
            result[i] = division
    return result


def first_task_type(catalog: dict[str, CatalogAgent], agent: str) -> str | None:
    entry = catalog.get(agent)
    return entry.task_types[0] if entry and entry.task_types else None
