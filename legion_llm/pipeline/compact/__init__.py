"""Phase compaction: prepare, propose, verify, repair, write (memory-manager Section 12)."""
