"""Build fixtures/errors-corpus/ from the collectors' folders, and assign each group its split.

    python3 evals/tools/build_error_corpus.py /work/corpus/a /work/corpus/b [--curation FILE]

Each input folder holds `groups.jsonl` and `messages.jsonl` (format: fixtures/errors-corpus/
README.md). The split is decided ONCE per look-alike *family*, not per message or group, so
that no root cause and no family of look-alikes has members on both sides:

    split = "test" if sha256(family).digest()[0] is odd else "dev"

The rule depends on the family name alone, so adding groups later never moves an existing
group. Output: groups.jsonl (with `split`) and one `<ecosystem>.jsonl` of messages each.

Curation (fixtures/errors-corpus/curation.json, written by a reviewer who read only the message
texts, never a matcher's output) is applied before the split: groups whose messages cannot be
told apart from their text are merged (both fixes stated), misfiled messages moved, and
messages that state no error dropped. The merged group keeps the family of the group kept.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "errors-corpus"


def split_of(family: str) -> str:
    return "test" if hashlib.sha256(family.encode()).digest()[0] % 2 else "dev"


def read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def curate(
    groups: dict[str, dict[str, object]], messages: list[dict[str, object]], curation: Path
) -> list[dict[str, object]]:
    """Apply merges, moves and drops; confusable_with stays symmetric and within known groups."""
    data = json.loads(curation.read_text())
    renamed: dict[str, str] = {}
    for merge in data.get("merges", []):
        into = groups[merge["into"]]
        into["root_cause"], into["fix"] = merge["root_cause"], merge["fix"]
        for gone in merge["from"]:
            renamed[gone] = merge["into"]
            into["sources"] = [*into.get("sources", []), *groups[gone].get("sources", [])]  # type: ignore[misc]
            del groups[gone]
    moved = {m["id"]: m["to"] for m in data.get("move_messages", [])}
    dropped = {m["id"] for m in data.get("drop_messages", [])}
    kept = []
    for message in messages:
        if message["id"] in dropped:
            continue
        group = moved.get(str(message["id"]), str(message["group"]))
        kept.append({**message, "group": renamed.get(group, group)})
    for name, group in groups.items():
        links = {renamed.get(str(g), str(g)) for g in group.get("confusable_with", [])}  # type: ignore[union-attr]
        group["confusable_with"] = sorted(g for g in links if g in groups and g != name)
    for name, group in groups.items():  # symmetric again after the merges
        for other in group["confusable_with"]:  # type: ignore[union-attr]
            links = groups[other]["confusable_with"]
            if name not in links:  # type: ignore[operator]
                links.append(name)  # type: ignore[union-attr]
    used = {str(m["group"]) for m in kept}
    return [m for m in kept if str(m["group"]) in groups and str(m["group"]) in used]


def main(folders: list[Path], curation: Path | None) -> None:
    groups: dict[str, dict[str, object]] = {}
    messages: list[dict[str, object]] = []
    for folder in folders:
        for row in read(folder / "groups.jsonl"):
            family = str(row.get("family") or row["group"])
            groups[str(row["group"])] = {**row, "family": family, "split": split_of(family)}
        messages += read(folder / "messages.jsonl")
    if curation is not None:
        messages = curate(groups, messages, curation)
        used = {str(m["group"]) for m in messages}
        groups = {k: g for k, g in groups.items() if k in used}
        for group in groups.values():
            group["confusable_with"] = [g for g in group["confusable_with"] if g in groups]  # type: ignore[union-attr]
    by_ecosystem: dict[str, list[dict[str, object]]] = defaultdict(list)
    for message in messages:
        group = groups[str(message["group"])]
        by_ecosystem[str(group["ecosystem"])].append(message)
    OUT.mkdir(parents=True, exist_ok=True)
    if curation is not None and curation.resolve() != (OUT / "curation.json").resolve():
        (OUT / "curation.json").write_text(curation.read_text())
    for old in OUT.glob("*.jsonl"):
        old.unlink()
    with (OUT / "groups.jsonl").open("w") as out:
        for name in sorted(groups):
            out.write(json.dumps(groups[name], ensure_ascii=False) + "\n")
    for ecosystem, rows in sorted(by_ecosystem.items()):
        with (OUT / f"{ecosystem}.jsonl").open("w") as out:
            for row in sorted(rows, key=lambda r: str(r["id"])):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = defaultdict(int)
    for message in messages:
        counts[str(groups[str(message["group"])]["split"])] += 1
    print(f"{len(groups)} groups, {len(messages)} messages: {dict(counts)}")


if __name__ == "__main__":
    args = sys.argv[1:]
    curation_file = None
    if "--curation" in args:
        at = args.index("--curation")
        curation_file = Path(args[at + 1])
        del args[at : at + 2]
    main([Path(arg) for arg in args], curation_file)
