"""Phases on disk: find a phase and what ROADMAP.md and STATE.md say, and extract what compaction must keep."""
