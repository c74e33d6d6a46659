"""Canonical forms of error phrasings that differ between tools, versions and platforms.

Pure rewrites over *normalised* text (placeholders in, quotes already single; `^`/`$` are line
bounds), applied at the end of `signatures.normalise`: each maps a well-known alternative wording of one condition onto one
form, so both sides of a pair carry the same tokens. A rule here must name a condition, not a
project: it rewrites wording a tool prints for every user, never values or names.
"""

from __future__ import annotations

import re

__all__ = ["CODE_ALIASES", "canonical"]

# TypeScript 4.8+ names the expression (TS18047/8/9, TS18046) where older releases and
# non-identifier expressions say "Object is possibly ..." (TS2531/2/3, TS2571): one check each.
CODE_ALIASES = {
    "TS2531": "TS18047",  # 'x' is possibly 'null'
    "TS2532": "TS18048",  # 'x' is possibly 'undefined'
    "TS2533": "TS18049",  # 'x' is possibly 'null' or 'undefined'
    "TS2571": "TS18046",  # 'x' is of type 'unknown'
}
_CODE = re.compile(r"\b(?:" + "|".join(CODE_ALIASES) + r")\b")

_OPTION = r"(?:arguments?|options?|flags?|switch(?:es)?)"

# fmt: off
_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.MULTILINE), repl) for pattern, repl in (
        # wrappers around the message: Groovy's (Gradle scripts) compiler crash, Go's go.sum check
        (r"^BUG! exception in phase '[^']*' in source unit '[^']*' ", ""),
        (r"^(?:go: )?verifying [\w.-]+\.[a-z]{2,}(?:/[\w.~<>-]+)*@\S+: (?=missing|checksum)", ""),
        # Python: str + int says "can only concatenate", int + str "unsupported operand type(s)"
        (r"\bcan only concatenate (\w+) \(not '(\w+)'\) to \1\b",
         r"unsupported operand type(s) for +: '\1' and '\2'"),
        # unittest's assertEqual "AssertionError: a != b" = pytest's rewritten "assert a == b"
        (r"^AssertionError: (?:assert )?(.+?) != (.+)$", r"assert \1 == \2"),
        (r"^AssertionError: assert\b", "assert"),
        # argparse "unrecognized arguments", getopt/git "unknown option", click "no such option",
        # pytest's ini "Unknown config option": an option the tool (or a missing plugin) lacks
        (rf"(?i)\b(?:unrecognized|unknown|unrecognised|no such)(?: (?:config|ini|command[- ]line))?"
         rf" {_OPTION}\b", "unrecognized option"),
        (r"\bunrecognized option:? (?!-)([A-Za-z][\w.-]*)$", r"unrecognized option: --\1"),
        # pytest: an unregistered mark is a warning, and with --strict-markers an error
        (r"\bUnknown pytest\.mark\.(\w+)(?: - is this a typo\?.*)?$", r"unknown mark '\1'"),
        (r"'(\w+)' not found in 'markers' configuration option\b", r"unknown mark '\1'"),
        # rustc 1.85 renamed E0433's "use of undeclared crate or module"
        (r"\buse of unresolved module or unlinked crate\b", "use of undeclared crate or module"),
        # javac: `-target N` on an older JDK said "invalid target release", `--release N` says
        (r"\brelease version (<num>|\d+) not supported\b", r"invalid target release: \1"),
        # JVM: Java 8 and older "Unsupported major.minor version 52.0", 9+ the long form
        (r"(?: :)? Unsupported major\.minor version (<num>)",
         r" has been compiled by a more recent version of the Java Runtime (class file version \1)"),
        # Maven: a miss remembered in the local repository is the same miss
        (r"\bFailure to find (\S+) in (\S+) was cached in the local repository\b.*$",
         r"Could not find artifact \1 in \2"),
        # errno messages across platforms and tools (EADDRINUSE, ENOENT)
        (r"(?i)\bOnly one usage of each socket address \([^)\n]*\) is normally permitted\b",
         "address already in use"),
        (r"(?i)\bport is already allocated\b", "address already in use"),
        (r"(?i)\bThe system cannot find the (?:file|path) specified\b", "no such file or directory"),
        # Docker CLI: the daemon's socket (or on Windows its named pipe) is not there
        (r"(?i)^error during connect: (?:This error may indicate that the docker daemon is not "
         r"running\.?:? )?.*\bopen \S*pipe\S*docker\w*: no such file or directory\.?$",
         "Cannot connect to the Docker daemon. Is the docker daemon running?"),
        (r"(?i)\bCannot connect to the Docker daemon at \S+?\.? Is the docker daemon running\?",
         "Cannot connect to the Docker daemon. Is the docker daemon running?"),
    )
)
# fmt: on


def canonical(text: str) -> str:
    """Normalised text with alternative wordings (and error codes) mapped to one form each."""
    text = _CODE.sub(lambda m: CODE_ALIASES[m.group()], text)
    for pattern, repl in _PHRASES:
        text = pattern.sub(repl, text)
    return text
