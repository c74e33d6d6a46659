"""`trust [--revoke]`: let this project's settings.json set what a cloned repository may not
(config.SENSITIVE: the program run as `claude`, the API host, the model and its price, weaker
redaction; config.LOWER_ONLY: a looser bound on money or time).

The record is kept outside the repository (trust.py) with the sha256 of settings.json as it is
now, and of the program its claude_cli names: when either changes, those settings are ignored
again until you trust it again.
The MCP server has no such tool: an agent cannot trust a project for you.
"""

from __future__ import annotations

from typing import Any

from legion_llm.app.context import Common
from legion_llm.app.result import CommandResult

_BOUND = "a bound on money or time an untrusted project may only lower"


def trust_result(c: Common, revoke: bool) -> CommandResult:
    from legion_llm.config import SENSITIVE, project_sensitive
    from legion_llm.trust import ABSENT, record_trust, trust_state

    path = c.paths.settings
    sensitive, digest, program = project_sensitive(path)
    was_trusted = trust_state(c.root, digest).recorded is not None  # as any settings.json
    store = record_trust(c.root, None if revoke else digest, None if revoke else program)
    data: dict[str, Any] = {
        "root": str(c.root),
        "trusted": not revoke,
        "was_trusted": was_trusted,
        "settings": str(path),
        "settings_sha256": None if revoke else digest,
        "sensitive": {key: _shown(key, value) for key, value in sensitive.items()},
        "store": str(store),
    }
    if program is not None and not revoke:
        data["program"] = program  # the program claude_cli names, pinned by its bytes
    if revoke:
        said = "No longer trusted:" if was_trusted else "Not trusted, so nothing to revoke:"
        human = f"{said} {c.root} (its settings.json may not set {', '.join(SENSITIVE)})."
        return CommandResult("trust", data, human)
    if digest == ABSENT:
        human = (
            f"Trusted {c.root}, which has no settings.json (recorded in {store}): nothing is "
            "unlocked now, and a settings.json added later is honoured only after "
            "`legion-llm trust` again."
        )
        return CommandResult("trust", data, human)
    lines = [f"Trusted {c.root} with its settings.json as it is now (recorded in {store})."]
    if sensitive:
        lines += ["It sets, and is now honoured for:"]
        lines += [f"  memory.{key} = {shown}  ({SENSITIVE.get(key, _BOUND)})"
                  for key, shown in data["sensitive"].items()]  # fmt: skip
    else:
        lines.append("It sets none of the settings that trust unlocks.")
    if program is not None:
        lines.append(
            f"The program it names is pinned too: {program['path']} (sha256 {program['sha256']}); "
            "when that file changes, the project is not trusted until you run `legion-llm trust` again."
        )
    lines.append("When settings.json changes, run `legion-llm trust` again to honour it.")
    return CommandResult("trust", data, "\n".join(lines))


def _shown(key: str, value: Any) -> Any:
    """What a setting says, without a password in a URL; an allow list as its patterns."""
    from legion_llm.app.session import display_url

    if key == "llm.base_url" and isinstance(value, str):
        return display_url(value)
    return list(value) if isinstance(value, tuple) else value
