"""OUTCOMES.md and ARCHIVE.md: read every layout, store, recall, score, prune, distillation candidates."""
