"""Banner and trailer lines: error lines that many different root causes print alike.

`data/banners.json` is learned from the tuning splits (evals/tools/learn_banners.py): each
normalised line with the number of root-cause groups whose messages carry it. `weight(line)`
is 1.0 for an ordinary line and smaller the more groups share it; the matcher scales the
line's tokens by it and leaves banners out of the exact fingerprint.
"""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "banners.json"
SHARED_BY = 1.5  # a line shared by n >= 3 groups weighs SHARED_BY / n of an ordinary one
FLOOR = 0.1


def template(line: str) -> str:
    """The form a line is looked up by: normalised, case-folded, whitespace collapsed, with the
    discriminating names it carries (a refused port 5432 is not a refused 6379)."""
    from legion_llm.memory.signatures.discriminators import discriminators
    from legion_llm.memory.signatures.normalise import normalise

    names = "".join(f" [{k}={v}]" for k, v in sorted(discriminators([line])))
    return re.sub(r"\s+", " ", normalise(line).casefold()).strip() + names


@cache
def _groups() -> dict[str, int]:
    if not DATA.is_file():
        return {}
    lines: dict[str, int] = json.loads(DATA.read_text(encoding="utf-8"))["lines"]
    return lines


@lru_cache(maxsize=65_536)
def shared_by(line: str) -> int:
    """How many root-cause groups of the tuning data print this line (0: not a banner)."""
    return _groups().get(template(line), 0)


def weight(line: str) -> float:
    count = shared_by(line)
    return 1.0 if count == 0 else max(FLOOR, min(1.0, SHARED_BY / count))
