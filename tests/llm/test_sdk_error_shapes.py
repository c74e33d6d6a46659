"""Both shapes in which the Anthropic SDK reports a network failure mean the same thing to us.

Up to anthropic 2.16 a read that failed mid-stream raised the transport's own error; from 2.17 it
is wrapped in APIConnectionError / APITimeoutError. The locked SDK shows one shape through the
loopback fake (tests/llm/test_streaming.py); these tests build the other by hand, so the one place
that maps SDK errors is held for both whichever release is installed.
"""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from legion_llm.llm.claude_api.http import (
    NotAnEventStream,
    StreamStalled,
    _broken_off,
    describe_failure,
    is_retryable,
    transport_failure,
)

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")


def wrapped(error: httpx2.TransportError, *, timeout: bool = False) -> anthropic.APIError:
    """What anthropic 2.17 raises for `error` in the middle of a stream."""
    outer: anthropic.APIError = (
        anthropic.APITimeoutError(request=REQUEST)
        if timeout
        else anthropic.APIConnectionError(request=REQUEST)
    )
    outer.__cause__ = error
    return outer


HANG_UP = httpx2.RemoteProtocolError("incomplete chunked read", request=REQUEST)
SILENCE = httpx2.ReadTimeout("read timed out", request=REQUEST)


@pytest.mark.parametrize("shape", ["raw", "wrapped"])
def test_a_hang_up_mid_answer_is_a_retryable_break_with_how_much_came(shape: str) -> None:
    exc = HANG_UP if shape == "raw" else wrapped(HANG_UP)
    assert transport_failure(exc) is HANG_UP
    broken = _broken_off(exc, received=1234, stall_s=30)
    assert isinstance(broken, NotAnEventStream) and broken.retryable
    assert str(broken) == "the connection dropped after 1234 characters of the answer"
    assert is_retryable(exc) and is_retryable(broken)
    text, status = describe_failure(broken, "http://127.0.0.1:9")
    assert (
        text.startswith("Claude API's answer broke off (the connection dropped") and status is None
    )


@pytest.mark.parametrize("shape", ["raw", "wrapped"])
def test_silence_mid_answer_is_a_stall_not_a_failed_connection(shape: str) -> None:
    exc = SILENCE if shape == "raw" else wrapped(SILENCE, timeout=True)
    broken = _broken_off(exc, received=1, stall_s=0.5)
    assert isinstance(broken, StreamStalled)
    assert str(broken) == "no token for 0.5 s, after 1 character of the answer"
    assert describe_failure(broken, "x")[0].startswith("Claude API timed out (no token for 0.5 s")


def test_a_connection_error_without_a_transport_cause_is_still_a_network_failure() -> None:
    bare = anthropic.APIConnectionError(request=REQUEST)
    assert transport_failure(bare) is bare and is_retryable(bare)
    assert "could not connect" in describe_failure(bare, "http://h")[0]


def test_what_is_not_the_network_is_not_taken_for_it() -> None:
    for exc in (ValueError("bad json"), KeyError("x"), RuntimeError("boom")):
        assert transport_failure(exc) is None and _broken_off(exc, 10, 1) is None
