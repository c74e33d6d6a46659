"""The ledger of one Message Batches run: which requests a pipeline asked for, and their answers.

A batch run replays the unchanged pipeline twice (pipeline/batch/):

    plan     the pipeline runs with the batch engine in "plan" mode: every request it would send
             is built by the same request builder as a direct call, recorded here under a slot
             (case, sha256 of the request, how many times that request came before in the case)
             with a custom id that names it, and answered for now by the offline step, so the
             pipeline goes on to its next request; nothing is written and nothing is sent.
    replay   after the batch has ended, the same pipeline runs again in "replay" mode: a request
             whose slot has a succeeded result is answered from it (billed at the batch price);
             one that errored, expired, was canceled or is missing is sent directly (and noted);
             a request the plan never saw (a re-ask, or one built from an earlier answer) is sent
             directly too. Every direct answer is journaled, so a collect that was killed replays
             it instead of paying for it twice.

Nothing here imports anthropic; the engine that uses the ledger is claude_api/batches.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from legion_llm.memory.redact import excerpt

Mode = Literal["plan", "replay"]
RESULT_KINDS = ("succeeded", "errored", "expired", "canceled")
_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")
BATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # what the API's batch ids look like
MAX_ID = 64


class Deferred(Exception):
    """Raised by the batch engine in plan mode: this request goes into the batch."""


def request_sha256(params: Mapping[str, Any]) -> str:
    """The identity of a request: sha256 of its canonical JSON (every key, sorted)."""
    text = json.dumps(params, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def safe_id(text: str, limit: int = MAX_ID) -> str:
    """`text` in the API's custom_id alphabet ([a-zA-Z0-9_-], 1-64 characters)."""
    cleaned = _ID_CHARS.sub("_", text).strip("_") or "request"
    return cleaned[:limit]


@dataclass(frozen=True)
class Slot:
    case: str
    sha256: str
    occurrence: int

    @property
    def key(self) -> str:
        return f"{self.case}|{self.sha256}|{self.occurrence}"


@dataclass
class PlannedRequest:
    custom_id: str
    slot: Slot
    params: dict[str, Any]
    input_tokens: int
    max_tokens: int
    expected_output: int


@dataclass(frozen=True)
class StoredResult:
    """One result line: its kind, the message when it succeeded, else why not."""

    kind: str
    message: dict[str, Any] | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "message": self.message, "error": self.error}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoredResult:
        message = data.get("message")
        return cls(str(data.get("type")), dict(message) if isinstance(message, Mapping) else None,
                   data.get("error"))  # fmt: skip


@dataclass
class CaseStats:
    """What happened to one case's requests in a replay."""

    from_batch: int = 0
    direct: int = 0
    unused: int = 0  # succeeded in the batch but never asked for again: billed all the same
    batch_cost_usd: float = 0.0
    direct_cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"from_batch": self.from_batch, "direct": self.direct, "unused": self.unused,
                "batch_cost_usd": round(self.batch_cost_usd, 6),
                "direct_cost_usd": round(self.direct_cost_usd, 6), "notes": list(self.notes)}  # fmt: skip


@dataclass
class BatchLedger:
    mode: Mode
    results: dict[str, StoredResult] = field(default_factory=dict)  # custom_id -> result
    index: dict[str, str] = field(default_factory=dict)  # slot key -> custom_id
    journal: dict[str, dict[str, Any]] = field(default_factory=dict)  # slot key -> direct message
    planned: list[PlannedRequest] = field(default_factory=list)
    stats: dict[str, CaseStats] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)  # custom ids answered from the batch
    case: str = "run"
    _prefix: str = "request"
    _seen: dict[tuple[str, str], int] = field(default_factory=dict)
    _ids: set[str] = field(default_factory=set)
    _numbered: dict[str, int] = field(default_factory=dict)

    def begin(self, case: str, id_prefix: str | None = None) -> None:
        """Requests from now on belong to `case`; their custom ids start with `id_prefix`."""
        self.case = case
        self._prefix = safe_id(id_prefix or case, MAX_ID - 12)
        self.stats.setdefault(case, CaseStats())
        self._seen = {k: v for k, v in self._seen.items() if k[0] != case}

    def slot(self, params: Mapping[str, Any]) -> Slot:
        """The slot of the next request with these params in the current case."""
        sha = request_sha256(params)
        occurrence = self._seen.get((self.case, sha), 0)
        self._seen[(self.case, sha)] = occurrence + 1
        return Slot(self.case, sha, occurrence)

    # plan -----------------------------------------------------------------------------------
    def plan(self, slot: Slot, params: dict[str, Any], *, input_tokens: int, max_tokens: int,
             expected_output: int) -> PlannedRequest:  # fmt: skip
        number = self._numbered.get(self.case, 0) + 1
        self._numbered[self.case] = number
        custom_id = self._unique(f"{self._prefix}-{number}")
        planned = PlannedRequest(custom_id, slot, params, input_tokens, max_tokens,
                                 expected_output)  # fmt: skip
        self.planned.append(planned)
        self.index[slot.key] = custom_id
        return planned

    def _unique(self, wanted: str) -> str:
        candidate, extra = wanted, 1
        while candidate in self._ids:
            extra += 1
            candidate = f"{wanted[: MAX_ID - 6]}-{extra}"
        self._ids.add(candidate)
        return candidate

    def requests(self) -> list[dict[str, Any]]:
        """The body of `messages.batches.create`: one entry per planned request."""
        return [{"custom_id": p.custom_id, "params": p.params} for p in self.planned]

    def drop(self, case: str) -> None:
        """Forget what `case` planned (its pipeline failed part-way: nothing of it is sent)."""
        gone = {p.custom_id for p in self.planned if p.slot.case == case}
        self.planned = [p for p in self.planned if p.slot.case != case]
        self.index = {k: v for k, v in self.index.items() if v not in gone}

    def planned_for(self, case: str) -> list[PlannedRequest]:
        return [p for p in self.planned if p.slot.case == case]

    # replay ---------------------------------------------------------------------------------
    def batch_result(self, slot: Slot) -> tuple[str, StoredResult] | None:
        custom_id = self.index.get(slot.key)
        if custom_id is None:
            return None
        return custom_id, self.results.get(custom_id, StoredResult("missing"))

    def note(self, text: str) -> None:
        notes = self.stats.setdefault(self.case, CaseStats()).notes
        if text not in notes:
            notes.append(text)

    def current(self) -> CaseStats:
        return self.stats.setdefault(self.case, CaseStats())


def results_from_lines(lines: Iterable[Mapping[str, Any]]) -> dict[str, StoredResult]:
    """Result lines ({custom_id, result: {type, message | error}}) by custom id, in any order."""
    out: dict[str, StoredResult] = {}
    for line in lines:
        custom_id = line.get("custom_id")
        result = line.get("result")
        if not isinstance(custom_id, str) or not isinstance(result, Mapping):
            continue
        kind = str(result.get("type"))
        message = result.get("message")
        out[custom_id] = StoredResult(
            kind if kind in RESULT_KINDS else "unknown",
            dict(message) if kind == "succeeded" and isinstance(message, Mapping) else None,
            describe_error(result.get("error")) if kind == "errored" else None,
        )
    return out


def describe_error(error: Any) -> str:
    """`{"type": "error", "error": {"type": "overloaded_error", "message": "..."}}` -> one line."""
    inner = error.get("error") if isinstance(error, Mapping) else None
    inner = inner if isinstance(inner, Mapping) else error if isinstance(error, Mapping) else {}
    kind = str(inner.get("type") or "error")
    message = excerpt(str(inner.get("message") or ""), 200)
    return f"{kind}: {message}" if message else kind
