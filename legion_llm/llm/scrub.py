"""Keys never leave the process: one scrub for every message, log and result on its way out.

An API or proxy error body may echo the key or the Authorization header, and that text travels on
inside error messages, notices and fallback reasons. Rather than cleaning each message where it
is made, the boundaries call `scrub` (text) or `scrub_data` (a JSON-like value) just before text
leaves: the CLI's envelope and stderr lines, the notice sink, the eval log writer and the MCP
results and tool errors. Replaced with `MASK`:

- every value of the configured key or token (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, and any
  credential `find_credential` read from another mapping, kept by `remember`);
- any `Bearer <token>` and any `x-api-key: <value>` (also `x-api-key=`, quoted, any case);
- anything shaped like an Anthropic key (`sk-ant-...`), whoever's it is.

No library does this for arbitrary text we did not send (the SDK hides the key only in its own
reprs), so it is written here; it imports nothing heavy.
"""

from __future__ import annotations

import os
import re
from typing import Any

MASK = "[redacted]"
KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
MIN_SECRET = 8  # a shorter "key" would mask ordinary words; the API rejects such a key anyway
_TOKEN = r"[A-Za-z0-9\-._~+/]{8,}=*"
_PATTERNS = (
    re.compile(rf"(?i)(\bbearer\s+){_TOKEN}"),
    re.compile(r"""(?i)(\bx-api-key["']?\s*[:=]\s*["']?)[^\s"',;}]+"""),
    re.compile(r"()\bsk-ant-[A-Za-z0-9\-_]{8,}"),
)
_remembered: set[str] = set()


def remember(secret: str) -> None:
    """Also scrub this value (a key read from a mapping other than os.environ)."""
    if len(secret.strip()) >= MIN_SECRET:
        _remembered.add(secret.strip())


def _secrets() -> list[str]:
    found = {os.environ.get(name, "").strip() for name in KEY_VARIABLES} | _remembered
    return sorted((s for s in found if len(s) >= MIN_SECRET), key=len, reverse=True)


def scrub(text: str) -> str:
    """`text` with every key value, bearer token and x-api-key value replaced by MASK."""
    for secret in _secrets():
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(rf"\g<1>{MASK}", text)
    return text


def scrub_data(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, tuples, strings) with every string scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_data(v) for v in value]
    return value
