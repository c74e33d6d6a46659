"""PATTERNS.md, ERRORS.md and PREFERENCES.md: read both formats, store, recall, and the signals for /legion:plan."""
