"""Tickets: what binds a host proposal to the inputs it was prepared from.

A ticket is stateless: `lt1.` + base64url(JSON) of the step, the arguments it was prepared with
(the phase, the date, ...), the keys of the questions asked (host/engine.py: a hash of the
rendered prompts, hence of the originals they quote, and of the schema) and the version of
legion-llm. Nothing is stored, so a ticket survives a server restart. It grants nothing: on
submit the step is prepared again from the files as they are now, and a ticket whose digest no
longer matches is refused with one line; an edited ticket simply does not match.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import legion_llm
from legion_llm.errors import InputError

PREFIX = "lt1."


class StaleTicketError(InputError):
    """The inputs changed since the ticket was prepared."""


@dataclass(frozen=True)
class Ticket:
    step: str
    args: Mapping[str, Any]
    keys: tuple[str, ...]
    version: str = legion_llm.__version__

    @property
    def digest(self) -> str:
        text = json.dumps([self.step, dict(self.args), list(self.keys), self.version],
                          sort_keys=True)  # fmt: skip
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def encode(self) -> str:
        data = {"step": self.step, "args": dict(self.args), "keys": list(self.keys),
                "version": self.version, "digest": self.digest}  # fmt: skip
        raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")
        return PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    def check_against(self, keys: Sequence[str], what: str) -> None:
        """Refuse a submit whose questions (hence inputs) are not the prepared ones."""
        if self.version != legion_llm.__version__:
            raise StaleTicketError(
                f"the ticket was prepared by legion-llm {self.version}, this is "
                f"{legion_llm.__version__}; prepare {what} again"
            )
        if tuple(keys) != self.keys:
            raise StaleTicketError(
                f"the ticket no longer matches {what}: its inputs changed since it was prepared; "
                "prepare again and propose from the new request"
            )


def decode_ticket(text: str, step: str) -> Ticket:
    """The ticket in `text`, for `step`; InputError with one line when it is not one."""
    ticket = _decode(text)
    if ticket.step != step:
        raise InputError(f"the ticket is for `{ticket.step}`, not `{step}`")
    return ticket


def _decode(text: str) -> Ticket:
    value = text.strip()
    if not value.startswith(PREFIX):
        raise InputError("that is not a legion-llm ticket (a ticket starts with 'lt1.')")
    try:
        payload = value[len(PREFIX) :]
        padded = payload + "=" * (-len(payload) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        ticket = Ticket(str(data["step"]), dict(data["args"]), tuple(map(str, data["keys"])),
                        str(data["version"]))  # fmt: skip
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        raise InputError("the ticket is damaged; prepare again") from None
    if data.get("digest") != ticket.digest:
        raise InputError("the ticket is damaged (its digest does not match); prepare again")
    return ticket
