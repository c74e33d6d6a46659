"""Redaction tests use the LLM layer's HTTP fixtures too (a request body must hold no secret)."""

from tests.llm.conftest import (  # noqa: F401  (fixtures)
    _no_real_sleep,
    api,
    claude,
    collected,
    fake_time,
    registry,
)
