"""The `recorded` engine: answers recorded once from a real engine, replayed without a key.

    recorder = RecordedEngine.recording(path, source=real_engine)   # asks `source`, keeps answers
    ...; recorder.save()
    replay = RecordedEngine(path)                                    # tests and CI: no network

One entry per distinct request: the hash of what was sent (the schema's name and the rendered
prompt's system, context and user text, after redaction: `request_hash`), the prompt's name and
sha256, the model, the answer (the validated output as JSON) and the usage the source reported.
Replaying a request whose hash is not in the recording raises RecordingMismatchError: a changed
prompt, candidate list or error text fails loudly; there is no fallback to another engine (the
error is not an LLMError, so FallbackEngine never catches it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from legion_llm.errors import LegionError
from legion_llm.llm.budget import Usage
from legion_llm.llm.engine import Answer, Engine, EngineBase, Request

T = TypeVar("T", bound=BaseModel)
FORMAT = 1


class RecordingMismatchError(LegionError):
    """A replayed request that was never recorded (or a recording that cannot be read)."""


def request_hash(request: Request[Any]) -> str:
    """sha256 of what a request sends: the schema's name and the rendered prompt's parts."""
    prompt = request.prompt
    sent = "\x00".join((request.schema.__name__, prompt.system, prompt.context, prompt.user))
    return hashlib.sha256(sent.encode("utf-8")).hexdigest()


def _usage(data: dict[str, Any]) -> Usage:
    known = set(vars(Usage()))
    return Usage(**{k: v for k, v in data.items() if k in known})


class RecordedEngine(EngineBase):
    name = "recorded"

    def __init__(self, path: Path, *, source: Engine | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.source = source
        self.entries: dict[str, dict[str, Any]] = {} if source else _load(path)
        self._model = source.model if source else _model_of(self.entries)

    @classmethod
    def recording(cls, path: Path, *, source: Engine, **kwargs: Any) -> RecordedEngine:
        """An engine that asks `source` and keeps every answer for `save()`."""
        return cls(path, source=source, **kwargs)

    @property
    def model(self) -> str | None:
        return self._model

    def answer(self, request: Request[T]) -> Answer[T]:
        key = request_hash(request)
        if self.source is not None:
            return self._record(key, request)
        entry = self.entries.get(key)
        if entry is None:
            raise RecordingMismatchError(
                f"recorded engine: no answer recorded for prompt {request.prompt.name!r} with "
                f"request hash {key[:12]} in {self.path.name}; the request changed since the "
                "recording: record it again from a real engine"
            )
        usage = _usage(entry["usage"])
        self.meter.record(usage.copy(), self.name)
        output = request.schema.model_validate(entry["answer"])
        prompt = request.prompt
        return Answer(output, usage, prompt.name, prompt.sha256, self.name, entry["model"])

    def _record(self, key: str, request: Request[T]) -> Answer[T]:
        assert self.source is not None
        answer = self.source.answer(request)
        self.entries[key] = {
            "request_hash": key,
            "prompt": request.prompt.name,
            "prompt_sha256": request.prompt.sha256,
            "model": answer.model,
            "answer": answer.output.model_dump(mode="json"),
            "usage": dict(vars(answer.usage)),
        }
        return answer

    def save(self) -> Path:
        """Write the recording (sorted by hash: the same answers give the same file)."""
        rows = [json.dumps(self.entries[k], sort_keys=True) for k in sorted(self.entries)]
        header = json.dumps({"format": FORMAT, "entries": len(rows)})
        self.path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
        return self.path


def _load(path: Path) -> dict[str, dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RecordingMismatchError(
            f"recorded engine: cannot read {path}: {exc.strerror}"
        ) from exc
    try:
        header = json.loads(lines[0]) if lines else {}
        rows = [json.loads(line) for line in lines[1:] if line.strip()]
    except json.JSONDecodeError as exc:
        raise RecordingMismatchError(f"recorded engine: {path.name} is not a recording") from exc
    if header.get("format") != FORMAT:
        raise RecordingMismatchError(f"recorded engine: {path.name} is not a recording")
    return {row["request_hash"]: row for row in rows}


def _model_of(entries: dict[str, dict[str, Any]]) -> str | None:
    models = sorted({str(e["model"]) for e in entries.values() if e.get("model")})
    return models[0] if len(models) == 1 else None
