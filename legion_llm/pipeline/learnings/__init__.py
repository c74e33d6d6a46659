"""Mission learnings extraction: read a finished mission or phase, propose, verify, de-duplicate, write."""
