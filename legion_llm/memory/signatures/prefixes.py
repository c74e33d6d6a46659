"""Log-line prefixes: what a logger, a container runtime or a CI runner puts before each line.

The same error printed by `docker compose` (`api-1  | `), read from `docker logs -t`, a CI log
(`2024-05-01T10:00:00.1234567Z `, `##[error]`), journald (`May 02 10:00:01 host app[12]: `), a
Spring Boot logger (`ERROR 1234 --- [main] o.s.b.SpringApplication : `), npm's debug log
(`123 verbose `), a Cloud Foundry stager (`[STG/0] ERR `) or a monorepo runner
(`@scope/web:build: `) must read the same as the bare error. Two passes, both pure:

1. known prefix atoms are removed from the start of every line (timestamps, levels with a
   logger tail, container and runner tags, box-drawing gutters, bullets), repeatedly;
2. a prefix that most lines of the text share (same shape, digits aside) up to a separator
   (`| `, `: `, `] `, a tab) is removed from the lines that have it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# fmt: off
_ATOM = re.compile(
    r"^(?:"
    r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: UTC)?(?=[\s|\]])\s*"
    r"|\[\d{4}-\d\d-\d\d[^\]\n]{0,40}\]\s*"                          # [2024-03-11 09:14:52 +0000]
    r"|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+"                 # 2024/04/18 11:02:47
    r"|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?(?: [AP]M)?\s+"             # 11:02:47 / [11:02:47.123]
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?: [\w.-]+ [\w./@-]+(?:\[\d+\])?:)?\s+"  # syslog
    r"|\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d:\d\d(?:\.\d+)?\s+"           # 14-Sep-2015 09:25:23
    r"|\[(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL)\]\s+(?=\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d)"
    r"|(?:(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL)\s+)?(?:\d+ )?(?:--- )?"  # Spring Boot
    r"\[[^\]\n]*\] (?![\w.$]*(?:Error|Exception)\s*:)[\w.$\[\]-]+\s*:(?:\s+|$)"  # not `[E] Error:`
    r"|(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL|NOTICE)\s+(?=\S)(?![:|])"  # bare level
    r"|\[(?:pid )?\d+\]\s+"                                          # [1234]
    r"|[A-Za-z][\w.-]*(?:[-_.]\d+)?\s+\|\s?"                         # docker compose: api-1  |
    r"|\d+\|[\w-]+\s*\|\s?"                                          # pm2: 0|api  |
    r"|#\d+ \d+(?:\.\d+)? "                                          # buildkit: #12 14.31
    r"|##\[(?:error|warning|notice|debug|group|endgroup)\]"          # GitHub Actions
    r"|::(?:error|warning|notice)(?: [^:\n]*)?::"
    r"|\[(?:STG|APP|RTR|CELL|API)/[\w.]+\] (?:OUT|ERR) "            # Cloud Foundry
    r"|\d+ (?:verbose|silly|timing|error|warn|info|http|notice) "    # npm debug log
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.-]+:\d+\]\s"   # klog: E0418 12:00:00.000000 1 x.go:9]
    r"|remote:(?: +!)?\s+(?=\S)"                                       # git hosting: remote: !
    r"|[│╷╵┃]\s?"                                                    # terraform / dagger gutters
    r"|[⨯✖✘×❌⚠▲●]\s+"                                              # bullets
    r")"
)
# fmt: on
_SHARED = re.compile(r"^(.{1,48}?(?:\|\s|:\s|\]\s|\t))(?=\S)")
MAX_ROUNDS = 4
SHARED_SHARE = 0.6  # a prefix is the logger's when at least this share of the lines carry it
MIN_SHARED_LINES = 3


def strip_atoms(line: str) -> str:
    """The line without the known prefix atoms at its start (indentation kept); "" when it
    held nothing else (a logger line whose message is on the next lines)."""
    rest = line.lstrip()
    changed = False
    for _ in range(MAX_ROUNDS):
        found = _ATOM.match(rest)
        if not found or found.end() == 0:
            break
        rest, changed = rest[found.end() :], True
    if not changed:
        return line
    return line[: len(line) - len(line.lstrip())] + rest if rest.strip() else ""


def _shape(prefix: str) -> str:
    return re.sub(r"\d+", "0", prefix)


def _shape_pattern(shape: str) -> re.Pattern[str]:
    """Lines that start with a prefix of this shape, whatever follows (an indented line too)."""
    return re.compile("^" + r"\d+".join(re.escape(part) for part in shape.split("0")))


def shared_prefix(lines: Sequence[str]) -> re.Pattern[str] | None:
    """A prefix most non-empty lines share (as a pattern), or None. The shapes are read from
    lines where a message follows the separator; the lines counted include those where an
    indented one does (a traceback's frames, a stack's `at` lines under `[E] ` or a pod tag)."""
    filled = [line for line in lines if line.strip()]
    if len(filled) < MIN_SHARED_LINES:
        return None
    shapes = Counter(_shape(m.group(1)) for line in filled if (m := _SHARED.match(line)))
    needed = max(MIN_SHARED_LINES, SHARED_SHARE * len(filled))
    for shape, _ in shapes.most_common(3):
        pattern = _shape_pattern(shape)
        if sum(1 for line in filled if pattern.match(line)) >= needed:
            return pattern
    return None


def strip_prefixes(lines: Sequence[str]) -> list[str]:
    """Every line without its log prefix: known atoms, then a prefix most lines share."""
    stripped = [strip_atoms(line) for line in lines]
    pattern = shared_prefix(stripped)
    if pattern is None:
        return stripped
    return [pattern.sub("", line, count=1) for line in stripped]
