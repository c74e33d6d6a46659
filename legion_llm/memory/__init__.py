"""Deterministic memory core: parse, filter, score and write the markdown memory files.

Never imports legion_llm.llm, anthropic, tiktoken or tenacity.
"""
