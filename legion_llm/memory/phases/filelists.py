"""The files a plan summary declares, taken whole: a declared list is data, not prose.

A summary declares the files its plan touched in

- frontmatter: every key that names files (`key-files`, `key_files`, `keyFiles`, `files`,
  `files_modified`, `files-created`, `artifacts`, ...), as a flat list or with sublists
  (`created:`, `modified:`, `deleted:`), in flow (`[a, b]`) or block (`- a`) style; an item may
  be a mapping (`- path: a.ts` with a `change:` or `description:` beside it);
- a body section whose heading names files, in any of several languages (`## Files Created`,
  `## Key Files`, `## Archivos creados`, `## Geänderte Dateien`, `## 修改的文件`, `## Изменённые
  файлы` ...), its subsections included (`### Created`): each bullet's and table row's path, a
  line that opens with its path, a fenced block's lines;
- a line that opens with a change word and a colon (`**Created:** \\`a.ts\\`, \\`b.ts\\``).

Each entry is kept as written, whatever its shape: dotfiles, several extensions or none, lock
files with no stem, bundle folders, templates (`data/{id}.pdf`, `app/[slug]/page.tsx`), globs,
folder names with spaces, any script. Quotes, backticks and emphasis around it are stripped, and
so is a note after it (` — note`, ` - note`, `: note`, ` (note)`), which becomes its change text.
In frontmatter an item is an entry whatever it looks like (the key says it is a file); in the
body an item must look like a path (a folder, an extension, a dotfile or a known bare name such
as `Makefile`), so that `None.` or a sentence under a Files heading is no file. Move tables
(`| From | To |`) and `old → new` list both sides.

Prose mentions of paths elsewhere are not read here (paths.py finds them, with its precision
filters); a declared entry is never filtered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from legion_llm.memory.phases.paths import BARE_NAMES, find_paths, normalise, unique
from legion_llm.memory.phases.requirements import split_frontmatter

# the change text of a move's source: named in its destination's row, no row of its own
MOVED_AWAY = "\x00moved"


@dataclass(frozen=True)
class Listed:
    """One declared file: its path as written, the note the list gives it, and where it was.

    `primary`: a file list proper (frontmatter, a Files section's bullet or table row), where
    each entry is a file of its own even when it is the tail of another (`package.json` beside
    `packages/cli/package.json`). A change line (`**Files modified:** a.ts, b.ts`, often in a
    deviation note) or a fenced listing (often a tree) is secondary: an entry there that is the
    tail of a path named in full elsewhere is a mention of that path, not another file."""

    path: str
    change: str
    source: str
    primary: bool = True


# a frontmatter key that names files, its separators and case removed
_FILE_KEY = re.compile(
    r"^(?:key|changed|created|modified|new|deleted|touched)?(?:files?|artifacts?|paths?)"
    r"(?:created|modified|changed|touched|added|deleted|removed|updated|new)?$"
)
_FILE_HEADING = re.compile(
    r"\b(?:files?|artifacts?|archivos?|ficheros?|fichiers?|dateien|datei|arquivos?|filer|"
    r"bestand(?:en)?|pliki|soubory|dosyalar|файл\w*)\b|文件|檔案|ファイル|파일|tệp|tập tin",
    re.IGNORECASE,
)
_CHANGE_WORDS = (
    r"created|modified|added|updated|changed|deleted|removed|renamed|moved|new files?|"
    r"files? (?:created|modified|changed|added|deleted)|creado|modificado|créé|modifié|"
    r"erstellt|geändert|criado|modificado"
)
_CHANGE_LINE = re.compile(
    rf"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*|__)?(?P<word>{_CHANGE_WORDS})(?:\*\*|__)?\s*:"
    r"(?:\*\*|__)?\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>.*)$")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_BOLD_HEAD = re.compile(r"^\*\*([^`*\n]+)\*\*(?=$|[\s:—–(-])")
# where a note starts after an entry
_NOTE = re.compile(r"\s+[—–]\s*|\s+-\s+|:\s+|\s+\(|\s+#\s|\t")
_NONE = frozenset({"none", "n/a", "na", "-", "tbd", "nothing", "[]", "{}", "null", "~", "—"})
_MAPPING_KEY = re.compile(r"^(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?P<value>.*)$")
_PATH_KEYS = frozenset({"path", "file", "filename", "name", "to"})
_CHANGE_KEYS = frozenset({"created", "modified", "deleted", "changed", "added", "updated"})
_NOTE_KEYS = frozenset({"change", "changes", "description", "desc", "why", "purpose", "note"})
_MOVE = re.compile(r"\s*(?:→|->|⇒|=>)\s*")
_WORDY = re.compile(r"[^\W\d_]{2,}")


def listed_files(text: str) -> list[Listed]:
    """Every file the summary declares (module docstring), in order of first mention."""
    frontmatter, body = split_frontmatter(normalise(text))
    kept: dict[str, Listed] = {}
    for item in _frontmatter_files(frontmatter) + _body_files(body):
        first = kept.setdefault(item.path, item)
        change = first.change or item.change  # a bare list, then a table that describes it
        kept[item.path] = Listed(item.path, change, first.source, first.primary or item.primary)
    return list(kept.values())


def listed_paths(text: str) -> list[str]:
    return [item.path for item in listed_files(text)]


# ---------------------------------------------------------------- frontmatter


def _norm_key(key: str) -> str:
    return re.sub(r"[-_\s]", "", key.lower())


def _frontmatter_files(lines: list[str]) -> list[Listed]:
    found: list[Listed] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        top = _MAPPING_KEY.match(line) if not line.startswith((" ", "\t", "-")) else None
        index += 1
        key = _norm_key(top.group("key")) if top else ""
        outdented = key in _CHANGE_KEYS  # `modified:` written at the top level: a sublist
        if not top or not (_FILE_KEY.match(key) or outdented):
            continue
        block = [top.group("value") if not outdented else ""]  # never `created: <a date>`
        while index < len(lines) and lines[index].startswith((" ", "\t", "-")):
            block.append(lines[index])
            index += 1
        found += _block_files(top.group("key"), block)
    return found


def _change_of(key: str) -> str:
    words = re.findall(r"created|modified|changed|added|deleted|removed|updated|new", key.lower())
    return words[0] if words else ""


def _block_files(key: str, block: list[str]) -> list[Listed]:
    """The entries under one file key: its inline value, then its nested lines."""
    found: list[Listed] = []
    change = _change_of(key)
    found += _inline_files(block[0], change, f"{key}: {block[0]}")
    in_mapping = False  # the last item was a mapping (`- path: a.ts`): its fields may follow
    for raw in block[1:]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            item = line[1:].strip()
            mapping = _MAPPING_KEY.match(item.strip("{} "))
            in_mapping = bool(mapping and mapping.group("key").lower() in _PATH_KEYS | _NOTE_KEYS)
            if in_mapping:
                found += _mapping_item(item, change, line, found)
            else:
                found += _entries(item, change, line, declared=True)
            continue
        mapping = _MAPPING_KEY.match(line)
        if not mapping:
            continue
        sub, value = mapping.group("key").lower(), mapping.group("value")
        if sub in _NOTE_KEYS and found and in_mapping:
            last = found.pop()
            found.append(Listed(last.path, _unquote(value), last.source))
        elif sub in _PATH_KEYS:
            found += _entries(value, change, line, declared=True)
        else:  # a sublist: `created:`, `modified: [a, b]`
            change = _change_of(sub) or sub
            found += _inline_files(value, change, line)
    return found


def _mapping_item(item: str, change: str, line: str, found: list[Listed]) -> list[Listed]:
    """`- path: a.ts` (or `- {path: a.ts, change: ...}`): the path, its note when given."""
    fields = dict(
        (m.group("key").lower(), m.group("value"))
        for part in re.split(r",\s*(?=[A-Za-z_][\w-]*\s*:)", item.strip("{} "))
        if (m := _MAPPING_KEY.match(part.strip()))
    )
    path = next((fields[k] for k in ("path", "file", "filename", "name", "to") if k in fields), "")
    note = next((fields[k] for k in _NOTE_KEYS if k in fields), "")
    if not path:  # `- description: ...` continues the item before it
        if found and note and not found[-1].change:
            last = found.pop()
            return [Listed(last.path, _unquote(note), last.source)]
        return []
    return [
        Listed(e.path, _unquote(note) or e.change, line)
        for e in _entries(path, change, line, declared=True)
    ]


def _inline_files(value: str, change: str, source: str) -> list[Listed]:
    value = re.sub(r"(?:^|\s)#.*$", "", value).strip()
    if value in ("", "|", ">", "|-", ">-"):
        return []
    if value.startswith("[") and value.endswith("]"):
        parts = [p for p in _split_flow(value[1:-1]) if p.strip()]
        return [e for p in parts for e in _entries(p, change, source, declared=True)]
    return _entries(value, change, source, declared=True)


def _split_flow(inside: str) -> list[str]:
    """A flow list's items: commas outside quotes, brackets and braces."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in inside:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        elif char == "," and depth <= 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


# ---------------------------------------------------------------- body


def _body_files(body: str) -> list[Listed]:
    found: list[Listed] = []
    in_files = in_fence = False
    files_level: int | None = None
    table_path_column: int | None = None
    move_columns: tuple[int, int] | None = None
    for line in body.split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            if in_files:
                found += _secondary(_entries(stripped, "", line, declared=False, whole=True))
            continue
        heading = re.match(r"^(#{1,6})\s", line)
        if heading:
            level = len(heading.group(1))
            if files_level is None or level <= files_level:  # a subheading stays in its section
                named = level > 1 and bool(_FILE_HEADING.search(line.lstrip("#")))
                files_level = level if named else None
            in_files = files_level is not None
            table_path_column = move_columns = None
            continue
        change = _CHANGE_LINE.match(line)
        if change and not stripped.startswith("|"):
            found += _secondary(_change_line(change.group("word"), change.group("rest"), line))
            continue
        if not in_files or not stripped:
            continue
        if stripped.startswith("|"):
            cells = _cells(stripped)
            if table_path_column is None and move_columns is None:
                table_path_column, move_columns = _header(cells)
                if table_path_column is not None or move_columns is not None:
                    continue  # the header row
                table_path_column = 0
            if all(re.fullmatch(r":?-{2,}:?|-", c) for c in cells if c):
                continue
            found += _row(cells, table_path_column, move_columns, line)
            continue
        bullet = _BULLET.match(line)
        if bullet:
            found += _item(bullet.group("text"), line)
        else:  # a line of prose: an entry only when it opens with its path (`a.ts — note`)
            found += _entries(stripped, "", line, declared=False, prose=False)
    return found


def _cells(row: str) -> list[str]:
    inner = row.strip().strip("|")
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


_PATH_COLUMN = re.compile(r"^(?:files?|paths?|archivos?|fichiers?|dateien|datei|arquivos?|"
                          r"filer|файл\w*|文件|ファイル|파일|tệp|location|name)$", re.I)  # fmt: skip


def _header(cells: list[str]) -> tuple[int | None, tuple[int, int] | None]:
    """(the path column, the from/to columns of a move table) when `cells` is a header row."""
    names = [c.strip("*` ").lower() for c in cells]
    if "from" in names and "to" in names:
        return None, (names.index("from"), names.index("to"))
    for index, name in enumerate(names):
        if _PATH_COLUMN.match(name):
            return index, None
    if any(_path_like(n) for n in names):
        return None, None  # no header: a row of data
    return 0, None


def _row(
    cells: list[str], column: int | None, move: tuple[int, int] | None, line: str
) -> list[Listed]:
    if move is not None:
        old = _entries(cells[move[0]], "", line, declared=False) if len(cells) > move[0] else []
        new = _entries(cells[move[1]], "", line, declared=False) if len(cells) > move[1] else []
        moved = [Listed(n.path, f"moved from {old[0].path}" if old else "moved", line) for n in new]
        return moved + [Listed(o.path, MOVED_AWAY, line) for o in old]
    index = column or 0
    if index >= len(cells):
        return []
    others = [c for i, c in enumerate(cells) if i != index and _WORDY.search(c)]
    note = others[0] if others else ""  # a cell of words, not a line count
    parts = re.split(r"<br\s*/?>|,\s+", cells[index])
    return [
        Listed(e.path, note or e.change, line)
        for part in parts
        for e in _entries(part, "", line, declared=False, spaced=True)
    ]


def _item(text: str, line: str) -> list[Listed]:
    """A bullet or line of a Files section: its head's paths, the rest as their change text."""
    text = text.strip()
    if _MOVE.search(text) and not _BACKTICKED.search(text.split("→")[0] + "x"):
        pieces = [p for p in _MOVE.split(text) if p.strip()]
        if len(pieces) == 2:
            old = _entries(pieces[0], "", line, declared=False)
            new = _entries(pieces[1], "", line, declared=False)
            if old and new:
                return [Listed(new[0].path, f"moved from {old[0].path}", line),
                        Listed(old[0].path, MOVED_AWAY, line)]  # fmt: skip
    return _entries(text, "", line, declared=False)


def _secondary(entries: list[Listed]) -> list[Listed]:
    return [Listed(e.path, e.change, e.source, primary=False) for e in entries]


def _change_line(word: str, rest: str, line: str) -> list[Listed]:
    r"""`Created: a.ts, b.ts`, `**Files modified:** \`a.ts\` (+10 lines)`: read like a list item."""
    return _entries(rest.rstrip("."), word.lower(), line, declared=False)


# ---------------------------------------------------------------- one entry


def _balanced(path: str) -> str:
    """A closing bracket with no opening one is the prose around the path, not the path."""
    for opening, closing in ("()", "[]", "{}"):
        while path.endswith(closing) and path.count(closing) > path.count(opening):
            path = path[:-1]
    return path


def _unquote(text: str) -> str:
    """`"a.ts"` -> `a.ts`: quotes around the whole text only (never two quoted spans' ends;
    backticks are spans, read as such by _entries)."""
    text = text.strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        if text[0] in text[1:-1]:
            break
        text = text[1:-1].strip()
    return text


def _entries(
    text: str,
    change: str,
    source: str,
    *,
    declared: bool,
    whole: bool = False,
    prose: bool = True,
    spaced: bool = False,
) -> list[Listed]:
    """The path(s) one list item declares, with its note (module docstring): the item's head,
    before its note, is its entries (`a.ts`, `` `a.ts`, `b.ts` — note ``, `**a.ts**: note`).

    `declared`: the item is a file whatever it looks like (a frontmatter file list); `whole`:
    the text is one path already (a fenced line); `prose`: an item whose head is no path yields
    the paths its words name (paths.py), else nothing; `spaced`: the text is a cell of a path
    column, its names may hold spaces (as may a backticked or bold head's anywhere)."""
    text = _unquote(text.strip().rstrip(","))
    if not text or text.lower() in _NONE:
        return []
    if whole:
        return [Listed(text, change, source)] if declared or _path_like(text, spaced=True) else []
    text = _BOLD_HEAD.sub(r"`\1`", text)  # `**a b/c d.ts**: note`: the bold marks the path
    spans = _BACKTICKED.findall(text)
    counter = iter(range(len(spans)))
    masked = _BACKTICKED.sub(lambda _: f"\x00{next(counter)}\x00", _unbold(text))

    def unmask(part: str, ticks: str = "") -> str:
        return re.sub(r"\x00(\d+)\x00", lambda m: ticks + spans[int(m.group(1))] + ticks, part)

    head, note = _split_note(masked)
    note = unmask(note, "`")  # the note as written
    parts = [p.strip() for p in re.split(r",\s+|\s+(?:and|&|\+)\s+", head) if p.strip()]
    entries = [_head_entry(p, unmask, declared, spaced) for p in parts]
    if entries and all(entries):
        return [Listed(e, note or change, source) for e in entries if e]
    if declared and len(parts) == 1 and re.fullmatch(r"\S*[^\W\d_]\S*", unmask(parts[0])):
        return [Listed(_unquote(unmask(parts[0])), note or change, source)]  # the key says so
    if declared and parts and _path_like(unmask(parts[0]).split()[0]):
        return [Listed(unmask(parts[0]).split()[0], note or change, source)]
    if not prose:
        return []
    return [Listed(p, change, source) for p in find_paths(text.replace("`", " "))]


def _head_entry(
    part: str, unmask: Callable[[str], str], declared: bool, spaced: bool
) -> str | None:
    """The path one part of an item's head names: a backticked span, or the part itself
    (`spaced`: its names may hold spaces)."""
    span = re.fullmatch(r"\x00\d+\x00", part)
    path = _balanced(_unquote(unmask(part)).rstrip(":").strip())
    if span:
        return path if declared or _path_like(path, spaced=True) else None
    if "\x00" in part:
        return None  # words around a span: prose
    return path if _path_like(path, spaced=declared or spaced) else None


def _unbold(text: str) -> str:
    """`**a.ts**: note` -> `a.ts: note`; `**` inside a path is a glob and stays (`src/**/x.ts`),
    and so does `__` (`__init__.py`)."""
    return re.sub(r"^\*\*(.+?)\*\*", r"\1", text.strip())


def _split_note(text: str) -> tuple[str, str]:
    """(the entry, its note): `src/a.ts — the parser`, `src/a.ts (new)`, `a.ts: parser`."""
    match = _NOTE.search(text)
    if not match or match.start() == 0:
        return text, ""
    head, rest = text[: match.start()], text[match.start() :]
    if rest.lstrip().startswith("(") and not re.match(r"\s*\([^()]*\)\s*(?:$|[—–:-])", rest):
        return text, ""  # `app/(auth)/login.tsx`: the parenthesis is part of the path
    return head, _clean_note(rest)


def _clean_note(rest: str) -> str:
    """The note after an entry, its punctuation and a bare size (`(~370 lines)`) dropped."""
    note = re.sub(r"^[\s,:;—–\-]+", "", rest).strip()
    note = re.sub(r"\(?~?\d+\+? lines?\)?[,;.]?", "", note).strip()
    if note.startswith("(") and note.endswith(")") and note.count("(") == 1:
        note = note[1:-1]
    return " ".join(note.strip(" ,;:—–-").split())


def _spaced_path(path: str) -> bool:
    """A path whose names hold spaces (`wBlock Foreign/x.entitlements`, `docs/User Guide.md`):
    a folder, every name at most three words, the last one ending in an extension (a sentence
    that ends in a path is no path)."""
    if "/" not in path:
        return False
    names = path.split("/")
    short = all(len(n.split()) <= 3 and n == n.strip() for n in names)
    return short and re.search(r"\S\.[A-Za-z0-9_-]{1,15}$", names[-1]) is not None


def _path_like(token: str, *, spaced: bool = False) -> bool:
    """A word that can name a file: a folder, an extension, a dotfile or a bare file name such
    as `Makefile` (not a URL, a scoped package, a version, `e.g.` or a plain word). `spaced`:
    folders may hold spaces (a declared list's item, a backticked span)."""
    token = token.strip().strip("*_")
    if not token or (re.search(r"\s", token) and not (spaced and _spaced_path(token))):
        return False
    if "://" in token or token.startswith("-") or not re.search(r"[A-Za-z0-9]", token):
        return False
    if token.startswith("@"):  # a scoped package (`@types/node`) unless a file ends it
        return re.search(r"/[^/@]*[^\W\d_][^/@]*\.[A-Za-z][A-Za-z0-9]{0,9}$", token) is not None
    if "/" in token:
        return bool(re.search(r"[^\W\d_]|\d", token.replace("/", "")))
    if token in BARE_NAMES:
        return True
    if re.fullmatch(r"v?\d+(?:\.\d+)*", token):
        return False  # a version
    return re.fullmatch(r"\.?[^\s.][^\s]*\.[^\s.]+|\.[A-Za-z0-9][\w.-]*", token) is not None


def declared_paths(texts: list[str]) -> list[str]:
    """Every declared file of several summaries, deduplicated in order."""
    return unique(path for text in texts for path in listed_paths(text))
