"""Secret redaction: the one step every memory write and every engine request goes through.

redactor = project_redactor(root)          # settings.json memory.redact.allow / .enabled
done = redactor.redact(text)               # done.text, done.findings (kind, start, end)
clean, hits = redactor.values(fields)      # per field; write_warning(redactor, hits, "ERRORS.md")
"""

from legion_llm.memory.redact.core import (
    MARKER,
    Finding,
    Hit,
    Redacted,
    Redactor,
    excerpt,
    marker,
    project_redactor,
    redacted,
    redacted_data,
    text_hits,
    write_warning,
)

__all__ = [
    "MARKER",
    "Finding",
    "Hit",
    "Redacted",
    "Redactor",
    "excerpt",
    "marker",
    "project_redactor",
    "redacted",
    "redacted_data",
    "text_hits",
    "write_warning",
]
