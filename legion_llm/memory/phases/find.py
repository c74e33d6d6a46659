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
from dataclasses import dataclass
from pathlib import Path

from legion_llm.errors import InputError
from legion_llm.memory.files import read_text, require_inside
from legion_llm.memory.phases.extract import ids_in_line, normalise
from legion_llm.memory.phases.planning import phase_key
from legion_llm.memory.table import parse_markdown

PHASE_DIR_RE = re.compile(r"^(\d+(?:\.\d+)?)-(.+)$")
PLAN_FILE_RE = re.compile(r"^(\d+(?:\.\d+)?)-(\d+[a-z]?)-(SUMMARY|PLAN)\.md$", re.IGNORECASE)
# a phase of one plan written without a plan number: `16-PLAN.md` and `16-SUMMARY.md`
SINGLE_PLAN_FILE_RE = re.compile(r"^(\d+(?:\.\d+)?)-(SUMMARY|PLAN)\.md$", re.IGNORECASE)
_CHECK_RE = re.compile(
    r"^\s*[-*]\s*\[([ xX])\]\s*(?:\*\*)?Phase\s+(\d+(?:\.\d+)?)\s*[:.—–-]\s*(.*)$", re.IGNORECASE
)
_HEADING_RE = re.compile(r"^(#{2,4})\s+Phase\s+(\d+(?:\.\d+)?)\s*[:.—–-]\s*(.*)$", re.IGNORECASE)
_ROW_PHASE_RE = re.compile(r"^\s*(?:Phase\s+)?(\d+(?:\.\d+)?)\b\.?\s*[—–:-]?\s*(.*)$", re.I)
_REQ_RE = re.compile(r"^\s*(?:[-*]\s*)?\*\*Requirements?:?\*\*\s*:?\s*(.*)$", re.IGNORECASE)
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
    return {w for w in re.split(r"[^a-z0-9]+", text.lower()) if w}


def name_match(name: str, slug: str) -> float:
    """Share of words a ROADMAP name and a folder slug have in common (0..1)."""
    a, b = slug_words(name), slug_words(PHASE_DIR_RE.sub(r"\2", slug))
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
    entries: list[_Entry] = []
    in_details = False
    for index, line in enumerate(text.split("\n")):
        low = line.strip().lower()
        in_details = (in_details or low.startswith("<details")) and "</details>" not in low
        check, heading = _CHECK_RE.match(line), _HEADING_RE.match(line)
        if check and phase_key(check.group(2)) == key:
            entries.append(
                _Entry("checklist", clean_name(check.group(3)), check.group(1) in "xX",
                       in_details, index)
            )  # fmt: skip
        elif heading and phase_key(heading.group(2)) == key:
            entries.append(_Entry("heading", clean_name(heading.group(3)), None, in_details, index))
    return entries + _progress_entries(text, key)


def _progress_entries(text: str, key: str) -> list[_Entry]:
    doc = parse_markdown(text)
    found: list[_Entry] = []
    for table in doc.tables:
        if "phase" not in table.columns:
            continue
        for line_no, cells in doc.rows(table):
            match = _ROW_PHASE_RE.match(cells.get("phase", "").replace("*", ""))
            if not match or phase_key(match.group(1)) != key:
                continue
            found.append(_Entry("progress", clean_name(match.group(2)), _row_done(cells), False,
                                line_no))  # fmt: skip
    return found


def _row_done(cells: dict[str, str]) -> bool | None:
    status = cells.get("status", "").replace("*", "").lower()
    if status and _DONE_RE.search(status) and not _OPEN_RE.search(status):
        return True
    for column in ("plans_complete", "completed", "plans"):
        fraction = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", cells.get(column, ""))
        if fraction and int(fraction.group(1)) == int(fraction.group(2)) > 0:
            return True
    return False if status else None


def _pick(entries: list[_Entry], slug: str, require_name: bool) -> list[_Entry]:
    """Entries that describe this folder's phase when the ROADMAP holds several phases N."""
    named = [e for e in entries if e.name]
    best = max((name_match(e.name, slug) for e in named), default=0.0)
    if best >= _MATCH_THRESHOLD:
        return [e for e in entries if not e.name or name_match(e.name, slug) == best]
    if require_name:
        return []
    outside = [e for e in entries if not e.in_details]
    return outside or entries


def roadmap_status(
    text: str | None, key: str, slug: str, *, require_name: bool = False, path: Path | None = None
) -> RoadmapStatus:
    if not text:
        return RoadmapStatus(False, False, None, (), (), (), path)
    text = normalise(text)
    entries = _pick(_entries(text, key), slug, require_name)
    signals = [e for e in entries if e.complete is not None]
    yes = tuple(_describe(e) for e in signals if e.complete)
    no = tuple(_describe(e) for e in signals if not e.complete)
    heading = next((e for e in entries if e.kind == "heading"), None)
    names = [e.name for e in entries if e.name and not e.in_details]
    name = heading.name if heading and heading.name else (names[0] if names else None)
    ids = _requirements(text, heading.line) if heading else ()
    return RoadmapStatus(bool(entries), bool(yes), name, ids, yes, no if yes else (), path)


def _describe(entry: _Entry) -> str:
    mark = {"checklist": "checklist", "progress": "Progress table"}[entry.kind]
    state = "complete" if entry.complete else "not complete"
    return f"ROADMAP {mark} (line {entry.line + 1}): {state}"


def _requirements(text: str, heading_line: int) -> tuple[str, ...]:
    lines = text.split("\n")
    for line in lines[heading_line + 1 :]:
        if re.match(r"^#{1,4}\s", line):
            break
        match = _REQ_RE.match(line)
        if match:
            return tuple(ids_in_line(match.group(1)))
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
    return path.is_dir() and PHASE_DIR_RE.match(path.name) is not None


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


def _plan_sort_key(plan_id: str) -> tuple[int, str]:
    number = re.match(r"^(\d+)([a-z]?)$", plan_id.rsplit("-", 1)[-1], re.IGNORECASE)
    return (int(number.group(1)), number.group(2)) if number else (10**6, plan_id)


def _plan_files(folder: Path, key: str) -> tuple[dict[str, Path], dict[str, Path], list[Path]]:
    summaries: dict[str, Path] = {}
    plans: dict[str, Path] = {}
    excluded: list[Path] = []
    single: dict[str, Path] = {}
    for path in sorted(folder.glob("*.md")):
        match = PLAN_FILE_RE.match(path.name)
        alone = SINGLE_PLAN_FILE_RE.match(path.name)
        if match and phase_key(match.group(1)) == key:
            plan_id = f"{match.group(1)}-{match.group(2)}"
            if match.group(3).upper() == "SUMMARY":
                summaries[plan_id] = path
            else:
                plans[plan_id] = path
        elif alone and phase_key(alone.group(1)) == key and alone.group(2).upper() == "SUMMARY":
            single[alone.group(1)] = path
        elif path.name.upper().endswith("SUMMARY.MD"):
            excluded.append(path)
    if single and not summaries:  # the phase's one plan, its id as the files write it (`16`)
        summaries.update(single)
        plans.update({pid: folder / f"{pid}-PLAN.md" for pid in single
                      if (folder / f"{pid}-PLAN.md").is_file()})  # fmt: skip
    else:
        excluded += single.values()
    return summaries, plans, excluded


def load_phase(folder: Path, planning: Path, *, require_name: bool = False) -> Phase:
    """The phase in `folder` with its plan files and ROADMAP status."""
    match = PHASE_DIR_RE.match(folder.name)
    if not match:
        raise InputError(
            f"{folder} is not a phase folder (expected a name like 03-billing-exports)"
        )
    number, key = match.group(1), phase_key(match.group(1))
    summaries, plans, excluded = _plan_files(folder, key)
    ordered = sorted(summaries, key=_plan_sort_key)
    roadmap_path = _roadmap_for(folder, planning)
    archived = _shipped(folder, planning)
    # an archived folder is only the ROADMAP's phase N when the names agree (numbers restart)
    status = roadmap_status(read_text(roadmap_path), key, folder.name,
                            require_name=require_name or archived, path=roadmap_path)  # fmt: skip
    if archived and not status.complete:
        status = RoadmapStatus(status.found, True, status.name, status.requirement_ids,
                               ("archived milestone folder",), (), roadmap_path)  # fmt: skip
    name = status.name or match.group(2).replace("-", " ").capitalize()
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
        plan_files=tuple(plans[pid] for pid in sorted(plans, key=_plan_sort_key)),
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
    if PHASE_DIR_RE.match(spec) and not re.fullmatch(r"\d+(?:\.\d+)?", spec):
        named = [f for f in folders if f.name == spec]
        if not named:
            raise InputError(f"no phase folder named {spec!r} under {planning}")
        return load_phase(named[0], planning, require_name=len(named) > 1)
    key = phase_key(spec)
    if not re.fullmatch(r"\d+(?:\.\d+)?", key):
        raise InputError(f"phase {spec!r} is not a number, a phase folder name or a folder path")
    same = [f for f in folders if phase_key(PHASE_DIR_RE.sub(r"\1", f.name)) == key]
    if not same:
        raise InputError(
            f"no folder for phase {spec} under {planning / 'phases'}, archive/ or milestones/"
        )
    if len(same) == 1:
        return load_phase(same[0], planning)
    return _choose(same, key, planning, spec)


def _choose(folders: list[Path], key: str, planning: Path, spec: str) -> Phase:
    text = read_text(planning / "ROADMAP.md")
    status = roadmap_status(text, key, "", path=planning / "ROADMAP.md")
    scores = {f: name_match(status.name, f.name) if status.name else 0.0 for f in folders}
    best = max(scores.values())
    winners = [f for f, s in scores.items() if s == best and s >= _MATCH_THRESHOLD]
    if len(winners) == 1:
        return load_phase(winners[0], planning, require_name=True)
    listed = ", ".join(str(f.relative_to(planning.parent)) for f in folders)
    named = f" (ROADMAP names it {status.name!r})" if status.name else ""
    raise InputError(
        f"phase {spec} matches {len(folders)} folders{named}: {listed}; "
        "pass the folder name or path instead",
        data={"candidates": [str(f) for f in folders]},
    )


def completed_without_compaction(root: Path) -> list[Phase]:
    """Completed phases in `.planning/phases/` that have summaries and no COMPACTED.md."""
    planning = planning_dir(root)
    folders = [f for f in phase_folders(planning) if f.parent == planning / "phases"]
    keys = [phase_key(PHASE_DIR_RE.sub(r"\1", f.name)) for f in folders]
    found = []
    for folder, key in zip(folders, keys, strict=True):
        phase = load_phase(folder, planning, require_name=keys.count(key) > 1)
        if phase.roadmap.complete and phase.summaries and not phase.compacted_path.exists():
            found.append(phase)
    return found


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
