"""`scan [--fix]`: secrets already in the memory files (file, line, kind; never the value).
Exit 1 when something was found and not fixed, so it can gate CI or a pre-commit hook."""

from __future__ import annotations

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult


def scan_result(c: Common, fix: bool) -> CommandResult:
    """`scan` for the CLI and the MCP server."""
    from legion_llm.memory.redact import Redactor
    from legion_llm.memory.redact.scan import scan

    settings = c.settings()  # its allow list holds; `enabled: false` does not stop a scan
    report = scan(c.root, Redactor(settings.redact_allow), fix=fix)
    lines = [f"{f.path}:{f.line}: {f.kind}" for f in report.found]
    if not report.found:
        lines.append(f"No secrets found in {len(report.files)} memory file(s).")
    elif report.clean:
        lines.append(f"Redacted {len(report.found)} secret(s) in {len(report.fixed)} file(s).")
    else:
        lines.append(
            f"{len(report.found)} secret(s) in {len(report.files)} memory file(s); "
            "run `legion-llm scan --fix` to redact them"
        )
    warnings = [*settings.warnings, *report.warnings]
    code = 0 if report.clean else 1
    return CommandResult("scan", report.to_dict(), "\n".join(lines), warnings, code)
