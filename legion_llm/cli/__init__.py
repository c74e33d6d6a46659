"""The command line: parse options, call a use case (app/), render human text or --json.

Below, every command: its name, the module and attribute of its typer declaration, and whether
it is a sub-app (imported only for the command that runs)."""

from __future__ import annotations

# name -> (module, attribute, is a sub-app). Modules are imported only for the command that runs:
# a plain recall builds and imports one sub-app, not every command (cold start matters).
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "init": ("legion_llm.cli.maintenance", "init_cmd", False),
    "outcomes": ("legion_llm.cli.outcomes", "app", True),
    "briefing": ("legion_llm.cli.maintenance", "briefing", False),
    "prune": ("legion_llm.cli.maintenance", "prune_cmd", False),
    "patterns": ("legion_llm.cli.knowledge", "patterns_app", True),
    "errors": ("legion_llm.cli.errors", "errors_app", True),
    "preferences": ("legion_llm.cli.knowledge", "preferences_app", True),
    "recall": ("legion_llm.cli.knowledge", "recall_topic_cmd", False),
    "signals": ("legion_llm.cli.knowledge", "signals_cmd", False),
    "compact": ("legion_llm.cli.compact", "compact_cmd", False),
    "verify-compaction": ("legion_llm.cli.compact", "verify_compaction_cmd", False),
    "phase-context": ("legion_llm.cli.compact", "phase_context_cmd", False),
    "distill": ("legion_llm.cli.distill", "distill", False),
    "scan": ("legion_llm.cli.scan", "scan_cmd", False),
    "trust": ("legion_llm.cli.trust", "trust_cmd", False),
    "learnings": ("legion_llm.cli.learnings", "app", True),
    "eval": ("legion_llm.cli.evals.app", "app", True),
    "batch": ("legion_llm.cli.batch", "app", True),
    "llm": ("legion_llm.cli.llm", "app", True),
    "hook": ("legion_llm.cli.hook_app", "app", True),
    "demo": ("legion_llm.cli.typer_app", "demo", False),
}
