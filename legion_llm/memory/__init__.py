"""Deterministic memory core: parse, filter, score and write the markdown memory files.

Shared here: table.py (the markdown table codec), files.py (atomic, locked writes and the root
guard), catalog.py, gitinfo.py, gcpause.py. One sub-package per concern: outcomes/, knowledge/,
signatures/, learnings/, phases/.

Never imports legion_llm.llm, anthropic, tiktoken or tenacity.
"""
