"""Pipelines: deterministic prepare, an engine proposes (Claude or offline), deterministic verify/repair."""
