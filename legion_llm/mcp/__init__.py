"""`legion-llm mcp`: the memory tools over the Model Context Protocol (stdio).

Importing this package imports nothing heavy: the mcp SDK is imported by `legion_llm.mcp.server`,
which only `legion-llm mcp` loads, so plain commands stay fast.
"""
