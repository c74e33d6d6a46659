"""An independent oracle for a compacted phase summary (`{NN}-COMPACTED.md`).

Written apart from `legion_llm` (it imports only the standard library and never reads the
product's code), with its own small, recall-first rules: the way a reviewer checks a compacted
summary by eye against the plan summaries it was made from. The product's own checker and this
one must agree; a disagreement is a bug in one of them.

Public functions: `plan_summaries`, `declared_ids`, `listed_paths` and `check` (one line per
violation; an empty list means the output satisfies every rule). Every file is read as UTF-8
with errors replaced, CRLF and lone CR become LF, a leading BOM is dropped; odd input (no
frontmatter, frontmatter that is not YAML, empty files, binary junk) never raises.

Rules
-----
1. Plan summaries. A file directly in the phase folder is a plan summary when its name ends in
   `SUMMARY.md` (any case) and what comes before is only an optional letters prefix (`CTRX-`)
   then one or more plan numbers (digits, dots, one optional letter: `03`, `06.1`, `01a`) joined
   by dashes or underscores: `03-01-SUMMARY.md`, `16-SUMMARY.md`, `01-SUMMARY.md`,
   `06.1-02a-SUMMARY.md`, `CTRX-23-01-SUMMARY.md`. Never `PLANNING-SUMMARY.md`,
   `08-CLOSEOUT-SUMMARY.md`, `02-PHASE-SUMMARY.md`, `TEST_SUMMARY.md` or `*-COMPACTED.md`.
   Violation: the output's `original_summaries` differs from that set (one line per name missing
   and per name that is not a plan summary).
2. Declared requirement ids (recall-first, each taken whole whatever its shape):
   a. items of every frontmatter key (at any depth) whose name starts with `requirement` (any case,
      `-`/`_`) in the plan summaries and in the phase's PLAN files (`03-01-PLAN.md`,
      `03-PLAN-01.md`): flow `[a, b]` or block `- a` lists, also lists under sub-keys; an item's id
      is its first token without quotes, backticks, `**` and a trailing `:`/`,`/`;`/`.`; trailing
      `# comments` are dropped; `[]`, `none`, `n/a`, `tbd`, `-`, `all` and tokens with no letter
      (counts such as `3`) are skipped. A plain scalar value (not a list) is split on commas and
      spaces and keeps only id-shaped tokens (see below).
   b. in a plan summary's body, lines `**Requirements:** A-01, B-02` / `Requirements: ...` (also
      `**Requirement**:`, `Requirements delivered:`, in a list item or a quote): the id-shaped
      tokens of the value (up to three words may follow `Requirements`, not `REQUIREMENTS.md`),
      split on commas, semicolons and spaces; when the value is empty, the
      id-shaped tokens of the list items right below it (`- EMP-01, EMP-02`).
   c. in a plan summary's body, under a heading (level 2 or deeper) holding the word
      `requirement(s)` (not `REQUIREMENTS.md`) or a translation of it (requisitos, exigences,
      Anforderungen, krav, требования, 需求, 要件, 요구사항, yêu cầu ...):
      the head token (after list marker, checkbox, check marks, `**`) of every list item and the
      first cell of every table row (header rows excluded), when id-shaped.
   d. the ROADMAP.md entry of the phase: every heading `Phase N` (`### Phase 3: Name`,
      `## Phase 03 —`) whose N equals the phase number (compared numerically per dotted part, so
      `03` = `3`, `06.1` = `6.1`), down to the next heading of the same or a higher level; its
      Requirements lines as in (b). Several entries with the same number are all read.
   e. the rows of a REQUIREMENTS.md table that has a column whose header holds `phase`, whose
      phase cell names this phase (`Phase 3`, `3 — Name`, `Phase 03`): the id-shaped first cell.
      A definition line alone (`- [ ] **AUTH-07**: ...`) declares nothing for a phase.
   Id-shaped (for b-e, where prose sits beside ids): one token of ASCII letters, digits, `.`, `_`,
   `-`, `–`, starting with an upper-case letter or a digit, holding a letter; a token starting
   with a digit also holds `-` or `_` (`04.2-K1`); a token with no digit holds `-` or `_` and
   its first run of letters is upper case (`UX-STATES`, `REQ-sizes-five`). So `R1`, `FR1.1`,
   `SYNC_05`, `PHASE-34-D-A1` count; `All`, `None`, `TBD`, `UI`, `Real-time`, `42/42` do not.
   `A through B` (also `thru`, `to`, or a spaced dash) declares A and B; the ids between them
   are accepted in verdict lines but not required.
3. Verdict lines: under the `## Verification` heading, lines `- <ID>: <VERDICT>` optionally
   followed by ` — evidence`; VERDICT is PASS, FAIL, PARTIAL or NOT VERIFIED (upper case); ID is
   one run of non-space characters (surrounding `**` or backticks dropped), never `Plan ...`
   (plan check lines are not verdicts). Violations: a declared id with no verdict line; an id
   with more than one verdict line; a verdict line whose id is not declared; an id in
   `requirements_satisfied` without a PASS verdict line, or not declared. A range literal
   (`R1.1–R1.4`, `FX-01..03`, en/em dash or `..`) declared as such is satisfied by a line for the
   literal or by lines for every member (members are accepted as declared; for
   `requirements_satisfied` the literal needs a PASS line or every member a PASS line).
4. Over-claiming: a PASS, FAIL or PARTIAL verdict for an id that no plan summary of the phase
   mentions as a whole word (nor mentions a range literal or `A through B` span holding it) is a
   violation: such an id (declared only by the ROADMAP or a PLAN) must be NOT VERIFIED.
5. Listed files of the plan summaries (recall-first, taken whole as written):
   a. frontmatter: every item under a key (at any depth) whose words include `file`/`files`
      (`key-files`, `key_files`, `keyFiles`, `files_modified`, `files-created`...), with or
      without sub-lists (`created:`, `modified:`, `deleted:`...), flow or block lists; a top-level
      `created:`/`modified:`/`deleted:` list counts too (an outdented key-files sub-list). The path
      of an entry is its backticked span when the entry starts with one, else the text before the
      first note (` — `, ` – `, ` -- `, ` - `, ` (`, `: `, ` #`), without quotes; `- path: x`
      items give x. Counts (`files_modified: 3`), `[]` and `none` give nothing; a plain scalar
      value counts only when it looks like a path.
   b. body: list items (nested ones too, unless an enclosing item already gave a path: those
      are notes) and table first cells (header rows excluded) under a heading of level 2 or deeper
      whose words (split on spaces and `/`) include a word for files: files, file, artifacts,
      artifact, key-files, archivos, archivo, ficheros, fichero, ficheiros, fichiers, fichier,
      dateien, datei, arquivos, arquivo, bestanden, bestand, pliki, plik, файлы, файл, filer,
      tệp, or the text holds 文件, 檔案, ファイル, 파일. The path is the first thing in reading order
      that looks like a path: a backticked span, or a whitespace token (outside backticks) with
      its quotes, `**`, and sentence punctuation removed.
   c. body: on a line starting (after list marker and `**`) with Created / Modified / Added /
      Updated / Deleted and `:`, the first backticked span that looks like a path.
   A move `old → new` (or `->`), the second path right after the arrow, lists both.
   Looks like a path: no `://`; a backticked span with a `/`; a bare token whose last part has an
   extension, or that ends with `/`, or holds two `/`; else one word with an extension or a
   leading dot (`go.sum`, `.env`, `*.json`, `{id}.pdf`), not a version or number (`v1.2`,
   `3.5s`), not `e.g`/`i.e`; a backticked bare `Makefile`-like name or `LICENSE`/`README`.
   A bold item head or a whole table cell may be one path whose names hold spaces
   (`**assets/App Icon.png**`): a `/`, every name one to three words, the last with an extension.
   Fenced code blocks are never read; `# Title` (level 1) headings never open a files section.
6. Files kept. Sections layout: every listed path is the whole first cell (backticks unwrapped;
   a move cell `a → b` holds a and b) of exactly one row of the `## Files...` table, and no two
   rows share a path. Per-plan layout (`layout: per-plan` in the frontmatter): every listed path
   occurs in the output's body as a whole path: not only inside a longer path (no path
   character right before it, and right after it neither a path character nor `.` followed by a
   letter or digit). One violation per missing or duplicated path.
7. Nothing invented in the Files table: each row's path (each side of a move) occurs verbatim in
   at least one plan summary or ROADMAP.md; and no row's path is a strict suffix, at a `/`
   boundary, of another row's path (`tests/x.py` beside `backend/tests/x.py` is noise), unless
   that shorter path is itself a listed path: rule 6 gives every listed path its own row, and a
   summary that lists both `package.json` and `packages/cli/package.json` names two files.
8. Length: the output has at most as many UTF-8 bytes as the plan summaries together (both
   counted after CRLF -> LF). Bytes, not characters: a model's cost is its tokens, and a
   summary in Chinese or Russian costs about as many tokens as its bytes suggest, not its
   characters (an ASCII compaction of it is shorter in tokens though longer in characters).

Choices where the rules left room (the reading a careful reviewer would take)
-----------------------------------------------------------------------------
- The phase number is the caller's (`03`, `3`, `6.1`). The ROADMAP and REQUIREMENTS read are
  the phase's milestone's: `milestones/v1.0-ROADMAP.md` / `-REQUIREMENTS.md` beside a
  `milestones/v1.0-phases/` folder, a ROADMAP.md in a folder between the phase and
  `planning_dir`, else `planning_dir`'s own. A folder under `archive/` or `milestones/`, or one
  beside a folder of the same number, reads the ROADMAP only through an entry whose title shares
  the most words with the folder's name, at least half of them (phase numbers restart per
  milestone); it skips an entry whose title fits a rival folder at least as well: a twin beside
  it and, for a shipped folder reading the current ROADMAP, a current `phases/` folder of its
  number. A shipped folder reads the current
  REQUIREMENTS.md's traceability only when no other folder carries its number.
- Rule 1 compares sets: a name listed twice is not a violation.
- Rule 2: a frontmatter list item is taken whole (no shape test), a bare scalar is not (it is
  often prose such as `See ROADMAP`); `- id: X` items give X; counts (`3`) are not ids. A prose
  mention of an id declares nothing.
- Rule 3: a verdict line's ID may be wrapped in `**` or backticks, the verdict word in `**`;
  the verdict word must be upper case. `Requirements:` lines in the output's body are not read.
- Rule 5b takes the first path-like item in reading order, span or bare token, rather than
  "first backticked span, else token": ``- src/a.ts — reads `config.json` `` lists src/a.ts. A
  backticked span must look like a path too: ``**Commit:** `5bb2b79` `` and ``Added: `Foo` enum``
  list nothing. A nested list item under an item that gave a path is a note about that file.
  Heading words are split on spaces and `/` only, so `Single-File Helper` is no files heading
  (`key-files` is). A bullet naming several paths lists the first one only.
- Rule 6: the Files table is every table in a level-2 section whose title starts with `Files`;
  only one pair of backticks is unwrapped (`**path**` is not a bare path). The per-plan body is
  the output after its frontmatter, searched as plain text.
- Rule 7: "verbatim" is a plain substring test against the raw summaries and ROADMAP.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

VERDICTS = ("PASS", "FAIL", "PARTIAL", "NOT VERIFIED")
CLAIMING_VERDICTS = frozenset({"PASS", "FAIL", "PARTIAL"})

# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF; a leading byte-order mark is dropped."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path) -> str:
    """A file's text as UTF-8 with errors replaced; empty when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return normalise_newlines(data.decode("utf-8", errors="replace"))


def split_frontmatter(text: str) -> tuple[list[str], list[str]]:
    """(frontmatter lines, body lines); no frontmatter unless `---` opens and closes it."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return [], lines
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return lines[1:index], lines[index + 1 :]
    return [], lines


FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def blank_fenced_code(lines: list[str]) -> list[str]:
    """The lines with every fenced code block (fences included) replaced by empty lines."""
    result: list[str] = []
    open_fence = ""
    for line in lines:
        match = FENCE.match(line)
        if not open_fence:
            if match:
                open_fence = match.group(1)
                result.append("")
            else:
                result.append(line)
            continue
        closes = match and match.group(1)[0] == open_fence[0]
        if closes and match and len(match.group(1)) >= len(open_fence):
            open_fence = ""
        result.append("")
    return result


def body_of(text: str) -> list[str]:
    """The body lines of a markdown file, fenced code blanked out."""
    return blank_fenced_code(split_frontmatter(text)[1])


# ---------------------------------------------------------------------------------------------
# Markdown structure: headings, sections, tables, list items
# ---------------------------------------------------------------------------------------------

HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
BULLET = re.compile(r"^(\s*)(?:>\s*)*(?:[-*+]|\d+[.)])\s+(.*)$")
CHECKBOX = re.compile(r"^\[[ xX~-]\]\s*")


@dataclass(frozen=True)
class Section:
    """A heading and the lines under it, down to the next heading of the same or higher level."""

    level: int
    title: str
    lines: list[str]


def sections(lines: list[str]) -> list[Section]:
    """Every heading's section, nested sections included in their parents."""
    heads = [
        (index, len(match.group(1)), re.sub(r"\s#+$", "", match.group(2).rstrip()))
        for index, line in enumerate(lines)
        if (match := HEADING.match(line))
    ]
    result = []
    for position, (index, level, title) in enumerate(heads):
        later = (start for start, other, _ in heads[position + 1 :] if other <= level)
        end = next(later, len(lines))
        result.append(Section(level, title.strip(), lines[index + 1 : end]))
    return result


def is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|")


def split_cells(line: str) -> list[str]:
    """A table row's cells, `\\|` unescaped."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", body)]


def is_separator_row(cells: list[str]) -> bool:
    return bool(cells) and all(re.fullmatch(r":?-{1,}:?", cell.strip()) for cell in cells)


def is_header_row(lines: list[str], index: int) -> bool:
    """A table row directly followed by a separator row."""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return is_table_line(following) and is_separator_row(split_cells(following))


def table_first_cells(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line index, first cell) of every data row of every table in the lines."""
    for index, line in enumerate(lines):
        if not is_table_line(line):
            continue
        cells = split_cells(line)
        if is_separator_row(cells) or is_header_row(lines, index):
            continue
        yield index, cells[0]


# ---------------------------------------------------------------------------------------------
# YAML-ish frontmatter, read line by line (never trusted to be valid YAML)
# ---------------------------------------------------------------------------------------------

KEY_LINE = re.compile(r"""^["']?([A-Za-z_][A-Za-z0-9_ \-]{0,80}?)["']?[ \t]{0,8}:(?:\s+(.*)|$)""")


def strip_comment(text: str) -> str:
    """Text without a trailing `# comment` (a `#` after whitespace, outside quotes)."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'" and (index == 0 or text[index - 1] in " \t[,:"):
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text


def unwrap_quotes(text: str) -> str:
    """`"a (b)" c` -> `a (b) c`: a leading quoted part loses its quotes."""
    text = text.strip()
    if len(text) >= 2 and text[0] in "\"'":
        end = text.find(text[0], 1)
        if end > 0:
            return (text[1:end] + text[end + 1 :]).strip()
        return text[1:].strip()
    return text


def split_key(text: str) -> tuple[str, str] | None:
    """(key, value) of a `key: value` line, or None."""
    match = KEY_LINE.match(text)
    if not match:
        return None
    return match.group(1).strip(), strip_comment(match.group(2) or "").strip()


def flow_items(value: str) -> list[str]:
    """Items of a flow list `[a, "b, c", d]` (commas inside quotes or brackets kept)."""
    inner = value.strip()
    inner = inner[1:] if inner.startswith("[") else inner
    inner = inner[:-1] if inner.endswith("]") else inner
    items, current, quote, depth = [], "", "", 0
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'" and not current.strip():
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append(current.strip())
            current = ""
            continue
        current += char
    items.append(current.strip())
    return [item for item in items if item]


def join_flow_continuations(lines: list[str]) -> list[str]:
    """Lines where a flow list opened with `[` and left open is joined with the next lines."""
    joined: list[str] = []
    pending = ""
    for line in lines:
        if pending:
            pending += " " + line.strip()
        else:
            split = split_key(line.strip().lstrip("- ").strip())
            opens = split is not None and split[1].startswith("[")
            if not opens:
                joined.append(line)
                continue
            pending = line
        if pending.count("[") <= pending.count("]"):
            joined.append(pending)
            pending = ""
    if pending:
        joined.append(pending)
    return joined


@dataclass(frozen=True)
class Entry:
    """One value found under a selected frontmatter key."""

    text: str
    from_list: bool  # a list item (block or flow), not a bare scalar value
    key: str  # the nearest key above it (the selected key itself or a sub-key)


DICT_VALUE_KEYS = frozenset({"id", "req", "requirement", "path", "file", "name", "from", "to"})


def value_entries(value: str, key: str) -> list[Entry]:
    """Entries of one `key: value` value: a flow list's items or a bare scalar."""
    if not value or value in ("|", ">", "|-", ">-", "|+", ">+"):
        return []
    if value.startswith("["):
        return [Entry(item, True, key) for item in flow_items(value)]
    return [Entry(value, False, key)]


def list_item_entries(item: str, key: str) -> list[Entry]:
    """Entries of one `- item` line inside a selected block."""
    split = split_key(item)
    if split is not None and split[0].lower() in DICT_VALUE_KEYS:
        return [Entry(split[1], True, split[0])] if split[1] else []
    if split is not None and split[1].startswith("["):
        return value_entries(split[1], split[0])
    if split is not None and not split[1] and split[0].islower():
        return []  # `- created:` opening a nested list: its items come next
    return [Entry(item, True, key)]


def frontmatter_entries(lines: list[str], selects: Callable[[str, int], bool]) -> list[Entry]:
    """Every value under the frontmatter keys that `selects(key, indent)` accepts."""
    entries: list[Entry] = []
    block_indent: int | None = None
    block_key = ""
    for raw in join_flow_continuations(lines):
        line = raw.expandtabs(2).rstrip()
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        inside = block_indent is not None and (
            indent > block_indent or (indent == block_indent and text.startswith("-"))
        )
        if inside:
            entries.extend(block_line_entries(text, block_key))
            continue
        block_indent = None
        split = split_key(text)
        if split is not None and selects(split[0], indent):
            block_indent, block_key = indent, split[0]
            entries.extend(value_entries(split[1], split[0]))
    return entries


def block_line_entries(text: str, block_key: str) -> list[Entry]:
    """Entries of one line inside a selected key's block."""
    if text.startswith("-"):
        item = text[1:].strip()
        return list_item_entries(strip_comment(item), block_key) if item else []
    split = split_key(text)
    return value_entries(split[1], split[0]) if split is not None else []


# ---------------------------------------------------------------------------------------------
# Rule 1: plan summaries (and PLAN files)
# ---------------------------------------------------------------------------------------------

PLAN_NUMBER = r"\d+(?:\.\d+)*[A-Za-z]?"
NUMBERED_STEM = rf"(?:[A-Za-z]+[-_])?{PLAN_NUMBER}(?:[-_]{PLAN_NUMBER})*"
SUMMARY_NAME = re.compile(rf"{NUMBERED_STEM}[-_]SUMMARY\.md", re.IGNORECASE)
PLAN_NAME = re.compile(rf"{NUMBERED_STEM}[-_]PLAN(?:[-_]{PLAN_NUMBER})?\.md", re.IGNORECASE)


def is_plan_summary_name(name: str) -> bool:
    return bool(SUMMARY_NAME.fullmatch(name))


def is_plan_name(name: str) -> bool:
    return bool(PLAN_NAME.fullmatch(name))


def files_in(folder: Path, accepts: Callable[[str], bool]) -> list[Path]:
    """Files directly in the folder whose names `accepts`, sorted by name."""
    try:
        children = list(folder.iterdir())
    except OSError:
        return []
    return sorted((p for p in children if accepts(p.name) and p.is_file()), key=lambda p: p.name)


def plan_summaries(phase_dir: Path) -> list[Path]:
    """The plan summaries of a phase folder (rule 1), sorted by name."""
    return files_in(Path(phase_dir), is_plan_summary_name)


def plan_files(phase_dir: Path) -> list[Path]:
    """The PLAN files of a phase folder (`03-01-PLAN.md`, `03-PLAN-01.md`)."""
    return files_in(Path(phase_dir), is_plan_name)


# ---------------------------------------------------------------------------------------------
# Requirement ids (rule 2)
# ---------------------------------------------------------------------------------------------

STOP_WORDS = frozenset({"", "[]", "none", "n/a", "na", "tbd", "tba", "-", "—", "null", "all"})
ID_TOKEN = re.compile(r"[A-Z0-9][A-Za-z0-9._\-–—]*")
EDGE_JUNK = "`\"'“”‘’*()[]{}<>"
RANGE_DASH = re.compile(r"–|—|\.\.\.?")
SPAN_WORDS = frozenset({"through", "thru", "to", "-", "–", "—", ".."})


def clean_token(token: str) -> str:
    """A token without `**`, surrounding quotes/backticks/brackets and trailing `:,;.`."""
    text = token.replace("**", "").strip()
    previous = None
    while text != previous:
        previous = text
        text = text.strip(EDGE_JUNK).rstrip(":,;.").strip()
    return text


def looks_like_id(token: str) -> bool:
    """Id-shaped (rule 2): `AUTH-01`, `R1.2`, `UX-STATES`, `04.2-K1`; not `All`, `UI`, `42/42`."""
    if len(token) > 80 or not ID_TOKEN.fullmatch(token) or token.lower() in STOP_WORDS:
        return False
    if not re.search(r"[A-Za-z]", token):
        return False
    has_joiner = bool(re.search(r"[-_]", token))
    if token[0].isdigit():
        return has_joiner
    if re.search(r"\d", token):
        return True
    first_letters = re.match(r"[A-Za-z]+", token)
    return has_joiner and first_letters is not None and first_letters.group(0).isupper()


def range_members(literal: str) -> list[str]:
    """Members of a range literal: `R1.1–R1.4` -> R1.1..R1.4, `FX-01..03` -> FX-01..FX-03."""
    parts = RANGE_DASH.split(literal.strip())
    if len(parts) != 2 or len(literal) > 120:
        return []
    left = re.fullmatch(r"(.*?)(\d+)", parts[0].strip())
    right = re.fullmatch(r"(.*?)(\d+)", parts[1].strip())
    if not left or not right or (right.group(1) and right.group(1) != left.group(1)):
        return []
    first, last = int(left.group(2)), int(right.group(2))
    if not first < last <= first + 500:
        return []
    width = len(left.group(2))
    return [f"{left.group(1)}{number:0{width}d}" for number in range(first, last + 1)]


def mention_pattern(identifier: str) -> re.Pattern[str]:
    """The identifier as a whole word (`R1` is not inside `R1.2`, `AUTH-01` not in `XAUTH-01`)."""
    return re.compile(r"(?<![\w-])(?<!\w\.)" + re.escape(identifier) + r"(?![\w-])(?!\.\w)")


def mentioned(identifier: str, texts: Iterable[str]) -> bool:
    pattern = mention_pattern(identifier)
    return any(pattern.search(text) for text in texts)


@dataclass
class Declaration:
    """Declared ids, plus the members of range literals and `A through B` spans."""

    ids: set[str] = field(default_factory=set)
    ranges: dict[str, list[str]] = field(default_factory=dict)  # literal or span -> members

    def add_tokens(self, tokens: list[str]) -> None:
        """Add the id-shaped tokens of a requirements value; spans `A through B` are noted."""
        cleaned = [clean_token(token) for token in tokens]
        for index, token in enumerate(cleaned):
            if looks_like_id(token):
                self.add(token)
            if token.lower() in SPAN_WORDS and 0 < index < len(cleaned) - 1:
                self.add_span(cleaned[index - 1], tokens[index], cleaned[index + 1])

    def add(self, identifier: str) -> None:
        self.ids.add(identifier)
        members = range_members(identifier)
        if members:
            self.ranges[identifier] = members

    def add_span(self, first: str, word: str, last: str) -> None:
        if looks_like_id(first) and looks_like_id(last):
            members = range_members(f"{first}–{last}")
            if members:
                self.ranges[f"{first} {word} {last}"] = members

    def accepts(self, identifier: str) -> bool:
        """Declared, or a member of a declared range literal or span."""
        return identifier in self.ids or any(identifier in m for m in self.ranges.values())


def is_requirement_key(key: str, _indent: int) -> bool:
    return key.strip().lower().replace("_", "-").startswith("requirement")


def id_from_list_item(item: str) -> str | None:
    """A requirement list item's id: its first token, cleaned; None for `none`, counts..."""
    words = unwrap_quotes(strip_comment(item)).split()
    token = clean_token(words[0]) if words else ""
    if token.lower() in STOP_WORDS or not re.search(r"[^\W\d_]", token):
        return None
    return token


def add_frontmatter_requirements(declaration: Declaration, text: str) -> None:
    """Rule 2a: the requirement keys of one file's frontmatter."""
    for entry in frontmatter_entries(split_frontmatter(text)[0], is_requirement_key):
        if not entry.from_list:
            declaration.add_tokens(re.split(r"[,;\s]+", unwrap_quotes(entry.text)))
            continue
        identifier = id_from_list_item(entry.text)
        if identifier:
            declaration.add(identifier)


REQUIREMENTS_LINE = re.compile(
    r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\*\*|__)?requirements?((?:[ \t]+[^\W\d_]+){0,3})"
    r"(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$",
    re.IGNORECASE,
)


def head_token(text: str) -> str:
    """The first token of a list item or cell after marker, checkbox, check marks and `**`."""
    match = BULLET.match(text)
    text = match.group(2) if match else text.strip()
    text = CHECKBOX.sub("", text)
    text = re.sub(r"^[^\w`*\"'(]+", "", text)
    words = text.split()
    return clean_token(words[0]) if words else ""


def add_requirement_lines(declaration: Declaration, lines: list[str]) -> None:
    """Rules 2b/2d: ids on `Requirements: ...` lines (or in the list right below an empty one)."""
    for index, line in enumerate(lines):
        match = REQUIREMENTS_LINE.match(line)
        if not match:
            continue
        value = match.group(2).strip()
        if value:
            declaration.add_tokens(re.split(r"[,;\s]+", value))
            continue
        for below in lines[index + 1 :]:
            item = BULLET.match(below)
            if not item:
                break
            declaration.add_tokens(re.split(r"[,;\s]+", CHECKBOX.sub("", item.group(2))))


REQUIREMENT_HEADING = re.compile(
    r"\brequirements?\b(?!\.md)"
    r"|\b(?:requisitos|requisiti|exigences|anforderungen|krav|требования|vereisten|wymagania)\b"
    r"|需求|要件|요구사항|yêu cầu",
    re.IGNORECASE,
)


def add_requirement_sections(declaration: Declaration, lines: list[str]) -> None:
    """Rule 2c: head tokens of list items and first cells under `## Requirements...` headings."""
    for section in sections(lines):
        if section.level < 2 or not REQUIREMENT_HEADING.search(section.title):
            continue
        heads = [head_token(line) for line in section.lines if BULLET.match(line)]
        heads += [head_token(cell) for _, cell in table_first_cells(section.lines)]
        for token in heads:
            if looks_like_id(token):
                declaration.add(token)


ROADMAP_PHASE = re.compile(r"^(?:\*\*)?phase\s+(\d+(?:\.\d+)*[A-Za-z]?)\b", re.IGNORECASE)


def phase_key(number: str) -> tuple[object, ...]:
    """`03` -> (3,), `06.1` -> (6, 1), `2a` -> (2, 'a'): equal numbers compare equal."""
    match = re.fullmatch(r"(\d+(?:\.\d+)*)([A-Za-z]?)", str(number).strip())
    if not match:
        return (str(number).strip().lower(),)
    parts: list[object] = [int(part) for part in match.group(1).split(".")]
    if match.group(2):
        parts.append(match.group(2).lower())
    return tuple(parts)


def add_roadmap_entry(
    declaration: Declaration,
    roadmap: str,
    phase_number: str,
    name_words: set[str] | None = None,
    others: list[set[str]] | None = None,
) -> None:
    """Rule 2d: Requirements lines under every `Phase N` heading of this phase (`name_words`:
    only the entries whose titles share the most of them; `others`: the names of current
    folders of this number, whose entries they are when they fit them at least as well)."""
    wanted = phase_key(phase_number)
    entries = [s for s in sections(body_of(roadmap))
               if (m := ROADMAP_PHASE.match(s.title)) and phase_key(m.group(1)) == wanted]  # fmt: skip
    entries += checklist_entries(body_of(roadmap), wanted)
    if name_words is not None:  # the titles closest to the folder's name, sharing at least half
        titles = {id(s): name_words_of(re.sub(r"\([^()]*\)", " ", ROADMAP_PHASE.sub(
                      "", re.split(r"\s[—–-]\s", s.title)[0]))) for s in entries}  # fmt: skip

        def fit(title: set[str], name: set[str]) -> float:
            return len(title & name) / max(len(title), len(name), 1)

        entries = [s for s in entries if all(fit(titles[id(s)], other)
                   < fit(titles[id(s)], name_words) for other in others or [])]  # fmt: skip
        share = {id(s): fit(titles[id(s)], name_words) for s in entries}
        best = max(share.values(), default=0.0)
        entries = [s for s in entries if best >= 0.5 and share[id(s)] == best]
    for section in entries:
        add_requirement_lines(declaration, section.lines)


CHECKLIST_PHASE = re.compile(
    r"^[-*+]\s+\[[ xX]\]\s+(?:\*\*)?(phase\s+\d+(?:\.\d+)*[A-Za-z]?\b.*)$", re.IGNORECASE
)


def checklist_entries(lines: list[str], wanted: tuple[object, ...]) -> list[Section]:
    """`- [x] **Phase N: Name**` lines of this phase with their indented lines, as entries."""
    found = []
    for index, line in enumerate(lines):
        match = CHECKLIST_PHASE.match(line)
        number = ROADMAP_PHASE.match(match.group(1)) if match else None
        if not match or not number or phase_key(number.group(1)) != wanted:
            continue
        nested = []
        for below in lines[index + 1 :]:
            if below.strip() and below[:1] not in " \t":
                break
            nested.append(below.strip())
        if any(REQUIREMENTS_LINE.match(n) for n in nested):  # its title: before `**` or ` — `
            title = re.split(r"\*\*|\s[—–-]\s", match.group(1))[0]
            found.append(Section(9, title, nested))
    return found


def name_words_of(text: str) -> set[str]:
    """A phase name's words, its numbers included (`Auth 2` is not `Auth`)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.lower())
                    if not unicodedata.combining(c))  # fmt: skip
    return set(re.findall(r"[^\W_]+", plain))


def folder_name_words(name: str) -> set[str]:
    """The words of a phase folder's name after its prefix and number (`CTRX-23-auth-2`)."""
    return name_words_of(re.sub(r"^(?:[A-Za-z][\w]*-)*?\d+(?:\.\d+)*-?", "", name))


def words_of(text: str) -> set[str]:
    """Words in any script (`설정`, `Настройки`), accents aside (`Exportación` = `exportacion`),
    digits and one-letter words aside."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.lower())
                    if not unicodedata.combining(c))  # fmt: skip
    return {w for w in re.findall(r"[^\W_]+", plain) if len(w) > 1 and not w.isdigit()}


def traced_ids(requirements: str, phase_number: str) -> set[str]:
    """Rule 2e: the first cells of table rows whose phase column names this phase."""
    wanted = phase_key(phase_number)
    found: set[str] = set()
    phase_column: int | None = None
    for line in body_of(requirements):
        if not is_table_line(line):
            phase_column = None
            continue
        cells = split_cells(line)
        if is_separator_row(cells):
            continue
        lowered = [c.lower() for c in cells]
        if phase_column is None:
            phase_column = next((i for i, c in enumerate(lowered) if "phase" in c), -1)
            continue  # the header row
        if phase_column < 0 or phase_column >= len(cells):
            continue
        named = re.match(r"^\W*(?:phase\s*)?(\d+(?:\.\d+)*)", cells[phase_column], re.I)
        token = head_token(cells[0])
        if named and phase_key(named.group(1)) == wanted and looks_like_id(token):
            found.add(token)
    return found


def milestone_files(phase_dir: Path, planning_dir: Path) -> tuple[str, bool, str, bool]:
    """(the ROADMAP, whether its entry must match by name, the REQUIREMENTS, whether that file
    is the current one read for a shipped phase), as the docstring's choices say."""
    phase_dir, planning_dir = Path(phase_dir), Path(planning_dir)
    shipped = any(p.name in ("archive", "milestones") for p in phase_dir.parents
                  if planning_dir in p.parents)  # fmt: skip
    current = read_text(planning_dir / "REQUIREMENTS.md")
    group = phase_dir.parent
    if group.name.endswith("-phases") and group.parent.name == "milestones":
        prefix = group.parent / group.name.removesuffix("-phases")
        roadmap = read_text(Path(f"{prefix}-ROADMAP.md"))
        own = read_text(Path(f"{prefix}-REQUIREMENTS.md"))
        if roadmap:
            return roadmap, False, own or current, not own
    for folder in phase_dir.parents:
        if folder == planning_dir or planning_dir not in folder.parents:
            break
        if (folder / "ROADMAP.md").is_file():
            own = read_text(folder / "REQUIREMENTS.md")
            return read_text(folder / "ROADMAP.md"), False, own or current, not own
    return read_text(planning_dir / "ROADMAP.md"), shipped, current, shipped


def number_elsewhere(phase_dir: Path, planning_dir: Path, phase_number: str) -> bool:
    """Whether any other folder under the planning folder carries the same phase number."""
    wanted = phase_key(phase_number)
    for other in planning_dir.rglob("*"):
        found = re.search(r"(?:^|-)(\d+(?:\.\d+)*)(?:-|$)", other.name)
        if other != phase_dir and other.is_dir() and found and phase_key(found.group(1)) == wanted:
            return True
    return False


def current_twins(planning_dir: Path, phase_number: str) -> list[str]:
    """The names of the folders of `phases/` (the current milestone) with this phase number."""
    wanted = phase_key(phase_number)
    folder = planning_dir / "phases"
    names = []
    for other in folder.iterdir() if folder.is_dir() else ():
        found = re.search(r"(?:^|-)(\d+(?:\.\d+)*)(?:-|$)", other.name)
        if other.is_dir() and found and phase_key(found.group(1)) == wanted:
            names.append(other.name)
    return names


def same_number_folders(phase_dir: Path, phase_number: str) -> list[str]:
    """The names of the other folders beside this one with the same phase number (then a
    ROADMAP entry is this phase's only by its title, and one a twin fits as well is not)."""
    wanted = phase_key(phase_number)
    names = []
    for other in phase_dir.parent.iterdir():
        found = re.search(r"(?:^|-)(\d+(?:\.\d+)*)(?:-|$)", other.name)
        if other != phase_dir and other.is_dir() and found and phase_key(found.group(1)) == wanted:
            names.append(other.name)
    return names


def declaration_of(
    phase_dir: Path, planning_dir: Path, phase_number: str | int | float
) -> Declaration:
    """Everything rule 2 declares for the phase."""
    declaration = Declaration()
    texts = [read_text(path) for path in plan_summaries(phase_dir)]
    for text in texts + [read_text(path) for path in plan_files(phase_dir)]:
        add_frontmatter_requirements(declaration, text)
    for text in texts:
        lines = body_of(text)
        add_requirement_lines(declaration, lines)
        add_requirement_sections(declaration, lines)
    roadmap, by_name, requirements, shipped = milestone_files(Path(phase_dir), Path(planning_dir))
    twins = same_number_folders(Path(phase_dir), str(phase_number))
    name_words = folder_name_words(Path(phase_dir).name) if by_name or twins else None
    # an entry is this folder's only when it fits its name better than every rival's: a twin
    # beside it and, for a shipped folder read against the current ROADMAP, a current folder
    rivals = twins + (current_twins(Path(planning_dir), str(phase_number)) if by_name else [])
    add_roadmap_entry(declaration, roadmap, str(phase_number), name_words,
                      [folder_name_words(n) for n in rivals])  # fmt: skip
    if not shipped or not number_elsewhere(Path(phase_dir), Path(planning_dir), str(phase_number)):
        for identifier in traced_ids(requirements, str(phase_number)):
            declaration.add(identifier)
    return declaration


def declared_ids(phase_dir: Path, planning_dir: Path, phase_number: str | int | float) -> set[str]:
    """The requirement ids the phase declares (rule 2), range literals as written."""
    return set(declaration_of(Path(phase_dir), Path(planning_dir), phase_number).ids)


# ---------------------------------------------------------------------------------------------
# File paths (rule 5)
# ---------------------------------------------------------------------------------------------

FILE_WORDS = frozenset(
    {
        "files", "file", "artifacts", "artifact", "key-files", "key_files", "keyfiles",
        "archivos", "archivo", "ficheros", "fichero", "ficheiros", "fichiers", "fichier",
        "dateien", "datei", "arquivos", "arquivo", "bestanden", "bestand", "pliki", "plik",
        "файлы", "файл", "filer", "tệp",
    }
)  # fmt: skip
CJK_FILE_WORDS = ("文件", "檔案", "ファイル", "파일")
HEADING_WORD_EDGES = "*_`:()[]{}.,;!?\"'“”«»#"
NOTE_SEPARATOR = re.compile(r"(?<!\s)(?:\s+(?:—|–|--|-)\s|\s+\(|\s+#|\s*→|\s+->)|:\s")
ARROW = re.compile(r"^\s*(?:→|->)\s*")
BACKTICK_SPAN = re.compile(r"(?<!`)`++([^`]+)`++")  # possessive: no backtracking on long runs
ITEM = re.compile(rf"{BACKTICK_SPAN.pattern}|[^\s`]+")
CHANGE_LINE = re.compile(
    r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\*\*|__)?"
    r"(?:created|modified|added|updated|deleted)(?:\*\*|__)?\s*:",
    re.IGNORECASE,
)
BARE_FILE_NAME = re.compile(
    r"(?:[A-Z][a-z]*)?file|LICENSE|README|CHANGELOG|CODEOWNERS|NOTICE|AUTHORS|VERSION"
)
NOT_PATHS = frozenset({"e.g", "i.e", "etc", "vs", "a.k.a", "approx"})
NOTHING = frozenset({"", "none", "na", "n/a", "nothing", "tbd", "null"})


def is_files_heading(title: str) -> bool:
    """Rule 5b: a heading whose words include a word for files (any of the languages listed)."""
    words = {word.strip(HEADING_WORD_EDGES).lower() for word in re.split(r"[\s/]+", title)}
    return bool(words & FILE_WORDS) or any(word in title for word in CJK_FILE_WORDS)


def is_file_key(key: str, indent: int) -> bool:
    """Rule 5a: `key-files`, `keyFiles`, `files_modified`...; top-level created/modified/deleted."""
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", key).lower().replace("-", " ").replace("_", " ")
    if {"file", "files"} & set(words.split()):
        return True
    return indent == 0 and key.strip().lower() in ("created", "modified", "deleted")


def looks_like_path(text: str, backticked: bool) -> bool:
    """Rule 5: does this span or token look like a file path?"""
    if not text or len(text) > 300 or "://" in text or text.startswith("-"):
        return False
    if any(char in text for char in "<>=|") or not re.search(r"\w", text):
        return False
    if "/" in text:
        return path_with_slash(text, backticked)
    if " " in text or text.lower() in NOT_PATHS:
        return False
    if re.fullmatch(r"[vV]?\d+(?:\.\d+)*[A-Za-z%]{0,2}", text):
        return False
    if re.search(r"(?:^|[\w\-*}\]])\.[A-Za-z0-9_]", text) and "(" not in text:
        return True
    return backticked and bool(BARE_FILE_NAME.fullmatch(text))


def path_with_slash(text: str, backticked: bool) -> bool:
    """A span or token with a `/`: a path unless it is a fraction or (bare) prose like and/or."""
    if not re.search(r"[^\W\d_]", text):
        return False  # 42/42, 3/4
    if backticked:
        return True
    last = text.rstrip("/").rsplit("/", 1)[-1]
    return text.endswith("/") or text.count("/") >= 2 or bool(re.search(r"\.\w+$", last))


def clean_path(text: str) -> str:
    """A path candidate without surrounding whitespace, quotes, `**` and trailing `,;:` (a `**`
    inside it is a glob: `docs/**/*.md`)."""
    path = re.sub(r"^\*\*|\*\*$", "", text.strip())
    path = path.strip().strip("\"'“”‘’").strip()
    path = re.sub(r":\d+(?::\d+)?$", "", path)  # src/a.ts:42 (a line number)
    return path.rstrip(",;:").strip()


def clean_path_token(token: str) -> str:
    """A bare token as a path: quotes, `**`, sentence punctuation and stray brackets removed."""
    path = clean_path(token).rstrip(".,;:!?")
    path = clean_path(path)
    for opener, closer in ("()", "[]", "{}"):
        while path.endswith(closer) and path.count(closer) > path.count(opener):
            path = path[:-1]
        while path.startswith(opener) and path.count(opener) > path.count(closer):
            path = path[1:]
    return path.rstrip(".,;:")


def first_path(text: str) -> tuple[str, int] | None:
    """The first span or token that looks like a path, with the offset where it ends."""
    for match in ITEM.finditer(text):
        if match.group(1) is not None:
            candidate, backticked = clean_path(match.group(1)), True
        else:
            candidate, backticked = clean_path_token(match.group(0)), False
        if looks_like_path(candidate, backticked):
            return candidate, match.end()
    return None


def following_move_target(rest: str) -> str | None:
    """After a path: the path right after a `→`/`->` arrow, if there is one."""
    arrow = ARROW.match(rest)
    if not arrow:
        return None
    after = rest[arrow.end() :]
    item = ITEM.match(after)
    if not item:
        return None
    found = first_path(item.group(0))
    return found[0] if found else None


def spaced_path(text: str, cell: bool) -> str | None:
    """Rule 5b: a path whose names hold spaces, as a bold item head or a whole table cell."""
    bold = re.match(r"\*\*([^*`]+)\*\*", text.strip())
    candidate = bold.group(1) if bold else text.strip() if cell else ""
    names = candidate.split("/")
    if " " not in candidate or len(names) < 2:
        return None
    if all(name == name.strip() and 1 <= len(name.split()) <= 3 for name in names) and re.search(
        r"\S\.[A-Za-z0-9_-]{1,15}$", names[-1]
    ):
        return candidate
    return None


def paths_on_line(text: str, cell: bool = False) -> list[str]:
    """Rule 5b: the first path on a list item or cell, and a move's target after it."""
    spaced = spaced_path(text, cell)
    if spaced:
        return [spaced]
    found = first_path(text)
    if not found:
        return []
    path, end = found
    target = following_move_target(text[end:])
    return [path, target] if target else [path]


def is_nothing(path: str) -> bool:
    return re.sub(r"[^\w/]", "", path.lower()) in NOTHING or path.isdigit()


def entry_head(text: str) -> tuple[str, int]:
    """Rule 5a: an entry's path (its leading backticked span, else the text before a note)."""
    if text.startswith("`"):
        match = BACKTICK_SPAN.match(text)
        if match:
            return clean_path(match.group(1)), match.end()
    note = NOTE_SEPARATOR.search(text)
    end = note.start() if note else len(text)
    return clean_path(text[:end]), end


def entry_paths(entry: Entry) -> list[str]:
    """Rule 5a: the path (and a move's target) of one frontmatter entry."""
    text = unwrap_quotes(strip_comment(entry.text))
    path, end = entry_head(text)
    if is_nothing(path) or (not entry.from_list and not looks_like_path(path, True)):
        return []
    arrow = ARROW.match(text[end:])
    if not arrow:
        return [path]
    target, _ = entry_head(text[end + arrow.end() :].strip())
    return [path] if is_nothing(target) else [path, target]


NOTE_KEYS = frozenset({"purpose", "description", "desc", "note", "notes", "reason", "summary"})


def frontmatter_paths(frontmatter: list[str]) -> list[str]:
    """Rule 5a over one summary's frontmatter."""
    paths: list[str] = []
    for entry in frontmatter_entries(frontmatter, is_file_key):
        if entry.key.lower() not in NOTE_KEYS:
            paths.extend(entry_paths(entry))
    return paths


def section_paths(lines: list[str]) -> list[str]:
    """Rule 5b over one files section: list items (not notes under a file) and first cells."""
    paths: list[str] = []
    enclosing: list[tuple[int, bool]] = []  # (indent, gave a path) of the enclosing list items
    for index, line in enumerate(lines):
        if HEADING.match(line):
            enclosing = []
        elif is_table_line(line):
            cells = split_cells(line)
            if not is_separator_row(cells) and not is_header_row(lines, index):
                paths.extend(paths_on_line(cells[0], cell=True))
        elif match := BULLET.match(line):
            indent = len(match.group(1).expandtabs(4))
            while enclosing and enclosing[-1][0] >= indent:
                enclosing.pop()
            is_note = any(gave for _, gave in enclosing)
            found = [] if is_note else paths_on_line(CHECKBOX.sub("", match.group(2)))
            enclosing.append((indent, bool(found)))
            paths.extend(found)
    return paths


def change_line_paths(lines: list[str]) -> list[str]:
    """Rule 5c: the first path-like backticked span of `Created: ...`-style lines."""
    paths = []
    for line in lines:
        match = CHANGE_LINE.match(line)
        if not match:
            continue
        for span in BACKTICK_SPAN.finditer(line[match.end() :]):
            candidate = clean_path(span.group(1))
            if looks_like_path(candidate, True):
                paths.append(candidate)
                break
    return paths


def summary_paths(text: str) -> list[str]:
    """Every listed path of one plan summary (rule 5)."""
    frontmatter, body = split_frontmatter(text)
    lines = blank_fenced_code(body)
    paths = frontmatter_paths(frontmatter)
    for section in sections(lines):
        if section.level >= 2 and is_files_heading(section.title):
            paths.extend(section_paths(section.lines))
    paths.extend(change_line_paths(lines))
    return paths


def listed_paths(summary_texts: list[str]) -> list[str]:
    """The file paths the plan summaries list (rule 5), each once, in order of appearance."""
    seen: dict[str, None] = {}
    for text in summary_texts:
        for path in summary_paths(normalise_newlines(text)):
            seen.setdefault(path, None)
    return list(seen)


# ---------------------------------------------------------------------------------------------
# The compacted output
# ---------------------------------------------------------------------------------------------

VERDICT_LINE = re.compile(
    r"^\s*[-*+]\s+(?:\*\*)?`?(?P<id>[^\s`*]+?)`?(?:\*\*)?\s*:\s*(?:\*\*)?"
    rf"(?P<verdict>{'|'.join(VERDICTS)})(?:\*\*)?(?![\w-])"
)
MOVE_IN_CELL = re.compile(r"\s*(?:→|\s->)\s*")


@dataclass(frozen=True)
class Compacted:
    """The parts of a compacted summary the rules look at."""

    frontmatter: dict[str, str | list[str]]
    body: str
    body_lines: list[str]

    def listed(self, key: str) -> list[str]:
        value = self.frontmatter.get(key, [])
        return value if isinstance(value, list) else [value] if value else []

    @property
    def per_plan(self) -> bool:
        return str(self.frontmatter.get("layout", "")).strip().lower() == "per-plan"


def output_value(value: str) -> str | list[str]:
    """A top-level value: a flow list's items, a scalar, or an empty list (a block list follows)."""
    if value.startswith("["):
        return [unwrap_quotes(item) for item in flow_items(value)]
    return unwrap_quotes(value) if value else []


def output_frontmatter(lines: list[str]) -> dict[str, str | list[str]]:
    """Top-level keys of the output's frontmatter: scalars, flow lists and block lists."""
    result: dict[str, str | list[str]] = {}
    current = ""
    for line in join_flow_continuations(lines):
        split = split_key(line) if line[:1].strip() else None
        if split is not None:
            current = split[0].lower().replace("-", "_")
            result[current] = output_value(split[1])
            continue
        item = re.match(r"^\s*-\s*(.*)$", line)
        block = result.get(current)
        if item and isinstance(block, list):
            block.append(unwrap_quotes(strip_comment(item.group(1))))
    return result


def parse_compacted(text: str) -> Compacted:
    frontmatter, body = split_frontmatter(normalise_newlines(text))
    return Compacted(output_frontmatter(frontmatter), "\n".join(body), blank_fenced_code(body))


def level_two_sections(output: Compacted, prefix: str) -> list[Section]:
    return [
        section
        for section in sections(output.body_lines)
        if section.level == 2 and section.title.lower().startswith(prefix)
    ]


def verdict_lines(output: Compacted) -> list[tuple[str, str]]:
    """(id, verdict) of every verdict line under `## Verification` (plan checks excluded)."""
    found = []
    for section in level_two_sections(output, "verification"):
        for line in section.lines:
            match = VERDICT_LINE.match(line)
            item = BULLET.match(line)
            if match and not (item and item.group(2).startswith("Plan ")):
                found.append((match.group("id"), match.group("verdict")))
    return found


def unwrap_backticks(text: str) -> str:
    """`` `a/b.ts` `` -> a/b.ts (one matching pair of backtick runs)."""
    text = text.strip()
    ticks = len(text) - len(text.lstrip("`"))
    if 0 < ticks < len(text) and text.endswith("`" * ticks):
        return text[ticks:-ticks].strip()
    return text


def cell_paths(cell: str) -> list[str]:
    """The path(s) of a Files table first cell: one path, or both sides of `a → b`."""
    return [unwrap_backticks(side) for side in MOVE_IN_CELL.split(cell.strip()) if side.strip()]


def files_table_rows(output: Compacted) -> list[list[str]]:
    """The paths of every data row of the `## Files...` table(s)."""
    rows = []
    for section in level_two_sections(output, "files"):
        rows.extend(cell_paths(cell) for _, cell in table_first_cells(section.lines))
    return rows


# ---------------------------------------------------------------------------------------------
# The rules, one function each
# ---------------------------------------------------------------------------------------------


def check_original_summaries(summaries: list[Path], output: Compacted) -> list[str]:
    """Rule 1."""
    expected = {path.name for path in summaries}
    listed = set(output.listed("original_summaries"))
    missing = [
        f"rule 1: original_summaries lacks plan summary {n}" for n in sorted(expected - listed)
    ]
    extra = [
        f"rule 1: original_summaries lists {name}, which is not a plan summary of the phase"
        for name in sorted(listed - expected)
    ]
    return missing + extra


def has_line(identifier: str, verdicts: Counter[str], declaration: Declaration) -> bool:
    """A line for the id, or (a range literal) lines for every member."""
    members = declaration.ranges.get(identifier, [])
    return verdicts[identifier] > 0 or (bool(members) and all(verdicts[m] for m in members))


def check_verdicts(declaration: Declaration, output: Compacted) -> list[str]:
    """Rule 3."""
    lines = verdict_lines(output)
    counts = Counter(identifier for identifier, _ in lines)
    passes = Counter(identifier for identifier, verdict in lines if verdict == "PASS")
    violations = [
        f"rule 3: declared requirement {identifier} has no verdict line"
        for identifier in sorted(declaration.ids)
        if not has_line(identifier, counts, declaration)
    ]
    violations += [
        f"rule 3: {identifier} has {count} verdict lines"
        for identifier, count in sorted(counts.items())
        if count > 1
    ]
    violations += [
        f"rule 3: verdict line for {identifier}, which is not a declared requirement"
        for identifier in sorted(counts)
        if not declaration.accepts(identifier)
    ]
    for identifier in output.listed("requirements_satisfied"):
        if not declaration.accepts(identifier):
            violations.append(f"rule 3: requirements_satisfied lists undeclared {identifier}")
        elif not has_line(identifier, passes, declaration):
            violations.append(
                f"rule 3: requirements_satisfied lists {identifier} without a PASS verdict line"
            )
    return violations


def mentioned_by_summaries(identifier: str, texts: list[str], declaration: Declaration) -> bool:
    """Rule 4: the id, or a range literal or span holding it, appears in a plan summary."""
    if mentioned(identifier, texts):
        return True
    holders = [lit for lit, members in declaration.ranges.items() if identifier in members]
    return any(mentioned(literal, texts) for literal in holders)


def check_over_claiming(texts: list[str], declaration: Declaration, output: Compacted) -> list[str]:
    """Rule 4."""
    return [
        f"rule 4: {identifier} is {verdict} but no plan summary mentions it (must be NOT VERIFIED)"
        for identifier, verdict in verdict_lines(output)
        if verdict in CLAIMING_VERDICTS
        and not mentioned_by_summaries(identifier, texts, declaration)
    ]


def check_files_table(paths: list[str], output: Compacted, sources: list[str]) -> list[str]:
    """Rules 6 (sections layout) and 7."""
    rows = files_table_rows(output)
    listed = set(paths)
    row_counts = Counter(path for row in rows for path in set(row))
    violations = [
        f"rule 6: listed file {path} is not the first cell of any Files Modified row"
        for path in paths
        if row_counts[path] == 0
    ]
    violations += [
        f"rule 6: file {path} is in {count} Files Modified rows"
        for path, count in sorted(row_counts.items())
        if count > 1
    ]
    violations += [
        f"rule 7: Files Modified row {path} occurs in no plan summary nor the ROADMAP"
        for path in sorted(row_counts)
        if not any(path in source for source in sources)
    ]
    violations += [
        f"rule 7: Files Modified row {path} is a suffix of row {longer}"
        for path in sorted(row_counts)
        for longer in sorted(row_counts)
        if longer.endswith("/" + path) and path not in listed
    ]
    return violations


PATH_CHAR = re.compile(r"[\w\-./~@+]")


def occurs_as_whole_path(path: str, text: str) -> bool:
    """Rule 6 (per-plan): the path occurs, not only inside a longer path."""
    start = text.find(path)
    while start != -1:
        before = text[start - 1] if start > 0 else " "
        after = text[start + len(path) : start + len(path) + 2]
        continues = bool(after) and (
            bool(re.match(r"[\w\-/~@+]", after[0])) or bool(re.match(r"\.\w", after))
        )
        if not PATH_CHAR.match(before) and not continues:
            return True
        start = text.find(path, start + 1)
    return False


def check_per_plan_paths(paths: list[str], output: Compacted) -> list[str]:
    """Rule 6 (per-plan layout)."""
    return [
        f"rule 6: listed file {path} does not occur as a whole path in the per-plan body"
        for path in paths
        if not occurs_as_whole_path(path, output.body)
    ]


def check_length(texts: list[str], compacted_text: str) -> list[str]:
    """Rule 8, in UTF-8 bytes."""
    limit = sum(len(text.encode("utf-8")) for text in texts)
    size = len(normalise_newlines(compacted_text).encode("utf-8"))
    if size <= limit:
        return []
    return [f"rule 8: output has {size} bytes, more than the summaries' {limit}"]


def check(
    phase_dir: Path, planning_dir: Path, phase_number: str | int | float, compacted_text: str
) -> list[str]:
    """Every violation of rules 1-8 by a compacted summary of the phase, one line each."""
    phase_dir, planning_dir = Path(phase_dir), Path(planning_dir)
    summaries = plan_summaries(phase_dir)
    texts = [read_text(path) for path in summaries]
    declaration = declaration_of(phase_dir, planning_dir, phase_number)
    output = parse_compacted(compacted_text)
    paths = listed_paths(texts)
    violations = check_original_summaries(summaries, output)
    violations += check_verdicts(declaration, output)
    violations += check_over_claiming(texts, declaration, output)
    if output.per_plan:
        violations += check_per_plan_paths(paths, output)
    else:
        roadmap = read_text(planning_dir / "ROADMAP.md")
        violations += check_files_table(paths, output, [*texts, roadmap])
    violations += check_length(texts, compacted_text)
    return violations
