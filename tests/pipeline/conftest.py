"""Pipeline tests share the LLM layer's HTTP fixtures: respx through the SDK's httpx2 transport,
an engine with a test key, injected time, collected notices. A test module that needs its own
offline steps overrides the `registry` fixture."""

from tests.llm.conftest import (  # noqa: F401  (fixtures)
    _no_real_sleep,
    api,
    claude,
    collected,
    fake_api,
    fake_time,
    on_fake,
    registry,
)
