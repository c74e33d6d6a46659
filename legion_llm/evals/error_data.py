"""The error-signature eval's data: labelled messages, their groups, and the eval definition.

`load_dataset(folder, split)` reads `groups.jsonl` plus one `<ecosystem>.jsonl` of messages each
(fixtures/errors/README.md, fixtures/errors-corpus/README.md); `load_definition` reads
`evals/errors.toml`: the splits (a folder and the `split` value its groups carry) and their gates.
A split without a `split` value is its whole folder, as `fresh` is (fixtures/errors-corpus/fresh/,
the held-out test split of issue 22); a folder's sub-folders are never read, so the corpus folder's
`dev`/`test` splits do not see it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from legion_llm.errors import InputError
from legion_llm.resources import eval_definition

DEFINITION = eval_definition("errors")  # the wheel's copy, else the repository's


@dataclass(frozen=True)
class ErrorMessage:
    id: str
    group: str
    ecosystem: str
    text: str


@dataclass(frozen=True)
class ErrorGroup:
    group: str
    ecosystem: str
    root_cause: str
    fix: str
    confusable_with: tuple[str, ...] = ()
    family: str = ""
    split: str = ""


@dataclass(frozen=True)
class ErrorsDataset:
    messages: tuple[ErrorMessage, ...]
    groups: dict[str, ErrorGroup]


@dataclass(frozen=True)
class SplitSpec:
    """One split of the definition: a folder, and the `split` value its groups must carry."""

    name: str
    path: Path
    split: str | None = None
    # pairs of groups (`a = b`) whose messages are the very same text with different causes, as
    # the corpus README names them: a collision no matcher can avoid, reported but not gated
    identical_text: tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorsEvalDefinition:
    splits: dict[str, SplitSpec]
    gates: dict[str, dict[str, float]]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return rows


def _group(row: dict[str, Any]) -> ErrorGroup:
    return ErrorGroup(
        row["group"],
        row["ecosystem"],
        row["root_cause"],
        row["fix"],
        tuple(row.get("confusable_with", ())),
        row.get("family", ""),
        row.get("split", ""),
    )


def load_dataset(fixtures_dir: Path, split: str | None = None) -> ErrorsDataset:
    """groups.jsonl plus every other *.jsonl in the folder, ordered by id; with `split`, only
    the groups of that split (and look-alikes only within it)."""
    groups_file = fixtures_dir / "groups.jsonl"
    if not groups_file.is_file():
        raise InputError(f"{fixtures_dir} has no groups.jsonl")
    groups = {g.group: g for g in map(_group, _jsonl(groups_file))}
    if split is not None:
        groups = {k: g for k, g in groups.items() if g.split == split}
        if not groups:
            raise InputError(f"{groups_file} has no group with split {split!r}")
    messages = []
    for path in sorted(fixtures_dir.glob("*.jsonl")):
        if path.name == "groups.jsonl":
            continue
        for row in _jsonl(path):
            if split is not None and row["group"] not in groups:
                continue
            ecosystem = groups[row["group"]].ecosystem if row["group"] in groups else path.stem
            messages.append(ErrorMessage(row["id"], row["group"], ecosystem, row["text"]))
    return ErrorsDataset(tuple(sorted(messages, key=lambda m: m.id)), groups)


def load_definition(path: Path = DEFINITION) -> ErrorsEvalDefinition:
    """Splits (folder relative to the file, optional `split` value) and per-split gates."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    splits = {
        name: SplitSpec(
            name,
            (path.parent / spec["path"]).resolve(),
            spec.get("split"),
            tuple(" = ".join(sorted(pair.split(" = "))) for pair in spec.get("identical_text", ())),
        )
        for name, spec in data.get("splits", {}).items()
    }
    gates = {
        name: {k: float(v) for k, v in limits.items()}
        for name, limits in data.get("gates", {}).items()
    }
    return ErrorsEvalDefinition(splits, gates)
