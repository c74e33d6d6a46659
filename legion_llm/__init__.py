"""legion-llm: a memory AI coding-agent teams can trust.

Nothing heavy is imported here: plain memory commands must start fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
