"""What a model is sent of a plan summary: long fenced command output cut to the lines that matter.

Command output (test runs, build logs, traces) is most of what plan summaries weigh, and the
compaction prompt tells the model to drop it; what it carries that must survive (ids and paths)
is extracted beforehand and sent as lists. So a fenced block longer than `WHOLE_LINES` is sent
with only:

- error lines (error, failed, exception, traceback, panic, fatal, warning, denied, non-zero exit),
- commands (a shell prompt `$ ` / `> ` / `% `, or a line starting with a common tool's name),
- result counts ("12 passed, 1 failed", "3 errors"),
- every line that names one of the phase's requirement ids or file paths,
- a private key block whole, BEGIN to END line (so that the redaction step, which reads the
  prompt after this, recognises the key and replaces all of it),

and each run of more than two dropped lines becomes one marker, `[… N lines of output left out]`. Prose, and
short fenced blocks (snippets, not logs), are sent as written. The originals are never changed:
grounding, repair and the offline engine read them whole; only the prompt is smaller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence

from legion_llm.memory.phases.paths import line_paths
from legion_llm.memory.phases.requirements import ids_present
from legion_llm.memory.redact.rules import PEM_BEGIN, PEM_END

WHOLE_LINES = 8  # a fenced block this short is sent whole
MIN_RUN = 2  # at most this many dropped lines in a row are sent anyway (cheaper than a marker)
_ERROR = re.compile(
    r"(?i)(\berr(or|ors|!)?\b|\bfail|\bexception\b|traceback|\bpanic|\bfatal\b|\bwarn(ing)?\b"
    r"|\bdenied\b|\brefused\b|\bnot found\b|\bcannot\b|\bunable to\b|[✗✘×]|^\s*E\s{2,}"
    r"|exit(ed)? (with )?(code|status) [1-9])"
)
_COUNTS = re.compile(
    r"(?i)\b\d+\s+(passed|failed|passing|failing|tests?|errors?|warnings?|skipped|succeeded|ok)\b"
)
_PROMPT = re.compile(r"^\s*(\$|>|%|❯|PS>)\s+\S")
_COMMANDS = frozenset(
    [
        "bash",
        "bun",
        "bundle",
        "cargo",
        "composer",
        "curl",
        "deno",
        "docker",
        "dotnet",
        "eslint",
        "gh",
        "git",
        "go",
        "gradle",
        "helm",
        "java",
        "jest",
        "kubectl",
        "legion-llm",
        "make",
        "mvn",
        "mypy",
        "node",
        "npm",
        "npx",
        "php",
        "pip",
        "pip3",
        "pnpm",
        "poetry",
        "psql",
        "pytest",
        "python",
        "python3",
        "rails",
        "ruby",
        "ruff",
        "rustc",
        "sh",
        "terraform",
        "tsc",
        "uv",
        "vite",
        "vitest",
        "yarn",
    ]
)


def marker(count: int) -> str:
    return f"[… {count} line{'s' if count != 1 else ''} of output left out]"


def keeper(ids: Sequence[str], paths: Collection[str]) -> Callable[[str], bool]:
    """Whether a line inside a long fenced block is worth sending."""
    wanted = set(paths)
    id_hint = re.compile("|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)))

    def keep(line: str) -> bool:
        if not line.strip():
            return False
        if _ERROR.search(line) or _COUNTS.search(line) or _PROMPT.match(line):
            return True
        first = line.split(maxsplit=1)[0].lower()
        if first in _COMMANDS:
            return True
        if ids and id_hint.search(line) and any(ids_present(i, line) for i in ids if i in line):
            return True
        return (
            bool(wanted)
            and ("/" in line or "." in line)
            and not wanted.isdisjoint(line_paths(line))
        )

    return keep


def reduce_output(text: str, ids: Sequence[str], paths: Collection[str]) -> str:
    """`text` with every long fenced block cut to its lines that matter (see the module note)."""
    keep = keeper(ids, paths)
    out: list[str] = []
    block: list[str] | None = None
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            if block is not None:
                out += _reduced(block, keep)
                block = None
            else:
                block = []
            out.append(line)
        elif block is None:
            out.append(line)
        else:
            block.append(line)
    if block is not None:  # a fence left open runs to the end
        out += _reduced(block, keep)
    return "\n".join(out)


def _reduced(block: list[str], keep: Callable[[str], bool]) -> list[str]:
    if len(block) <= WHOLE_LINES:
        return block
    kept: list[str] = []
    run: list[str] = []  # dropped lines not yet replaced by a marker
    in_pem = False  # a BEGIN ... END block is kept whole: redaction knows it only so
    for line in [*block, None]:
        whole = in_pem or (line is not None and PEM_BEGIN.search(line) is not None)
        in_pem = whole and (line is None or PEM_END.search(line) is None)
        if line is None or whole or keep(line):
            # a marker costs about as much as a line or two: a shorter run is sent as it is
            kept += run if len(run) <= MIN_RUN else [marker(len(run))]
            run = []
            if line is not None:
                kept.append(line)
        else:
            run.append(line)
    return kept
