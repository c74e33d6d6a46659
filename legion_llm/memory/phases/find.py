"""Finding a phase on disk and what ROADMAP.md says about it.

A phase is given as a number (`3`, `03`, `6.1`), a folder name (`03-billing-exports`) or a path.
Folders live in `.planning/phases/` and, for shipped milestones, under `.planning/archive/`
(`archive/{NN-name}/` or `archive/milestone-{N}/{NN-name}/`) or where GSD's complete-milestone
moves them, `.planning/milestones/v{X.Y}-phases/{NN-name}/`, next to that milestone's own
`milestones/v{X.Y}-ROADMAP.md`. Several folders may carry the same
number (phase numbers restart per milestone); the ROADMAP's name for the phase picks one by its
slug, else the user is asked to pass the folder.

Plan summaries are `{NN}-{PP}[a-z]-SUMMARY.md` (`02-01a`, `06.1-01`), or, in a phase of one
plan written without a plan number, `{NN}-SUMMARY.md` (plan id `{NN}`); other summaries in or
near the folder (`08-CLOSEOUT-SUMMARY.md`, milestone, quick-task and research summaries) are
not plan summaries. Completion is read from every ROADMAP signal: the checklist `[x]`, the
Progress table's Status (`Complete`, `Complete (reviewed)`, `**Shipped** ...`) or GSD's `4/4`.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from legion_llm.errors import InputError
from legion_llm.memory.files import read_text, require_inside
from legion_llm.memory.phases.extract import listed_ids, normalise
from legion_llm.memory.phases.planning import phase_key
from legion_llm.memory.table import parse_markdown

# a phase folder: an optional prefix of words, the phase number, an optional slug (`03-billing`,
# `06.1-hotfix`, `CTRX-23-pyinstaller`, `phase-7-auth`, `12`)
PHASE_DIR_RE = re.compile(
    r"^(?:(?P<prefix>[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*)[-_ ])?"
    r"(?P<number>\d+(?:\.\d+)*)(?:[-_ ](?P<slug>.+))?$"
)
# a plan's files: `03-01-SUMMARY.md` (`02-01a`, `06.1-01`) or `03-PLAN-01.md` / `03-SUMMARY-01.md`
PLAN_FILE_RE = re.compile(
    r"^(?P<phase>\d+(?:\.\d+)*)-(?:(?P<plan>\d+[a-z]?)-(?P<kind>SUMMARY|PLAN)|"
    r"(?P<kind2>SUMMARY|PLAN)-(?P<plan2>\d+[a-z]?))\.md$",
    re.IGNORECASE,
)
# one number: the phase's one plan (`16-PLAN.md`, `16-SUMMARY.md` in phase 16), or a plan numbered
# without its phase (`01-SUMMARY.md`, `02-SUMMARY.md` in phase 05)
SINGLE_PLAN_FILE_RE = re.compile(r"^(\d+(?:\.\d+)*[a-z]?)-(SUMMARY|PLAN)\.md$", re.IGNORECASE)
_CHECK_RE = re.compile(
    r"^\s*[-*]\s*\[([ xX])\]\s*(?:\*\*)?Phase\s+(\d+(?:\.\d+)*)\s*[:.—–-]\s*(.*)$", re.IGNORECASE
)
_HEADING_RE = re.compile(r"^(#{2,4})\s+Phase\s+(\d+(?:\.\d+)*)\s*[:.—–-]\s*(.*)$", re.IGNORECASE)
_ROW_PHASE_RE = re.compile(r"^\s*(?:Phase\s+)?(\d+(?:\.\d+)*)\b\.?\s*[—–:-]?\s*(.*)$", re.I)
_REQ_RE = re.compile(
    r"^\s*(?:>\s*)*(?:[-*]\s*)?\*\*Requirements?:?\*\*\s*:?\s*(.*)$", re.IGNORECASE
)
_DONE_RE = re.compile(r"\b(complete|completed|done|shipped|reviewed)\b")
_OPEN_RE = re.compile(r"\b(in progress|incomplete|not started|pending|planned|partial)\b")
_MATCH_THRESHOLD = 0.5


@dataclass(frozen=True)
class RoadmapStatus:
    """What ROADMAP.md says about one phase."""

    found: bool
    complete: bool
    name: str | None
    requirement_ids: tuple[str, ...]
    evidence: tuple[str, ...]
    conflicts: tuple[str, ...]
    path: Path | None


@dataclass(frozen=True)
class Phase:
    key: str
    number: str
    folder: Path
    planning: Path
    name: str
    summaries: tuple[tuple[str, Path], ...]
    plan_ids: tuple[str, ...]
    missing_summaries: tuple[str, ...]
    excluded: tuple[Path, ...]
    roadmap: RoadmapStatus
    archived: bool
    plan_files: tuple[Path, ...] = ()

    @property
    def root(self) -> Path:
        return self.planning.parent

    @property
    def slug(self) -> str:
        return self.folder.name

    @property
    def compacted_path(self) -> Path:
        return self.folder / f"{self.number}-COMPACTED.md"

    @property
    def title(self) -> str:
        return f"Phase {self.key}: {self.name}"


def slug_words(text: str) -> set[str]:
    """The words of a name or slug, in any script (`Настройки`, `설정`, `Kalender`), accents
    aside (a folder written `exportacion` is the ROADMAP's `Exportación`)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.lower())
                    if not unicodedata.combining(c))  # fmt: skip
    return set(re.findall(r"[^\W_]+", plain))


def folder_number(name: str) -> str | None:
    """The phase number a folder name carries (`CTRX-23-pyinstaller` -> `23`), else None."""
    match = PHASE_DIR_RE.match(name)
    return match.group("number") if match else None


def folder_slug(name: str) -> str:
    """The words after the number (`03-billing-exports` -> `billing-exports`; "" for none)."""
    match = PHASE_DIR_RE.match(name)
    return (match.group("slug") or "") if match else name


def name_match(name: str, slug: str) -> float:
    """Share of words a ROADMAP name and a folder slug have in common (0..1)."""
    a, b = slug_words(name), slug_words(folder_slug(slug))
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


def clean_name(raw: str) -> str:
    name = raw.split("**")[0] if "**" in raw else raw
    name = re.split(r"\s+[—–]\s+|\s+-\s+", name)[0]
    name = re.sub(r"\([^()]*\)", "", name)
    return " ".join(name.split()).strip(" :.")


# ---------------------------------------------------------------- ROADMAP


@dataclass(frozen=True)
class _Entry:
    kind: str  # "checklist" | "heading" | "progress"
    name: str
    complete: bool | None
    in_details: bool
    line: int


def _entries(text: str, key: str) -> list[_Entry]:
    return _entries_by_key(text).get(key, [])


def _entries_by_key(text: str) -> dict[str, list[_Entry]]:
    """Every phase entry of a (normalised) ROADMAP, by phase key, in one pass over it: its
    checklist lines and headings in line order, then its Progress table rows."""
    found: defaultdict[str, list[_Entry]] = defaultdict(list)
    in_details = False
    for index, line in enumerate(text.split("\n")):
        low = line.strip().lower()
        in_details = (in_details or low.startswith("<details")) and "</details>" not in low
        check, heading = _CHECK_RE.match(line), _HEADING_RE.match(line)
        if check:
            found[phase_key(check.group(2))].append(
                _Entry("checklist", clean_name(check.group(3)), check.group(1) in "xX",
                       in_details, index)
            )  # fmt: skip
        elif heading:
            found[phase_key(heading.group(2))].append(
                _Entry("heading", clean_name(heading.group(3)), None, in_details, index)
            )
    for key, entries in _progress_entries(text).items():
        found[key].extend(entries)
    return dict(found)


def _progress_entries(text: str) -> dict[str, list[_Entry]]:
    doc = parse_markdown(text)
    found: defaultdict[str, list[_Entry]] = defaultdict(list)
    for table in doc.tables:
        if "phase" not in table.columns:
            continue
        for line_no, cells in doc.rows(table):
            match = _ROW_PHASE_RE.match(cells.get("phase", "").replace("*", ""))
            if not match:
                continue
            found[phase_key(match.group(1))].append(
                _Entry("progress", clean_name(match.group(2)), _row_done(cells), False, line_no)
            )
    return found


@dataclass
class _Roadmap:
    """A ROADMAP read once for many phases: normalised, its lines, its entries by phase key."""

    lines: list[str]
    entries: dict[str, list[_Entry]]

    @classmethod
    def of(cls, text: str) -> _Roadmap:
        text = normalise(text)
        return cls(text.split("\n"), _entries_by_key(text))


def _row_done(cells: dict[str, str]) -> bool | None:
    status = cells.get("status", "").replace("*", "").lower()
    if status and _DONE_RE.search(status) and not _OPEN_RE.search(status):
        return True
    for column in ("plans_complete", "completed", "plans"):
        fraction = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", cells.get(column, ""))
        if fraction and int(fraction.group(1)) == int(fraction.group(2)) > 0:
            return True
    return False if status else None


def _pick(
    entries: list[_Entry], slug: str, require_name: bool, rivals: tuple[str, ...] = ()
) -> list[_Entry]:
    """Entries that describe this folder's phase when the ROADMAP holds several phases N; an
    entry whose name fits a rival folder at least as well is the rival's."""
    if rivals:
        entries = [e for e in entries if e.name and all(
            name_match(e.name, rival) < name_match(e.name, slug) for rival in rivals)]  # fmt: skip
    named = [e for e in entries if e.name]
    best = max((name_match(e.name, slug) for e in named), default=0.0)
    if best >= _MATCH_THRESHOLD:
        return [e for e in entries if not e.name or name_match(e.name, slug) == best]
    if require_name:
        return []
    outside = [e for e in entries if not e.in_details]
    return outside or entries


def roadmap_status(
    text: str | None,
    key: str,
    slug: str,
    *,
    require_name: bool = False,
    path: Path | None = None,
    rivals: tuple[str, ...] = (),
    read: _Roadmap | None = None,
) -> RoadmapStatus:
    """What the ROADMAP (`text`, or `read` when the caller indexed it already) says of phase
    `key` in folder `slug`."""
    if not text:
        return RoadmapStatus(False, False, None, (), (), (), path)
    read = read or _Roadmap.of(text)
    entries = _pick(read.entries.get(key, []), slug, require_name, rivals)
    signals = [e for e in entries if e.complete is not None]
    yes = tuple(_describe(e) for e in signals if e.complete)
    no = tuple(_describe(e) for e in signals if not e.complete)
    heading = next((e for e in entries if e.kind == "heading"), None)
    names = [e.name for e in entries if e.name and not e.in_details]
    name = heading.name if heading and heading.name else (names[0] if names else None)
    checklist = next((e for e in entries if e.kind == "checklist"), None)
    ids = _requirements(read.lines, heading.line) if heading else ()
    if not ids and checklist:  # `- [x] **Phase 7: Name**` with its details indented below it
        ids = _requirements(read.lines, checklist.line, nested=True)
    return RoadmapStatus(bool(entries), bool(yes), name, ids, yes, no if yes else (), path)


def _describe(entry: _Entry) -> str:
    mark = {"checklist": "checklist", "progress": "Progress table"}[entry.kind]
    state = "complete" if entry.complete else "not complete"
    return f"ROADMAP {mark} (line {entry.line + 1}): {state}"


def _requirements(lines: list[str], heading_line: int, *, nested: bool = False) -> tuple[str, ...]:
    """The ids of the phase entry's `**Requirements**:` line, or of the list right below it
    when the line itself is empty (`**Requirements:**` then `- EMP-01, EMP-02`). `nested`: the
    entry is a checklist line and its details are the indented lines below it."""
    for index in range(heading_line + 1, len(lines)):
        line = lines[index]
        if re.match(r"^#{1,4}\s", line) or (nested and line.strip() and line[:1] not in " \t"):
            break
        match = _REQ_RE.match(line)
        if match and match.group(1).strip():
            return tuple(listed_ids(match.group(1), anywhere=True))
        if match:
            below = []
            for item in (lines[j] for j in range(index + 1, len(lines))):
                bullet = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(.*)$", item)
                if not bullet:
                    break
                below += listed_ids(bullet.group(1), anywhere=True)
            return tuple(dict.fromkeys(below))
    return ()


# ---------------------------------------------------------------- folders


def planning_dir(root: Path) -> Path:
    return root / ".planning"


def phase_folders(planning: Path) -> list[Path]:
    """Every phase folder: `.planning/phases/*`, then archived ones (`archive/`, two levels
    deep) and shipped milestones' (`milestones/v1.0-phases/*`)."""
    found = [p for p in sorted((planning / "phases").glob("*")) if _is_phase_dir(p)]
    archive = planning / "archive"
    for pattern in ("*", "*/*"):
        found += [p for p in sorted(archive.glob(pattern)) if _is_phase_dir(p)]
    found += [p for p in sorted((planning / "milestones").glob("*/*")) if _is_phase_dir(p)]
    return found


def _shipped(folder: Path, planning: Path) -> bool:
    """Whether the folder sits in a shipped milestone's archive (archive/ or milestones/)."""
    return any(place in folder.parents for place in (planning / "archive", planning / "milestones"))


def _is_phase_dir(path: Path) -> bool:
    """A folder named like a phase that is no group of phases (`archive/milestone-1/` holds
    phase folders: it is not one)."""
    if not (path.is_dir() and PHASE_DIR_RE.match(path.name)):
        return False
    return not any(c.is_dir() and PHASE_DIR_RE.match(c.name) for c in path.iterdir())


def _roadmap_for(folder: Path, planning: Path) -> Path:
    """The nearest ROADMAP.md from the folder up to .planning (an archived milestone may keep its
    own); for `milestones/v1.0-phases/NN-name/`, the milestone's `milestones/v1.0-ROADMAP.md`."""
    group = folder.parent
    if group.parent == planning / "milestones" and group.name.endswith("-phases"):
        own = group.parent / f"{group.name.removesuffix('-phases')}-ROADMAP.md"
        if own.is_file():
            return own
    for parent in folder.parents:
        candidate = parent / "ROADMAP.md"
        if parent != planning and candidate.is_file() and parent.is_relative_to(planning):
            return candidate
        if parent == planning:
            break
    return planning / "ROADMAP.md"


def requirements_files(phase: Phase) -> list[Path]:
    """Every REQUIREMENTS.md that may define the phase's ids: its milestone's (requirements_file),
    the current one, and each shipped milestone's copy (`milestones/v1.0-REQUIREMENTS.md`)."""
    found = [requirements_file(phase), phase.planning / "REQUIREMENTS.md"]
    found += sorted((phase.planning / "milestones").glob("*REQUIREMENTS.md"))
    return [p for p in dict.fromkeys(found) if p.is_file()]


def requirements_file(phase: Phase) -> Path:
    """The REQUIREMENTS.md of the phase's milestone: a shipped milestone's own copy
    (`milestones/v1.0-REQUIREMENTS.md` beside its ROADMAP), else `.planning/REQUIREMENTS.md`."""
    roadmap = phase.roadmap.path
    if roadmap and roadmap.name.endswith("-ROADMAP.md"):
        own = roadmap.with_name(roadmap.name.removesuffix("ROADMAP.md") + "REQUIREMENTS.md")
        if own.is_file():
            return own
    if (
        roadmap
        and roadmap.parent != phase.planning
        and (roadmap.parent / "REQUIREMENTS.md").is_file()
    ):
        return roadmap.parent / "REQUIREMENTS.md"
    return phase.planning / "REQUIREMENTS.md"


def _current_twins(planning: Path, key: str) -> tuple[str, ...]:
    """The names of the folders of `.planning/phases/` that carry phase number `key`."""
    folder = planning / "phases"
    found = sorted(folder.iterdir()) if folder.is_dir() else []
    return tuple(
        f.name for f in found if _is_phase_dir(f) and phase_key(folder_number(f.name) or "") == key
    )


def _twins(folder: Path, key: str) -> tuple[str, ...]:
    """The names of the other phase folders of the same milestone that carry this number."""
    siblings = sorted(folder.parent.iterdir()) if folder.parent.is_dir() else []
    return tuple(
        other.name
        for other in siblings
        if other != folder
        and _is_phase_dir(other)
        and phase_key(folder_number(other.name) or "") == key
    )


def _is_plan_file(name: str) -> bool:
    """Every plan of the folder, each spelling (`03-01-PLAN.md` and `03-PLAN-01.md` may both
    exist; each may declare requirements)."""
    match = PLAN_FILE_RE.match(name)
    if match:
        return (match.group("kind") or match.group("kind2")).upper() == "PLAN"
    alone = SINGLE_PLAN_FILE_RE.match(name)
    return alone is not None and alone.group(2).upper() == "PLAN"


def _plan_sort_key(plan_id: str) -> tuple[int, str]:
    number = re.match(r"^(\d+)([a-z]?)$", plan_id.rsplit("-", 1)[-1], re.IGNORECASE)
    return (int(number.group(1)), number.group(2)) if number else (10**6, plan_id)


def _plan_files(folder: Path, key: str) -> tuple[dict[str, Path], dict[str, Path], list[Path]]:
    """(plan id -> summary, plan id -> PLAN, summaries that are no plan's) of a phase folder.

    Every `NN-MM-SUMMARY.md` in the folder is a plan's, whatever number it starts with (a
    folder is one phase: a prefixed or renumbered one keeps its files' numbers). Files of one
    number are plans numbered without their phase when any of them differs from the phase's
    number, else the phase's one plan; beside plans of two numbers they are the phase's own
    summary (not a plan's). Any other `*SUMMARY.md` (`08-CLOSEOUT-SUMMARY.md`,
    `PLANNING-SUMMARY.md`) is not a plan summary."""
    summaries: dict[str, Path] = {}
    plans: dict[str, Path] = {}
    excluded: list[Path] = []
    single: dict[str, dict[str, Path]] = {"SUMMARY": {}, "PLAN": {}}
    for path in sorted(folder.glob("*.md")):
        match = PLAN_FILE_RE.match(path.name)
        alone = SINGLE_PLAN_FILE_RE.match(path.name)
        if match:
            plan_id = f"{match.group('phase')}-{match.group('plan') or match.group('plan2')}"
            kind = (match.group("kind") or match.group("kind2")).upper()
            (summaries if kind == "SUMMARY" else plans).setdefault(plan_id, path)
        elif alone:
            single[alone.group(2).upper()][alone.group(1)] = path
        elif path.name.upper().endswith("SUMMARY.MD"):
            excluded.append(path)
    ones = single["SUMMARY"]
    unnumbered = any(phase_key(n) != key for n in ones)
    if ones and (unnumbered or not summaries):
        summaries.update(ones)  # each plan's id as its files write it (`16`, `01`)
        plans.update({n: p for n, p in single["PLAN"].items() if n in ones or unnumbered})
    else:
        excluded += ones.values()
    return summaries, plans, excluded


def load_phase(
    folder: Path, planning: Path, *, require_name: bool = False, survey: _Survey | None = None
) -> Phase:
    """The phase in `folder` with its plan files and ROADMAP status (`survey`: every phase folder
    and ROADMAP already looked at once, when many phases are loaded)."""
    number = folder_number(folder.name)
    if number is None:
        raise InputError(
            f"{folder} is not a phase folder (expected a name like 03-billing-exports)"
        )
    key = phase_key(number)
    summaries, plans, excluded = _plan_files(folder, key)
    ordered = sorted(summaries, key=_plan_sort_key)
    roadmap_path = _roadmap_for(folder, planning)
    archived = _shipped(folder, planning)
    # an archived folder, or one beside another folder of its number, is the ROADMAP's phase N
    # only when the names agree (numbers restart per milestone; a ROADMAP names one of the twins),
    # and never by an entry that fits a rival folder of N as well: a twin, or for a shipped
    # folder read against the current ROADMAP (which describes the current phases) a folder of
    # `phases/` (a milestone's own ROADMAP names its phases by number alone)
    current = archived and roadmap_path == planning / "ROADMAP.md"
    if survey is None:
        rivals = _twins(folder, key) + (_current_twins(planning, key) if current else ())
        text, read = read_text(roadmap_path), None
    else:
        rivals = survey.twins(folder, key) + (survey.current_twins(key) if current else ())
        text, read = survey.roadmap(roadmap_path)
    require_name = require_name or current or bool(rivals)
    status = roadmap_status(text, key, folder.name, require_name=require_name,
                            path=roadmap_path, rivals=rivals, read=read)  # fmt: skip
    if archived and not status.complete:
        status = RoadmapStatus(status.found, True, status.name, status.requirement_ids,
                               ("archived milestone folder",), (), roadmap_path)  # fmt: skip
    slug = folder_slug(folder.name)
    name = status.name or slug.replace("-", " ").replace("_", " ").capitalize() or f"Phase {key}"
    return Phase(
        key=key,
        number=number,
        folder=folder,
        planning=planning,
        name=name,
        summaries=tuple((pid, summaries[pid]) for pid in ordered),
        plan_ids=tuple(sorted(set(plans) | set(summaries), key=_plan_sort_key)),
        missing_summaries=tuple(sorted(set(plans) - set(summaries), key=_plan_sort_key)),
        excluded=tuple(excluded),
        roadmap=status,
        archived=archived,
        plan_files=tuple(p for p in sorted(folder.glob("*.md")) if _is_plan_file(p.name)),
    )


def _as_path(spec: str, root: Path) -> Path | None:
    for base in (Path.cwd(), root):
        candidate = (base / spec).expanduser()
        if candidate.is_dir() and _is_phase_dir(candidate.resolve()):
            return candidate.resolve()
    return None


def _planning_of(folder: Path, default: Path) -> Path:
    return next((p for p in folder.parents if p.name == ".planning"), default)


def find_phase(root: Path, spec: str) -> Phase:
    """The phase named by `spec` (number, folder name or path) in the project at `root`."""
    planning = planning_dir(root)
    as_path = _as_path(spec, root)
    if as_path is not None:
        require_inside(as_path, root)
        return load_phase(as_path, _planning_of(as_path, planning))
    folders = phase_folders(planning)
    if PHASE_DIR_RE.match(spec) and not re.fullmatch(r"\d+(?:\.\d+)*", spec):
        named = [f for f in folders if f.name == spec]
        if not named:
            raise InputError(f"no phase folder named {spec!r} under {planning}")
        return load_phase(named[0], planning, require_name=len(named) > 1)
    key = phase_key(spec)
    if not re.fullmatch(r"\d+(?:\.\d+)*", key):
        raise InputError(f"phase {spec!r} is not a number, a phase folder name or a folder path")
    same = [f for f in folders if phase_key(folder_number(f.name) or "") == key]
    if not same:
        raise InputError(
            f"no folder for phase {spec} under {planning / 'phases'}, archive/ or milestones/"
        )
    if len(same) == 1:
        return load_phase(same[0], planning)
    return _choose(same, key, planning, spec)


def _choose(folders: list[Path], key: str, planning: Path, spec: str) -> Phase:
    """The one folder that the ROADMAP's name for phase N fits best: its current names (those
    outside a shipped milestone's `<details>`), each of them (a ROADMAP that holds two current
    phases N names two folders, and then the number alone cannot decide)."""
    text = read_text(planning / "ROADMAP.md")
    entries = [e for e in _entries(normalise(text), key) if e.name] if text else []
    current = [e for e in entries if not e.in_details] or entries
    names = sorted({e.name for e in current})
    scores = {f: max((name_match(n, f.name) for n in names), default=0.0) for f in folders}
    best = max(scores.values())
    winners = [f for f, s in scores.items() if s == best and s >= _MATCH_THRESHOLD]
    if len(winners) == 1:
        return load_phase(winners[0], planning, require_name=True)
    listed = ", ".join(str(f.relative_to(planning.parent)) for f in folders)
    named = f" (ROADMAP names it {' and '.join(map(repr, names))})" if names else ""
    raise InputError(
        f"phase {spec} matches {len(folders)} folders{named}: {listed}; "
        "pass the folder name or path instead",
        data={"candidates": [str(f) for f in folders]},
    )


def completed_without_compaction(root: Path) -> list[Phase]:
    """Complete phases with plan summaries and no COMPACTED.md, in every layout phase_folders
    reads (`phases/`, archived and shipped milestones), worth compacting (WORTH_COMPACTING).
    Complete: the ROADMAP marks it so, it sits in a shipped milestone, or, for a phase the
    ROADMAP does not list, every plan has its summary."""
    survey = _Survey.of(planning_dir(root))
    found = []
    for folder, key in zip(survey.folders, survey.keys, strict=True):
        phase = load_phase(folder, survey.planning, require_name=survey.count[key] > 1,
                           survey=survey)  # fmt: skip
        if _worth(phase) and not phase.compacted_path.exists() and _complete(phase):
            found.append(phase)
    return found


@dataclass
class _Survey:
    """Every phase folder listed once and every ROADMAP read and indexed once, so a pass over
    all phases (the Stop hook, after every answer) is linear in the number of folders: each
    folder's twins come from one grouping, not from listing its parent again."""

    planning: Path
    folders: list[Path]
    keys: list[str]
    count: Counter[str]
    groups: dict[tuple[Path, str], list[str]]
    roadmaps: dict[Path, tuple[str | None, _Roadmap | None]] = field(default_factory=dict)

    @classmethod
    def of(cls, planning: Path) -> _Survey:
        folders = phase_folders(planning)
        keys = [phase_key(folder_number(f.name) or "") for f in folders]
        groups: defaultdict[tuple[Path, str], list[str]] = defaultdict(list)
        for folder, key in zip(folders, keys, strict=True):
            groups[(folder.parent, key)].append(folder.name)
        return cls(planning, folders, keys, Counter(keys), dict(groups))

    def twins(self, folder: Path, key: str) -> tuple[str, ...]:
        """As _twins: the other phase folders beside this one that carry its number."""
        return tuple(
            n for n in sorted(self.groups.get((folder.parent, key), ())) if n != folder.name
        )

    def current_twins(self, key: str) -> tuple[str, ...]:
        """As _current_twins: the folders of `.planning/phases/` that carry this number."""
        return tuple(sorted(self.groups.get((self.planning / "phases", key), ())))

    def roadmap(self, path: Path) -> tuple[str | None, _Roadmap | None]:
        if path not in self.roadmaps:
            text = read_text(path)
            self.roadmaps[path] = (text, _Roadmap.of(text) if text else None)
        return self.roadmaps[path]


def _worth(phase: Phase) -> bool:
    return sum(path.stat().st_size for _, path in phase.summaries) >= WORTH_COMPACTING


# summaries shorter than this are shorter than any compacted summary (its frontmatter, title
# and a verdict line an id alone are about this long): not offered for compaction (`compact`
# itself decides exactly and says "nothing to compact")
WORTH_COMPACTING = 400


def _complete(phase: Phase) -> bool:
    if phase.roadmap.complete:
        return True
    return not phase.roadmap.found and not phase.missing_summaries


def phase_specs(phases: list[Phase], root: Path) -> list[str]:
    """What names each phase on the command line: its number when no other phase folder
    carries it, else its folder's path from the project root (one listing of the folders)."""
    numbers = Counter(
        phase_key(folder_number(f.name) or "") for f in phase_folders(planning_dir(root))
    )
    return [p.key if numbers[p.key] == 1 else p.folder.relative_to(root).as_posix()
            for p in phases]  # fmt: skip


@dataclass(frozen=True)
class PhaseContext:
    """What a planner reads about a finished phase (spec "Recall Integration")."""

    source: str  # "compacted" | "summaries"
    files: tuple[Path, ...]
    text: str


def phase_context(phase: Phase) -> PhaseContext:
    """The COMPACTED.md when it exists, else the plan summaries in plan order."""
    compacted = read_text(phase.compacted_path)
    if compacted is not None:
        return PhaseContext("compacted", (phase.compacted_path,), compacted)
    files = tuple(path for _, path in phase.summaries)
    parts = [
        f"<!-- {path.name} -->\n{normalise(read_text(path) or '').strip()}\n" for path in files
    ]
    return PhaseContext("summaries", files, "\n".join(parts))
