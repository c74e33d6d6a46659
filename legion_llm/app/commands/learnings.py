"""Mission learnings (`.mission-control/memory/`): add one, load them for a goal, extract them
from a finished mission or phase."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.context import Common, check_stored_sizes
from legion_llm.app.host import HostStep, MakeStep
from legion_llm.app.result import CommandResult
from legion_llm.app.session import LLMSession, usage_lines
from legion_llm.errors import InputError

if TYPE_CHECKING:
    from legion_llm.memory.learnings.read import Learning

MEMORY = ".mission-control/memory"


def now_text(today: str | None, c: Common) -> str:
    """extractedAt: --today at midnight UTC (reproducible runs), else the current UTC time."""
    if today is not None:
        return f"{c.today.isoformat()}T00:00:00Z"
    return datetime.now(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def add_result(c: Common, learning: Learning) -> CommandResult:
    """`learnings add` for the CLI and the MCP server: a learning with the same title and body
    as a stored one reinforces it (or, given by the same source already, changes nothing)."""
    from legion_llm.memory.learnings.write import add_learning

    check_stored_sizes(vars(learning))
    warnings: list[str] = []
    added = add_learning(c.paths.learnings_dir, c.root, learning, warnings)
    stored, path = added.learning, f"{MEMORY}/{added.learning.file}"
    data = {
        "learning": {**stored.to_dict(), "body": stored.body},
        "path": path,
        "action": added.action,
        "changes": list(added.changes),
    }
    human = {
        "added": f"Wrote {path}",
        "reinforced": f"Already stored in {path}: reinforced it ({', '.join(added.changes)})",
        "existing": f"Already stored in {path} from {stored.source}: nothing written",
    }[added.action]
    return CommandResult("learnings add", data, human, warnings)


def load_result(c: Common, goal: str, max_tokens: int, limit: int) -> CommandResult:
    """`learnings load` for the CLI and the MCP server."""
    from legion_llm.memory.learnings.load import load_for_goal, section_tokens
    from legion_llm.memory.learnings.read import read_learnings

    found = read_learnings(c.paths.learnings_dir)
    loaded = load_for_goal(found.learnings, goal, max_tokens=max_tokens, limit=limit)
    human = loaded.section or "No learnings for this goal."
    if not loaded.section and loaded.left_out:  # they exist, the budget is what left them out
        least = min(section_tokens([item]) for item in loaded.left_out)
        human = (
            f"{len(loaded.left_out)} learning(s) apply to this goal, but none fits in "
            f"--max-tokens {max_tokens} (the smallest needs about {least})."
        )
    return CommandResult("learnings load", loaded.to_dict(), human, found.warnings)


MISSIONS = (".mission-control/missions", ".mission-control/missions/archive")


def mission_by_id(root: Path, value: str) -> Path | None:
    """The folder of the mission `value` names by id (or by the start of one) under
    .mission-control/missions/ or its archive/; None when `value` is not a bare name or names
    none; one line naming the candidates when it names more than one."""
    name = value.strip()
    if not name or Path(name).name != name or name.startswith("."):
        return None
    folders = [f for where in MISSIONS if (root / where).is_dir()
               for f in sorted((root / where).iterdir()) if f.is_dir()]  # fmt: skip
    exact = [f for f in folders if f.name == name]
    found = exact or [f for f in folders if f.name.startswith(name)]
    if len(found) > 1:
        names = ", ".join(f.name for f in found[:5]) + (", ..." if len(found) > 5 else "")
        raise InputError(f"mission {name!r} is ambiguous: it starts {len(found)} mission ids "
                         f"({names}); give the whole id or the folder")  # fmt: skip
    return found[0] if found else None


def no_mission(mission: Path) -> Path:
    raise InputError(f"{mission} is neither a folder nor a mission id under {MISSIONS[0]}/")


def check_folder(c: Common, folder: Path) -> None:
    """A folder inside the root that is a mission or a phase (else one line saying which not)."""
    from legion_llm.memory.files import require_inside
    from legion_llm.pipeline.learnings.mission import folder_kind

    folder_kind(require_inside(folder, c.root))


def extract_maker(folder: Path, now: str) -> MakeStep:
    """The host step of `learnings extract FOLDER`; problems are the learnings it rejects."""

    def make(c: Common, args: dict[str, Any] | None) -> HostStep:
        where = _relative(folder, c)
        if args is not None and args.get("mission") != where:
            raise InputError(f"the ticket is for {args.get('mission')}, not {where}")
        stamp = now if args is None else str(args.get("now") or now)

        def run(session: LLMSession, write: bool) -> CommandResult:
            return extract_result(c, folder, session, stamp, not write)

        keep = {"mission": where, "now": stamp, "today": c.today.isoformat()}
        return HostStep("learnings extract", where, keep, run, _rejected,
                        submit_cli=f"legion-llm learnings extract {where}",
                        submit_tool="memory_extract_learnings")  # fmt: skip

    return make


def _relative(folder: Path, c: Common) -> str:
    resolved = folder.resolve()
    return str(resolved.relative_to(c.root)) if resolved.is_relative_to(c.root) else str(resolved)


def _rejected(data: dict[str, Any]) -> list[str]:
    return [f"learning {item['title']!r}: {item.get('reason', 'rejected')}"
            for item in data["skipped"] if item["action"] == "rejected"]  # fmt: skip


def extract_result(
    c: Common, folder: Path, session: LLMSession, now: str, dry_run: bool
) -> CommandResult:
    """`learnings extract` for the CLI and the MCP server."""
    from legion_llm.pipeline.learnings.extract import run_extract

    result = run_extract(c.paths, folder, session.engine, now=now, dry_run=dry_run)
    data: dict[str, Any] = {
        **result.to_dict(),
        "notices": list(session.engine.notices.messages),
        "usage": session.usage(),
    }
    warnings = [*session.warnings, *result.warnings]
    return CommandResult("learnings extract", data, human_lines(data, session.verbose), warnings)


def human_lines(data: dict[str, Any], verbose: bool) -> list[str]:
    """What `learnings extract` says: each learning written, reinforced or skipped, the usage."""
    dry = data["dry_run"]
    lines = [f"{data['mission']} ({data['kind']}){': dry run, nothing written' if dry else ''}"]
    for item in data["written"]:
        lines.append(
            f"  {'would write' if dry else 'wrote'} {item['file'] or '(new file)'}: {item['title']}"
        )
    for item in data["reinforced"]:
        changes = ", ".join(item.get("changes", []))
        lines.append(f"  {'would reinforce' if dry else 'reinforced'} {item['file']}: {changes}")
    for item in data["skipped"]:
        lines.append(f"  skipped ({item['action']}): {item['title']}: {item.get('reason', '')}")
    return lines + usage_lines(data["usage"], verbose)
