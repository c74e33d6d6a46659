"""What a submitted batch leaves in the project: `.planning/memory/.batches/<id>.json`.

One JSON file per batch, written atomically inside the project root and never anywhere else:
the batch id, what it is for (`kind`: "compact", "eval-compaction", ...), the model and the
options it was made with, each case (a phase, an eval run) with the custom ids of its requests
and, for a phase, the sha256 of its originals; every request's slot (case, sha256 of the
request, occurrence) by custom id; once collected, the downloaded results, the journal of
direct answers (so a killed collect replays them rather than paying twice) and each case's
outcome (so collecting again writes nothing twice). Nothing in it is a secret: requests are
not stored, only their hashes, and the answers are what the model returned.

Before the create call an intent is written beside them, `intent-<sha256 of the requests>.json`
(what is being submitted, for which cases, and once the API answered, the batch id): a create
whose record then cannot be saved, or a process killed between the two, leaves the batch named
there, so a second submit refuses instead of paying twice (pipeline/batch/run.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.llm.batch import BATCH_ID, StoredResult
from legion_llm.memory.files import atomic_write, read_text
from legion_llm.memory.untrusted import UntrustedInputError, load_json
from legion_llm.project import MemoryPaths

FORMAT = 1
FOLDER = ".batches"


def batches_dir(root: Path) -> Path:
    return MemoryPaths(root).memory_dir / FOLDER


@dataclass
class CaseEntry:
    key: str
    label: str
    custom_ids: list[str] = field(default_factory=list)
    fingerprint: str | None = None
    problem: str | None = None  # the plan failed here: nothing of this case was submitted
    outcome: dict[str, Any] | None = None


@dataclass
class BatchRecord:
    id: str
    kind: str
    created_at: str
    model: str
    options: dict[str, Any]
    estimated_cost_usd: float
    cases: dict[str, CaseEntry]
    index: dict[str, str]  # slot key -> custom id
    results: dict[str, dict[str, Any]] | None = None  # custom id -> result, once downloaded
    journal: dict[str, dict[str, Any]] = field(default_factory=dict)
    collected_at: str | None = None
    request_sha256: str | None = None  # of every request submitted, as the intent had it
    format: int = FORMAT

    @property
    def requests(self) -> int:
        return len(self.index)

    def stored_results(self) -> dict[str, StoredResult]:
        return {k: StoredResult.from_dict(v) for k, v in (self.results or {}).items()}

    def path(self, root: Path) -> Path:
        return batches_dir(root) / f"{self.id}.json"

    def text(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False, sort_keys=True) + "\n"

    def save(self, root: Path) -> None:
        """Atomic replace; the caller holds the lock on the batches folder."""
        atomic_write(self.path(root), self.text(), root=root)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "created_at": self.created_at,
                "model": self.model, "requests": self.requests, "cases": len(self.cases),
                "collected_at": self.collected_at,
                "estimated_cost_usd": round(self.estimated_cost_usd, 6)}  # fmt: skip


def load_record(root: Path, batch_id: str) -> BatchRecord:
    if not BATCH_ID.fullmatch(batch_id):
        raise InputError(f"{batch_id!r} is not a batch id (like msgbatch_01AbC...)")
    path = batches_dir(root) / f"{batch_id}.json"
    text = read_text(path, root=root)
    if text is None:
        raise InputError(
            f"no batch {batch_id} in {batches_dir(root)} (submitted from another project?)"
        )
    return parse_record(text, path)


def parse_record(text: str, path: Path) -> BatchRecord:
    try:
        data = load_json(text)
        cases = {k: CaseEntry(**v) for k, v in data.pop("cases").items()}
        record = BatchRecord(**data, cases=cases)
    except UntrustedInputError as exc:
        raise InputError(f"{path} {exc}; it is not a batch record this version can read") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(f"{path} is not a batch record this version can read ({exc})") from None
    if record.format != FORMAT:
        raise InputError(
            f"{path} has batch record format {record.format}; this version reads {FORMAT}"
        )
    return record


def list_records(root: Path) -> list[BatchRecord]:
    """Every readable record, oldest first (an unreadable one is skipped)."""
    folder = batches_dir(root)
    if not folder.is_dir():
        return []
    records = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith(INTENT):
            continue
        text = read_text(path, root=root)
        if text is None:
            continue
        try:
            records.append(parse_record(text, path))
        except InputError:
            continue
    return sorted(records, key=lambda r: r.created_at)


def latest_record(root: Path, batch_id: str | None) -> BatchRecord:
    """The batch named, else the newest one not yet collected, else the newest one."""
    if batch_id:
        return load_record(root, batch_id)
    records = list_records(root)
    if not records:
        raise InputError(
            f"no batch has been submitted from this project ({batches_dir(root)} is empty)"
        )
    pending = [r for r in records if r.collected_at is None]
    return (pending or records)[-1]


INTENT = "intent-"


def request_digest(requests: list[dict[str, Any]]) -> str:
    """The sha256 of every request of one batch, as sent."""
    text = json.dumps(requests, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Intent:
    """A batch being created: written before the create call, given the id after it."""

    request_sha256: str
    kind: str
    created_at: str
    model: str
    cases: dict[str, str]  # case key -> label
    requests: int
    estimated_cost_usd: float
    batch_id: str | None = None
    problem: str | None = None  # the create call failed and whether a batch exists is unknown
    format: int = FORMAT

    def path(self, root: Path) -> Path:
        return batches_dir(root) / f"{INTENT}{self.request_sha256[:16]}.json"

    def save(self, root: Path) -> None:
        text = json.dumps(asdict(self), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        atomic_write(self.path(root), text, root=root)

    def remove(self, root: Path) -> None:
        self.path(root).unlink(missing_ok=True)

    def named(self) -> str:
        return f"batch {self.batch_id}" if self.batch_id else "a batch whose id was not recorded"


def list_intents(root: Path) -> list[Intent]:
    """Every readable intent, oldest first."""
    folder = batches_dir(root)
    found = []
    for path in sorted(folder.glob(f"{INTENT}*.json")) if folder.is_dir() else []:
        try:
            text = read_text(path, root=root)
            found.append(Intent(**load_json(text or "")))
        except (OSError, ValueError, TypeError):
            continue
    return sorted(found, key=lambda i: i.created_at)
