"""What the .planning folder says about the project's position (STATE.md)."""

from __future__ import annotations

import re
from pathlib import Path

from legion_llm.memory.files import read_text

_PHASE_LINE_RE = re.compile(
    r"^\s*(?:[-*>]\s*)?\**Phase\**\s*:?\s*\**\s*:?\s*(\d+(?:\.\d+)*)\b",
    re.IGNORECASE | re.MULTILINE,
)


def phase_key(phase: str) -> str:
    """'01' -> '1', '06.1' -> '6.1', '12.03.1' -> '12.3.1', 'Phase 3' -> '3'; other text
    lowercased as it is."""
    text = phase.strip().lower().removeprefix("phase").strip()
    parts = text.split(".")
    if all(part.isdigit() for part in parts):
        return ".".join(str(int(part)) for part in parts)
    return text


def current_phase(state_file: Path) -> str | None:
    """The current phase from STATE.md: `**Phase**: 4 of 13 (...)` or GSD `Phase: 16 (slug) — ...`."""
    try:
        text = read_text(state_file)
    except (OSError, UnicodeDecodeError):
        return None
    if not text:
        return None
    position = text.find("Current Position")
    match = _PHASE_LINE_RE.search(text, position if position >= 0 else 0) or _PHASE_LINE_RE.search(
        text
    )
    return phase_key(match.group(1)) if match else None
