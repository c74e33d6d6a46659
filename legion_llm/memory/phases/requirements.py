"""Requirement ids in plan summaries: where they are written, how a summary reports them.

Sources, each giving a `Report` (the id, where it came from, the text, and the verdict the
text states):

- frontmatter keys `requirements*` (flow or block lists; the key's own words such as
  `requirements_pending` say what the list means);
- `## Requirements Covered|Satisfied|...` sections (a bullet's head or a table's first cell);
- `**Requirement(s):**` lines;
- verification sections: an item or table row that starts with an id;
- prose status lines anywhere outside fences: a sentence with a status word (satisfies,
  completes, closes, covers, implements, addresses, fulfils, delivers, meets, passes, verified
  ...) reports the ids it names (`AUTH-01, AUTH-02 all satisfied`).

Precision: an id is a requirement when it is declared (a frontmatter requirements list, a
requirements section or line, the ROADMAP's phase entry, a definition line of REQUIREMENTS.md,
a PLAN's requirements list: `declared`) or stated in a tight requirement context: a
requirement word or status verb right before or after the ids (`satisfies AUTH-01`,
`R3 and R4 covered`). A prose report of an undeclared id in a looser sentence, or of an id used
as a name (`the RCF-1 form`, `ISO-8601 timestamps`: a lower-case word right after it), is no
report (`Report.tight` says which; `keep_reports` applies the rule).

Id styles: `REQ-01`, `AUTH-02`, `L9I-01`, `FR-GATE-A1-02`, `R1`, dotted `R1.1` (and, in a
frontmatter requirements list, any one-word id-like item such as `04.2-K1` or `SYNC_05`); ranges `R1.1–R1.4`,
`REQ-01—REQ-03`, `FX-01..03` and `FX-01..FX-03` keep their literal and add their members;
`AUTH-01 through AUTH-06` adds its members.
Decision, threat, outcome, error and pattern ids (`D-05`, `T-01-01`, `O-014`, `E-002`,
`PAT-003`) are never requirements; in prose, standards and algorithms (`SHA-256`, `UTF-8`,
`ISO-8601`) and bare letter+digit words (`S3`, `ES2022`) are not either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

# `AUTH-02`, and with inner segments that start with a letter `FR-BROKER-B2-02`, `REQ-P9-01`
_DASH_ID = r"[A-Z][A-Z0-9]{0,11}(?:-[A-Z][A-Z0-9]{0,11}){0,3}-\d{1,4}(?:\.\d+)?"
_DOT_ID = r"[A-Z]{1,4}\d+(?:\.\d+)*"
_ID = rf"(?:{_DASH_ID}|{_DOT_ID})"
EDGE_BEFORE = r"(?<![\w.\-/])"
EDGE_AFTER = r"(?![\w\-]|\.\d)"
ID_RE = re.compile(rf"{EDGE_BEFORE}({_ID}){EDGE_AFTER}")
_RANGE_BODY = rf"({_ID})(?:\s*(?:[–—-]|\.\.)\s*({_ID})|\s*(?:\.\.|[–—])\s*(\d+)(?![\w\-]|\.\d))"
RANGE_RE = re.compile(rf"{EDGE_BEFORE}{_RANGE_BODY}{EDGE_AFTER}")
# a range in words, `AUTH-01 through AUTH-06`: its members (the words are no id to keep)
THROUGH_RE = re.compile(rf"{EDGE_BEFORE}({_ID})\s+(?:through|thru)\s+({_ID}){EDGE_AFTER}", re.I)
# what an output may name as a requirement: dash-style ids anywhere, R-style ids
OUTPUT_ID_RE = re.compile(rf"{EDGE_BEFORE}({_DASH_ID}|R\d+(?:\.\d+)*){EDGE_AFTER}")
NOT_REQUIREMENT = re.compile(r"^(?:D|T|O|E|P|PAT)-\d")
# in prose only: dash ids, dotted ids (`R2.3`) and `R<n>`; never a standard's or algorithm's name
_PROSE_ID_RE = re.compile(rf"{EDGE_BEFORE}({_DASH_ID}|[A-Z]{{1,3}}\d+(?:\.\d+)+|R\d+){EDGE_AFTER}")
_NOT_IN_PROSE = re.compile(
    r"^(?:SHA|MD|UTF|UCS|ISO|IEC|IEEE|RFC|TLS|SSL|AES|RSA|DES|HTTP|ES|ECMA|PEP|CVE|CWE|X|"
    r"BASE|WCAG|ARIA|HTML|CSS|IPV|WPA|H|MP|HS|RS|PS)-\d"
)
_REQ_HEADING = re.compile(r"^#{2,4}\s+Requirements?\b", re.IGNORECASE)
_VERIFY_HEADING = re.compile(r"^#{2,4}\s+(?:.*\b)?(?:verification|verified)\b", re.IGNORECASE)
_REQ_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)*(?:\*\*)?Requirements?(?:\*\*)?\s*:\s*(?:\*\*)?\s*:?\s*(.*)$",
    re.IGNORECASE,
)
_FM_REQ_KEY = re.compile(r"^(requirements?(?:[-_][a-z_-]+)?)\s*:(.*)$", re.IGNORECASE)
_PARENS = re.compile(r"\([^()]*\)")
_YAML_COMMENT = re.compile(r"(?:^|\s)#.*$")
# one word with a digit and an upper-case letter, or upper-case words joined by hyphens
_LIST_ITEM_ID = re.compile(
    r"(?=[\w.\-]*\d)(?=[\w.\-]*[A-Z])[A-Za-z0-9][\w.\-]*[A-Za-z0-9]|[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+"
)
_STATUS_WORD = re.compile(
    r"\b(?:satisf(?:y|ies|ied|ying)|complet(?:e|es|ed|ing)|clos(?:e|es|ed|ing)|"
    r"cover(?:s|ed|ing)?|implement(?:s|ed|ing)?|address(?:es|ed|ing)?|fulfil+(?:s|ed|ing)?|"
    r"deliver(?:s|ed|ing)?|meets?|met|pass(?:es|ed)?|verified|done)\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:not|never|no longer|isn't|aren't|wasn't|won't|doesn't|don't|without|nor)\b"
    r"(?:\s+\w+){0,3}?\s+(?:yet\s+)?(?:satisf|complet|clos|cover|implement|address|fulfil|"
    r"deliver|meet|met|pass|verif|done)|\b(?:is|are|was|were)\s+not\b",
    re.IGNORECASE,
)
_SIGNAL = re.compile(
    rf"{_STATUS_WORD.pattern}|{_NEGATED.pattern}|\b(?:deferred|pending|partial\w*|fail\w*)\b",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r",\s+(?:and|but|while|whereas)\s+|\s+but\s+")
_PART_OF = re.compile(r"\b(?:half|part|portion|parts)\s+of\s+(?:spec\s+|requirement\s+)?$", re.I)
_OPEN = re.compile(
    r"\b(?:deferred|postponed|pending|not yet|out of scope|not started|remaining|open)\b", re.I
)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\s+[—–]\s+")
_MAX_RANGE = 50

Verdict = Literal["pass", "partial", "fail", "not verified"]


@dataclass(frozen=True)
class Report:
    """One place a summary names a requirement id, and the verdict that place states."""

    id: str
    source: str  # "frontmatter" | "section" | "line" | "prose"
    text: str
    stated: Verdict
    tight: bool = True  # a prose report in a tight requirement context (module docstring)

    def verdict(self, outcome: str) -> Verdict:
        """The stated verdict, bounded by the plan's outcome (a failed plan passes nothing)."""
        if self.stated == "not verified":
            return self.stated
        if self.stated == "fail" or outcome == "failed":
            return "fail"
        if self.stated == "partial" or outcome == "partial":
            return "partial"
        return "pass"


def stated_verdict(text: str) -> Verdict:
    """What a requirement note says: fail, partial, not verified (open, negated) or pass."""
    low = text.lower()
    if re.search(r"\bnot (met|done|satisfied)\b|\bfail", low):
        return "fail"
    if _NEGATED.search(text) or _OPEN.search(text):
        return "not verified"
    if "partial" in low:
        return "partial"
    return "pass"


def _split_number(rid: str) -> tuple[str, str]:
    match = re.match(r"^(.*?)(\d+)$", rid)
    return (match.group(1), match.group(2)) if match else (rid, "")


def expand_range(first: str, last: str) -> list[str]:
    """`R1.1`..`R1.4` (or `FX-01`..`03`) -> the members; [] when the ends form no clear range."""
    head_a, num_a = _split_number(first)
    if last.isdigit():
        last = head_a + last
    head_b, num_b = _split_number(last)
    if head_a != head_b or not num_a or not num_b:
        return []
    start, end = int(num_a), int(num_b)
    if not start < end <= start + _MAX_RANGE:
        return []
    width = len(num_a) if num_a.startswith("0") else 0
    return [f"{head_a}{n:0{width}d}" for n in range(start, end + 1)]


def range_members(rid: str) -> list[str]:
    """The members of a range literal (`R1.1–R1.4`, `FX-01..03`); [] for a single id."""
    match = RANGE_RE.fullmatch(rid)
    if not match:
        return []
    return expand_range(match.group(1), match.group(2) or match.group(3))


def _ids(text: str, single: re.Pattern[str]) -> list[str]:
    found: list[str] = []
    for match in RANGE_RE.finditer(text):
        members = expand_range(match.group(1), match.group(2) or match.group(3))
        if members and single.fullmatch(match.group(1)):  # prose: `Q1..Q5` is no range of ids
            found += [match.group(0), *members]
    for match in THROUGH_RE.finditer(text):
        if single.fullmatch(match.group(1)) and single.fullmatch(match.group(2)):
            found += expand_range(match.group(1), match.group(2))
    found += [m.group(1) for m in single.finditer(text)]
    return list(dict.fromkeys(i for i in found if not NOT_REQUIREMENT.match(i)))


def ids_in_line(text: str) -> list[str]:
    """Requirement ids in a requirement source line: ranges as written plus their members.
    A parenthetical is a note (`R1, R2 (was R7)`), not a source."""
    return _ids(_PARENS.sub(" ", text), ID_RE)


def ids_in_prose(text: str) -> list[str]:
    """Requirement ids in a prose sentence (stricter shapes, see the module docstring)."""
    return [i for i in _ids(text, _PROSE_ID_RE) if not _NOT_IN_PROSE.match(i)]


def split_frontmatter(text: str) -> tuple[list[str], str]:
    """(frontmatter lines, body) for text starting with a `---` YAML block."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---\n"):
        return [], text
    end = text.find("\n---", 4)
    if end < 0:
        return [], text
    after = text.find("\n", end + 4)
    body = text[after + 1 :] if after >= 0 else ""
    return text[4:end].split("\n"), body


def _frontmatter_reports(lines: list[str]) -> list[Report]:
    found: list[Report] = []
    for index, line in enumerate(lines):
        match = _FM_REQ_KEY.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if not match:
            continue
        key = match.group(1)
        stated = stated_verdict(key.replace("-", " ").replace("_", " "))
        values = [_YAML_COMMENT.sub("", match.group(2)).strip().strip("[]")]
        for item in lines[index + 1 :]:
            if not item.startswith((" ", "\t", "-")):
                break
            values.append(_YAML_COMMENT.sub("", item).strip().lstrip("-").strip())
        for value in values:
            found += [
                Report(i, "frontmatter", f"{key}: {value}", stated) for i in _listed_ids(value)
            ]
    return found


def _listed_ids(value: str) -> list[str]:
    """The ids of a frontmatter requirements value: the usual shapes, plus any list item that is
    one id-like word (`03.6-T1`, `REQ-HERO-3D`, `AUTH_01`, `FR-3a`: the key says it is an id)."""
    items = [item.strip().strip("\"'") for item in value.split(",")]
    words = [i for i in items if _LIST_ITEM_ID.fullmatch(i) and not NOT_REQUIREMENT.match(i)]
    return list(dict.fromkeys([*ids_in_line(value), *words]))


def _section_item(line: str) -> tuple[str, str]:
    """(id part, note) of a requirements-section line: a bullet's head or a table's first cell."""
    stripped = line.strip()
    if stripped.startswith("|"):
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        return (cells[0], " ".join(cells[1:])) if cells else ("", "")
    stripped = re.sub(r"^(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?", "", stripped)
    parts = re.split(r"\s[—–]\s|:\s|\s-\s", stripped, maxsplit=1)
    note = parts[1] if len(parts) > 1 else ""
    return parts[0].replace("**", "").replace("`", ""), note


def _prose_reports(line: str) -> list[Report]:
    found: list[Report] = []
    for sentence in _SENTENCE.split(line):
        if not _STATUS_WORD.search(sentence):
            continue
        text = " ".join(sentence.replace("**", "").replace("`", "").split()).rstrip(" ;,")
        for clause in _CLAUSE.split(text):
            stated = stated_verdict(clause if _SIGNAL.search(clause) else text)
            found += [Report(i, "prose", text, _qualified(i, clause, stated), _tight(i, clause))
                      for i in ids_in_prose(clause)]  # fmt: skip
    return found


# ids written together: `AUTH-01, AUTH-02 and AUTH-03`, `R1/R2`, `FX-01..03`, `R1.1–R1.4`
_GROUP = re.compile(
    rf"{EDGE_BEFORE}{_ID}(?:\s*(?:,\s*(?:and\s+|or\s+)?|/|&|\band\b|\bor\b|[–—]|\.\.)\s*"
    rf"(?:{_ID}|\d+(?![\w.]))){{0,40}}"
)
_CONTEXT_BEFORE = re.compile(
    r"\b(?:satisf\w*|implement\w*|cover\w*|clos\w*|fulfil\w*|meets?|met|address\w*|"
    r"complet\w*|requirements?|reqs?)\b[\s:]*(?:[^\s.;:!?]+\s+){0,3}$",
    re.I,
)
_CONTEXT_AFTER = re.compile(
    r"^\s*(?:\([^()]*\)\s*)?(?:(?:is|are|was|were|now|all|both|each|fully|also|have been|"
    r"has been|been)\s+)*(?:satisf\w*|implement\w*|cover\w*|closed|fulfil\w*|met|addressed|"
    r"complete\w*|done|delivered|verified|pass\w*|✓|✅)",
    re.I,
)
# a lower-case word right after an id makes it a name (`RCF-1 form`), except these and verbs
# (`-ed`, `-ing`: `FX-01..03 carried over`)
_AFTER_OK_WORDS = """
    is are was were be been being and or all both each now fully partially also still not
    complete completed done passed passes pass verified satisfied covered implemented closed met
    addressed delivered fulfilled requirement requirements remains remain with via in by through
    per at on to from for as into under which that pending deferred open partial failed fails
    fail blocked has have had through thru
"""
_AFTER_OK = frozenset(_AFTER_OK_WORDS.split())


def _tight(rid: str, clause: str) -> bool:
    """Whether the clause reports `rid` in a tight requirement context, not as a name."""
    where = _position(rid, clause)
    span = next((m.span() for m in _GROUP.finditer(clause) if m.start() <= where < m.end()), None)
    if span is None:
        return False
    after = clause[span[1] :]
    word = re.match(r"^\s+([a-z][\w-]*)", after)
    if word and word.group(1) not in _AFTER_OK and not word.group(1).endswith(("ed", "ing")):
        return False  # `the RCF-1 form`, `ISO-8601 timestamps`: the id names a thing
    return bool(_CONTEXT_BEFORE.search(clause[: span[0]]) or _CONTEXT_AFTER.match(after))


def _position(rid: str, clause: str) -> int:
    """Where the clause writes `rid`, or the range it is a member of (-1: nowhere)."""
    found = re.search(rf"{EDGE_BEFORE}{re.escape(rid)}{EDGE_AFTER}", clause)
    if found:
        return found.start()
    for pattern in (RANGE_RE, THROUGH_RE):
        for match in pattern.finditer(clause):
            last = match.group(2) or (match.group(3) if pattern is RANGE_RE else None)
            if last and rid in expand_range(match.group(1), last):
                return match.start()
    return -1


def keep_reports(reports: Iterable[Report], declared: Iterable[str]) -> list[Report]:
    """The reports that make an id a requirement: every declaration, and a prose report when
    the id is declared somewhere or the sentence states it tightly (module docstring)."""
    found = list(reports)
    known = set(declared) | {r.id for r in found if r.source != "prose"}
    return [r for r in found if r.source != "prose" or r.tight or r.id in known]


def _qualified(rid: str, clause: str, stated: Verdict) -> Verdict:
    """`the logging part of R2.9`: a part of a requirement is a partial report of it."""
    before = clause[: clause.find(rid)] if rid in clause else ""
    return "partial" if stated == "pass" and _PART_OF.search(before) else stated


def requirement_reports(text: str) -> list[Report]:
    """Every place a summary names a requirement id in a requirement source or status line."""
    frontmatter, body = split_frontmatter(text)
    found = _frontmatter_reports(frontmatter)
    title, in_section, in_verify = "", False, False
    in_fence = False
    for line in body.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        if line.startswith("#"):
            in_section = bool(_REQ_HEADING.match(line))
            in_verify = not in_section and bool(_VERIFY_HEADING.match(line))
            title = line.lstrip("#").strip()
            continue
        match = _REQ_LINE.match(line)
        if match:
            note = " ".join(line.replace("**", "").split())
            found += [Report(i, "line", note, stated_verdict(_PARENS.sub(" ", match.group(1))))
                      for i in ids_in_line(match.group(1))]  # fmt: skip
            continue
        if in_section:
            head, note = _section_item(line)
            ids = ids_in_line(head)
            if ids:
                stated = stated_verdict(note) if note else stated_verdict(title)
                found += [Report(i, "section", _one_line(line), stated) for i in ids]
                continue
        if in_verify and (verified := _verified_item(line)):
            found += verified
            continue
        found += _prose_reports(line)
    return found


def _verified_item(line: str) -> list[Report]:
    """A verification section's item or row that starts with an id and says how it went."""
    head, note = _section_item(line)
    ids = ids_in_prose(head)
    if not ids or not head.strip().startswith(ids[0]) or not note.strip():
        return []
    return [Report(i, "section", _one_line(line), stated_verdict(note)) for i in ids]


def _one_line(text: str) -> str:
    return " ".join(text.strip().lstrip("-*+ ").replace("**", "").split())


def _id_key(rid: str) -> tuple[object, ...]:
    first = RANGE_RE.fullmatch(rid)
    parts = re.split(r"(\d+)", first.group(1) if first else rid)
    return tuple(int(p) if p.isdigit() else p for p in parts)


def sort_ids(ids: Iterable[str]) -> list[str]:
    """Natural order; a range literal just before its first member."""
    return sorted(ids, key=lambda i: (_id_key(i), -len(i)))


def requirement_ids(text: str) -> list[str]:
    """Every requirement id a summary names in a requirement source or status line."""
    return sort_ids(dict.fromkeys(r.id for r in requirement_reports(text)))


def ids_present(rid: str, text: str) -> bool:
    """Whether `rid` occurs in `text` as a whole id (R1 is not found inside R14 or R1.2)."""
    members = range_members(rid)
    if members:
        return rid in text or all(ids_present(m, text) for m in members)
    pattern = rf"{EDGE_BEFORE}{re.escape(rid)}{EDGE_AFTER}"
    return re.search(pattern, text) is not None
