"""Learn banner lines and background token frequencies from the tuning splits (issue 14).

    .venv/bin/python evals/tools/learn_banners.py

A line that the matcher would read as an error line (salient or secondary) and that occurs,
once normalised, in the messages of several root-cause groups says nothing about the cause:
"APPLICATION FAILED TO START"'s neighbours, "npm error A complete log of this run can be found
in: <path>", "fatal: Could not read from remote repository.", "Error starting
ApplicationContext...". The matcher down-weights such lines by how many groups share them and
never decides an exact match on them alone.

It also counts, over the same messages, in how many messages each signature token occurs
(data/token_df.json): the matcher's IDF blends these background counts with its own store's, so
that "error", "failed" or "cannot" weigh little even in a store of a handful of fixes.

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
from legion_llm.memory.signatures.match import features  # noqa: E402

OUT = REPO / "legion_llm" / "memory" / "signatures" / "data" / "banners.json"
DF_OUT = OUT.with_name("token_df.json")
MIN_DF = 2  # rarer tokens are left out: the matcher treats an unseen token as rarest
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
    write_banners(groups)
    # token frequencies are counted with the banners in place (features() reads them)
    df: dict[str, int] = defaultdict(int)
    docs = 0
    for dataset in datasets:
        for message in dataset.messages:
            feat = features(message.text)
            docs += 1
            for token in set(feat.salient) | set(feat.context):
                df[token] += 1
    kept = {t: n for t, n in sorted(df.items()) if n >= MIN_DF}
    about = "in how many of the tuning messages each token occurs (evals/tools/learn_banners.py)"
    DF_OUT.write_text(json.dumps({"about": about, "docs": docs, "df": kept}, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(kept)} token frequencies over {docs} messages -> {DF_OUT.relative_to(REPO)}")


def write_banners(groups: dict[str, set[str]]) -> None:
    from legion_llm.memory.signatures import banners as module

    banners = {t: len(g) for t, g in sorted(groups.items()) if len(g) >= MIN_GROUPS and t}
    data = {
        "about": "error lines shared by at least %d root-cause groups of the dev split and the "
        "original set (evals/tools/learn_banners.py); value: how many groups" % MIN_GROUPS,
        "lines": banners,
    }
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(banners)} banner lines -> {OUT.relative_to(REPO)}")
    module._groups.cache_clear()
    module.shared_by.cache_clear()


if __name__ == "__main__":
    main()
