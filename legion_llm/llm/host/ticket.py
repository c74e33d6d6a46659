"""Tickets: what binds a host proposal to the inputs it was prepared from.

A ticket is `lt2.` + base64url(JSON of the step, the arguments it was prepared with (the phase,
the date, ...), the keys of the questions asked (host/engine.py: a hash of the rendered prompts,
hence of the originals they quote, and of the schema) and the version of legion-llm) + `.` +
base64url(HMAC-SHA256 of that text). The MAC key is 32 random bytes made on first use in the
user's data folder (userdirs.py: `ticket.key`, 0600), outside every repository, so no one who
can read a ticket, the repository or the agent's transcript can make or edit one: a ticket whose
MAC does not match is refused before its JSON is read. Its arguments are checked against fixed
bounds as well (a date is a date, a flag is true or false, a path is at most 4,096 characters),
so even a well-signed ticket cannot carry a 70,000-character timestamp.

Nothing else is stored, so a ticket survives a server restart (not a new key). It grants nothing:
on submit the step is prepared again from the files as they are now, and a ticket whose question
keys no longer match is refused with one line.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import legion_llm
from legion_llm.errors import InputError
from legion_llm.memory.untrusted import load_json
from legion_llm.userdirs import data_dir, private_key

PREFIX = "lt2."
KEY_FILE = "ticket.key"
MAX_TICKET_CHARS = 200_000  # 1,000 question keys and the arguments, base64
MAX_KEYS = 1_000
MAX_PATH_CHARS = 4_096
MAX_PHASES_CHARS = 1_024  # distill --phase: the phase numbers, comma-separated
_KEY = re.compile(r"[0-9a-f]{64}")
_NOW = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class StaleTicketError(InputError):
    """The inputs changed since the ticket was prepared."""


def _date(value: object) -> bool:
    if not isinstance(value, str) or len(value) != 10:
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _now(value: object) -> bool:
    return isinstance(value, str) and _NOW.fullmatch(value) is not None and _date(value[:10])


def _text(limit: int, *, optional: bool = False) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        if value is None:
            return optional
        return (isinstance(value, str) and 0 < len(value) <= limit
                and _CONTROL.search(value) is None)  # fmt: skip

    return check


def _flag(value: object) -> bool:
    return isinstance(value, bool)


# step -> argument -> its bound: every argument a step's ticket carries, and nothing else
ARGUMENTS: dict[str, dict[str, Callable[[object], bool]]] = {
    "compact": {"phase": _text(64), "force": _flag, "today": _date},
    "distill": {
        "today": _date,
        "catalog": _text(MAX_PATH_CHARS, optional=True),
        "phases": _text(MAX_PHASES_CHARS, optional=True),
    },
    "learnings extract": {"mission": _text(MAX_PATH_CHARS), "now": _now, "today": _date},
}


def _secret() -> bytes:
    return private_key(data_dir() / KEY_FILE)


def _mac(body: str) -> str:
    digest = hmac.new(_secret(), (PREFIX + body).encode("ascii"), hashlib.sha256).digest()
    return _b64(digest)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode("ascii"))


@dataclass(frozen=True)
class Ticket:
    step: str
    args: Mapping[str, Any]
    keys: tuple[str, ...]
    version: str = legion_llm.__version__

    def encode(self) -> str:
        """The signed ticket (refused at once when an argument is out of its bounds)."""
        _check_bounds(self)
        data = {"step": self.step, "args": dict(self.args), "keys": list(self.keys),
                "version": self.version}  # fmt: skip
        body = _b64(json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8"))
        return f"{PREFIX}{body}.{_mac(body)}"

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
        if value.startswith("lt1."):
            raise InputError("the ticket was made by an older legion-llm (lt1.); prepare again")
        raise InputError(f"that is not a legion-llm ticket (a ticket starts with {PREFIX!r})")
    if len(value) > MAX_TICKET_CHARS:
        raise InputError(
            f"the ticket is longer than {MAX_TICKET_CHARS:,} characters; prepare again"
        )
    body, _, mac = value[len(PREFIX) :].partition(".")
    if not mac or not hmac.compare_digest(mac.encode("ascii", "replace"), _mac_or_none(body)):
        raise InputError(
            "the ticket is damaged or was edited (its signature does not match); prepare again"
        )
    try:
        data = load_json(_unb64(body).decode("utf-8"))
        ticket = Ticket(str(data["step"]), dict(data["args"]), tuple(map(str, data["keys"])),
                        str(data["version"]))  # fmt: skip
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        raise InputError("the ticket is damaged; prepare again") from None
    _check_bounds(ticket)
    return ticket


def _mac_or_none(body: str) -> bytes:
    """The MAC `body` should carry (nothing matches a body that is not base64 text)."""
    if not body or not re.fullmatch(r"[A-Za-z0-9_-]+", body):
        return b"\x00"
    return _mac(body).encode("ascii")


def _check_bounds(ticket: Ticket) -> None:
    """Every argument of the step, each within its bound; keys that are question keys."""
    bounds = ARGUMENTS.get(ticket.step)
    if bounds is None:
        raise InputError(f"the ticket is for an unknown step {ticket.step!r}; prepare again")
    if set(ticket.args) != set(bounds):
        raise InputError(f"the ticket's arguments are not those of `{ticket.step}`; prepare again")
    for name, within in bounds.items():
        if not within(ticket.args[name]):
            raise InputError(f"the ticket's {name} is out of bounds; prepare again")
    if len(ticket.keys) > MAX_KEYS or not all(_KEY.fullmatch(key) for key in ticket.keys):
        raise InputError("the ticket's question keys are damaged; prepare again")
    if len(ticket.version) > 64:
        raise InputError("the ticket's version is damaged; prepare again")
