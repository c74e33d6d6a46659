"""Learn the banner and trailer lines of error output from the tuning splits (issue 14).

    .venv/bin/python evals/tools/learn_banners.py

A line that the matcher would read as an error line (salient or secondary) and that occurs,
once normalised, in the messages of several root-cause groups says nothing about the cause:
"APPLICATION FAILED TO START"'s neighbours, "npm error A complete log of this run can be found
in: <path>", "fatal: Could not read from remote repository.", "Error starting
ApplicationContext...". The matcher down-weights such lines by how many groups share them and
never decides an exact match on them alone.

Learned ONLY from the `dev` split of fixtures/errors-corpus and from the original set
fixtures/errors (the `test` split is never read), and written to
legion_llm/memory/signatures/data/banners.json as {normalised line: number of groups}.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from legion_llm.evals.errors import load_dataset  # noqa: E402
from legion_llm.memory.signatures.banners import template  # noqa: E402
from legion_llm.memory.signatures.lines import signature_lines  # noqa: E402

OUT = REPO / "legion_llm" / "memory" / "signatures" / "data" / "banners.json"
MIN_GROUPS = 3


def main() -> None:
    datasets = [
        load_dataset(REPO / "fixtures" / "errors-corpus", "dev"),
        load_dataset(REPO / "fixtures" / "errors"),
    ]
    groups: dict[str, set[str]] = defaultdict(set)
    for dataset in datasets:
        for message in dataset.messages:
            found = signature_lines(message.text)
            for line in (*found.salient, *found.secondary):
                groups[template(line)].add(message.group)
    banners = {t: len(g) for t, g in sorted(groups.items()) if len(g) >= MIN_GROUPS and t}
    data = {
        "about": "error lines shared by at least %d root-cause groups of the dev split and the "
        "original set (evals/tools/learn_banners.py); value: how many groups" % MIN_GROUPS,
        "lines": banners,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(banners)} banner lines -> {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
