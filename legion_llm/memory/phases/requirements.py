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

Declaration, not shape, makes a requirement. An id is a requirement of the phase when something
declares it (DECLARING here: a frontmatter requirements list in any spelling, a requirements
section or line; elsewhere: the ROADMAP's phase entry, a PLAN's list, a REQUIREMENTS.md
traceability row for the phase), and then whatever its shape (`UX-STATES`, `D-04`,
`REQ-sizes-five`, `PHASE-34-D-A1`): `listed_ids` reads every declaration. A report in prose or
in a verification item counts only for a declared id (`keep_reports`): a screen code
(`Dashboard (S-06)`), another phase's decision (`DEC-041`), a ticket, a form's name
(`the RCF-1 form`) or a standard (`ISO-8601`) in a status sentence stays text.

Id styles read in prose: `REQ-01`, `AUTH-02`, `L9I-01`, `FR-GATE-A1-02`, `R1`, dotted `R1.1`, and
any declared id written whole; ranges `R1.1–R1.4`, `REQ-01—REQ-03`, `FX-01..03` and
`FX-01..FX-03` keep their literal and add their members; `AUTH-01 through AUTH-06` adds its
members. In prose, standards and algorithms (`SHA-256`, `UTF-8`, `ISO-8601`) and bare
letter+digit words (`S3`, `ES2022`) are never ids.
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
EDGE_AFTER = r"(?![\w\-]|\.\w)"  # `M7` is no id inside `M7.PnE`, nor `AUTH-01` in `AUTH-01.md`
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
# a requirements section's heading, in English or translated (`## Requirements Covered`,
# `## Abgedeckte Anforderungen`, `## 충족된 요구사항`); not one that names the REQUIREMENTS.md file
_REQ_HEADING = re.compile(
    r"^#{2,4}\s+.*?(?:\brequirements?\b(?!\.md)|\brequisit[oi]s?\b|\bexigences?\b|"
    r"\banforderungen\b|\bkrav\b|\bвымоги\b|\bтребовани\w*|\bvereisten\b|\bwymagania\b|"
    r"需求|要件|要求|요구\s?사항|yêu cầu)",
    re.IGNORECASE,
)
_VERIFY_HEADING = re.compile(r"^#{2,4}\s+(?:.*\b)?(?:verification|verified)\b", re.IGNORECASE)
_REQ_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)*(?:\*\*)?Requirements?(?:\*\*)?\s*:\s*(?:\*\*)?\s*:?\s*(.*)$",
    re.IGNORECASE,
)
_FM_REQ_KEY = re.compile(r"^(requirements?(?:[-_ ]?[a-z][a-z_ -]*)?)\s*:(.*)$", re.IGNORECASE)
_PARENS = re.compile(r"\([^()]*\)")
_YAML_COMMENT = re.compile(r"(?:^|\s)#.*$")
# status words, in English and in the languages summaries are written in (a summary in French
# reports `L'exigence AUTH-01 est remplie`, one in Korean `AUTH-01 충족`); scripts without spaces
# between words are matched without word edges
_DONE_WORDS = (
    r"satisf(?:y|ies|ied|ying)|complet(?:e|es|ed|ing)|clos(?:e|es|ed|ing)|cover(?:s|ed|ing)?|"
    r"implement(?:s|ed|ing)?|address(?:es|ed|ing)?|fulfil+(?:s|ed|ing)?|deliver(?:s|ed|ing)?|"
    r"meets?|met|pass(?:es|ed)?|verified|done|"
    r"cierra|cumplid[oa]s?|satisfech[oa]s?|completad[oa]s?|resuelt[oa]s?|cubiert[oa]s?|"
    r"implementad[oa]s?|atendid[oa]s?|cumprid[oa]s?|conclu[ií]d[oa]s?|fecha(?=\s+\S*[A-Z0-9])|"
    r"cl[ôo]t|satisfaite?s?|remplie?s?|r[ée]alis[ée]e?s?|termin[ée]e?s?|impl[ée]ment[ée]e?s?|"
    r"couverte?s?|erf[üu]llt|erledigt|umgesetzt|abgeschlossen|implementiert|abgedeckt|"
    r"st[äa]nger|uppfyll[td]|klart|genomf[öo]rt|закрыва\w*|выполнен\w*|реализован\w*|"
    r"закрыт\w*|hoàn tất|hoàn thành|đáp ứng"
)
_DONE_UNSPACED = r"完成|满足|実装|完了|満たし|達成|충족|완료|구현|实现"
_STATUS_WORD = re.compile(rf"\b(?:{_DONE_WORDS})\b|{_DONE_UNSPACED}", re.IGNORECASE)
_NOT_YET = (
    r"aún no|todavía no|pas encore|noch nicht|ännu inte|ещё не|еще не|ainda não|chưa|"
    r"sigue abiert[oa]|reste ouverte?|bleibt offen|fortfarande öppe[tn]|остаётся открыт\w*|"
    r"continua em aberto|vẫn còn mở"
)
_NOT_YET_UNSPACED = r"未完成|未完了|仍未|まだ|아직|열려"
_NEGATED = re.compile(
    r"\b(?:not|never|no longer|isn't|aren't|wasn't|won't|doesn't|don't|without|nor)\b"
    r"(?:\s+\w+){0,3}?\s+(?:yet\s+)?(?:satisf|complet|clos|cover|implement|address|fulfil|"
    r"deliver|meet|met|pass|verif|done)|\b(?:is|are|was|were)\s+not\b|"
    rf"\b(?:{_NOT_YET})\b|{_NOT_YET_UNSPACED}",
    re.IGNORECASE,
)
_PARTIAL_WORDS = (
    r"\b(?:partial\w*|a medias|parcial\w*|partiel\w*|teilweise|delvis|частичн\w*|một phần)\b|"
    r"部分|一部|일부"
)
_SIGNAL = re.compile(
    rf"{_STATUS_WORD.pattern}|{_NEGATED.pattern}|\b(?:deferred|pending|fail\w*)\b|"
    rf"{_PARTIAL_WORDS}",
    re.IGNORECASE,
)
_CLAUSE = re.compile(r",\s+(?:and|but|while|whereas)\s+|\s+but\s+")
_PART_OF = re.compile(r"\b(?:half|part|portion|parts)\s+of\s+(?:spec\s+|requirement\s+)?$", re.I)
_OPEN = re.compile(
    r"\b(?:deferred|postponed|pending|not yet|out of scope|not started|remaining|open)\b", re.I
)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|(?<=[。！？；])\s*|\s+[—–]\s+")  # CJK stops need no space
_MAX_RANGE = 50

Verdict = Literal["pass", "partial", "fail", "not verified"]
# the sources that declare an id a requirement of the phase (prose and verification items only
# report on an id declared somewhere)
DECLARING = frozenset({"frontmatter", "section", "line"})


@dataclass(frozen=True)
class Report:
    """One place a summary names a requirement id, and the verdict that place states."""

    id: str
    source: str  # "frontmatter" | "section" | "line" (DECLARING) | "verification" | "prose"
    text: str
    stated: Verdict

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
    if re.search(_PARTIAL_WORDS, text, re.IGNORECASE):
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


def _ids(text: str, single: re.Pattern[str], *, keep_all: bool = False) -> list[str]:
    found: list[str] = []
    for match in RANGE_RE.finditer(text):
        members = expand_range(match.group(1), match.group(2) or match.group(3))
        if members and single.fullmatch(match.group(1)):  # prose: `Q1..Q5` is no range of ids
            found += [match.group(0), *members]
    for match in THROUGH_RE.finditer(text):
        if single.fullmatch(match.group(1)) and single.fullmatch(match.group(2)):
            found += expand_range(match.group(1), match.group(2))
    found += [m.group(1) for m in single.finditer(text)]
    return list(dict.fromkeys(i for i in found if keep_all or not NOT_REQUIREMENT.match(i)))


def ids_in_line(text: str, *, keep_all: bool = False) -> list[str]:
    """Requirement ids of the usual shapes in a line: ranges as written plus their members.
    A parenthetical is a note (`R1, R2 (was R7)`), not a source. `keep_all`: a declaration
    (decision-shaped ids such as `D-04` are requirements there)."""
    return _ids(_PARENS.sub(" ", text), ID_RE, keep_all=keep_all)


def ids_in_prose(text: str, *, keep_all: bool = False) -> list[str]:
    """Requirement ids in a prose sentence (stricter shapes, see the module docstring)."""
    return [i for i in _ids(text, _PROSE_ID_RE, keep_all=keep_all) if not _NOT_IN_PROSE.match(i)]


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
                Report(i, "frontmatter", f"{key}: {value}", stated) for i in listed_ids(value)
            ]
    return found


# one word that can be an id in a declared list (the key says it is one): letters, digits and
# `-_.`, with an upper-case letter or a digit, and a digit or an inner separator (`AUTH-01`,
# `UX-STATES`, `R1`, `FR1.1`, `REQ-sizes-five`, `SYNC_05`, `04.2-K1`, `D-04`); not a plain word
ID_LIKE = re.compile(
    r"(?=\S*[A-Za-z])(?=\S*[A-Z0-9])(?=\S*(?:\d|[A-Za-z0-9][-_.][A-Za-z0-9]))[A-Za-z0-9][\w.\-–]*"
)
# where ids sit among words (a requirement line or section, the ROADMAP, REQUIREMENTS.md), an id
# also opens with an upper-case letter or a digit, and without a digit its first letters are
# upper case: `UX-STATES`, `REQ-sizes-five`, but never `Cross-Platform`, `v1`, `user.getName` or
# a file such as `REQUIREMENTS.md`
ID_SHAPED = re.compile(
    r"(?=[A-Z0-9])(?!\S*\.[a-z]{1,5}$)(?:(?=\S*\d)|[A-Z]+[-_.])(?=\S*[A-Za-z])[A-Za-z0-9][\w.\-–]*"
)
_NONE_WORDS = frozenset({"none", "n/a", "na", "tbd", "-", "—", "[]", "null", "nothing"})


def listed_ids(value: str, *, among_words: bool = False, anywhere: bool = False) -> list[str]:
    """The ids a declared requirements list names, taken whole whatever their shape: each
    comma-separated item's first word when it is id-like (`UX-STATES`, `D-04`, `REQ-sizes-five`,
    `PHASE-34-D-A1`; a note after it such as `AUTH-01: login` or `AUTH-01 (partial)` is no id),
    plus ranges and their members (`R1.1–R1.4`, `FX-01..03`, `AUTH-01 through AUTH-03`). Used
    for every declaration: frontmatter lists, requirement lines and sections, the ROADMAP's
    phase entry, REQUIREMENTS.md definitions."""
    found: list[str] = []
    for item in re.split(r",|;|\s+/\s+", _PARENS.sub(" ", value)):
        words = item.strip().strip("[]").split()
        while words and not re.search(r"\w", words[0]):
            words.pop(0)  # a status mark before the id (`✓ AUTH-01`, `- [x]`, `→`)
        if not words:
            continue
        word = words[0].strip("\"'`*").rstrip(":.").strip("\"'`*")
        # a declared list's item is taken whole; on a requirements line, only when it is one
        # word (`Self-sovereign recovery infrastructure` is prose: there an id must look like one)
        whole = not among_words and (not anywhere or len(words) == 1)
        shape = ID_LIKE if whole else ID_SHAPED
        if anywhere:  # a requirements line: every id-shaped word (`Infrastructure for MFA-02`)
            found += [w for w in (t.strip("\"'`*:.") for t in words) if ID_SHAPED.fullmatch(w)]
        if word.lower() in _NONE_WORDS or not shape.fullmatch(word):
            continue  # an item that does not open with an id is prose (`Verified by L25`)
        found += [word, *range_members(word)]  # the item's id, whole, whatever its shape
        # a range in words and more ids in the item (`AUTH-01 through AUTH-03`, `R1 and R2`),
        # never a part of the item's own id (`M7` of `M7.PnE`)
        found += [i for i in ids_in_line(item, keep_all=True) if i == word or i not in word]
    return list(dict.fromkeys(found))


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


def _prose_reports(line: str, declared: frozenset[str]) -> list[Report]:
    """The ids a status sentence reports: the usual shapes (decision-shaped ones too: whether
    an id counts is keep_reports' to say), and any declared id written whole, whatever its
    shape (`UX-EVENT done`, `closes REQ-sizes-five`)."""
    found: list[Report] = []
    for sentence in _SENTENCE.split(line):
        if not _STATUS_WORD.search(sentence):
            continue
        text = " ".join(sentence.replace("**", "").replace("`", "").split()).rstrip(" ;,")
        for clause in _CLAUSE.split(text):
            stated = stated_verdict(clause if _SIGNAL.search(clause) else text)
            ids = ids_in_prose(clause, keep_all=True)
            ids += [i for i in declared if i not in ids and ids_present(i, clause)]
            found += [Report(i, "prose", text, _qualified(i, clause, stated)) for i in ids]
    return found


def keep_reports(reports: Iterable[Report], declared: Iterable[str]) -> list[Report]:
    """The reports that count: every declaration (a requirements list, line or section), and a
    report in prose or a verification item only for an id declared somewhere (module docstring):
    a screen code (`Dashboard (S-06)`), another phase's decision (`DEC-041`) or a ticket in a
    status sentence never becomes a requirement."""
    found = list(reports)
    known = set(declared) | {r.id for r in found if r.source in DECLARING}
    known |= {m for rid in known for m in range_members(rid)}
    return [r for r in found if r.source in DECLARING or r.id in known]


def _qualified(rid: str, clause: str, stated: Verdict) -> Verdict:
    """`the logging part of R2.9`: a part of a requirement is a partial report of it."""
    before = clause[: clause.find(rid)] if rid in clause else ""
    return "partial" if stated == "pass" and _PART_OF.search(before) else stated


def requirement_reports(text: str, declared: Iterable[str] = ()) -> list[Report]:
    """Every place a summary names a requirement id in a requirement source or status line
    (`declared`: ids declared elsewhere, found in status sentences whatever their shape)."""
    known = frozenset(declared)
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
                      for i in listed_ids(match.group(1), anywhere=True)]  # fmt: skip
            continue
        if in_section:
            head, note = _section_item(line)
            ids = listed_ids(head, among_words=True) if _is_item(line) else []
            if ids:
                stated = stated_verdict(note) if note else stated_verdict(title)
                found += [Report(i, "section", _one_line(line), stated) for i in ids]
                continue
        if in_verify and (verified := _verified_item(line)):
            found += verified
            continue
        found += _prose_reports(line, known)
    return found


def _verified_item(line: str) -> list[Report]:
    """A verification section's item or row that starts with an id and says how it went (a
    report, not a declaration: it counts for a declared id only)."""
    head, note = _section_item(line)
    ids = listed_ids(head, among_words=True)
    if not ids or not head.strip().startswith(ids[0]) or not note.strip():
        return []
    return [Report(i, "verification", _one_line(line), stated_verdict(note)) for i in ids]


def _is_item(line: str) -> bool:
    """A requirements section's bullet, numbered item or table row (not a paragraph)."""
    return re.match(r"^\s*(?:[-*+]|\d+[.)]|\|)", line) is not None


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
