"""Loopback fakes for tests and benchmarks (see README.md): a Messages API that bills like the real one."""

from tests.fakes.messages_api import FakeMessagesAPI, RecordedRequest, Response, api_error
from tests.fakes.replies import Reply

__all__ = ["FakeMessagesAPI", "RecordedRequest", "Reply", "Response", "api_error"]
