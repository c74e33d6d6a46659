"""`eval compaction|errors|distill|learnings`: run a suite, log it, check its gates; or submit it
as one Message Batch (batch.py)."""
