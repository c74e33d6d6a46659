"""Build fixtures/errors-corpus/ from the collectors' folders, and assign each group its split.

    python3 evals/tools/build_error_corpus.py /work/corpus/a /work/corpus/b

Each input folder holds `groups.jsonl` and `messages.jsonl` (format: fixtures/errors-corpus/
README.md). The split is decided ONCE per look-alike *family*, not per message or group, so
that no root cause and no family of look-alikes has members on both sides:

    split = "test" if sha256(family).digest()[0] is odd else "dev"

The rule depends on the family name alone, so adding groups later never moves an existing
group. Output: groups.jsonl (with `split`) and one `<ecosystem>.jsonl` of messages each.
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


def main(folders: list[Path]) -> None:
    groups: dict[str, dict[str, object]] = {}
    messages: list[dict[str, object]] = []
    for folder in folders:
        for row in read(folder / "groups.jsonl"):
            family = str(row.get("family") or row["group"])
            groups[str(row["group"])] = {**row, "family": family, "split": split_of(family)}
        messages += read(folder / "messages.jsonl")
    by_ecosystem: dict[str, list[dict[str, object]]] = defaultdict(list)
    for message in messages:
        group = groups[str(message["group"])]
        by_ecosystem[str(group["ecosystem"])].append(message)
    OUT.mkdir(parents=True, exist_ok=True)
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
    main([Path(arg) for arg in sys.argv[1:]])
