"""Prompt files: `prompts/<name>.md`, a `# system` part and a `# user` part, strict placeholders.

The format is documented in prompts/README.md. In short: text above the `# system` line is a
note for people and is not sent; the system part must not contain placeholders (it is the
stable block that can carry `cache_control`); an optional `# context` part holds the large input
that stays the same across a re-ask (sent first in the user message, as its own cacheable
block); the `# user` part holds the rest. Both may use `{{name}}` placeholders, and rendering
fails when a variable is missing, unused, or not a string. Substitution is a single pass, so a
value that itself contains `{{x}}` is sent as written.

Each prompt's identity is the sha256 of its file text (line endings normalised to LF), so a
result can say exactly which prompt produced it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from legion_llm.llm.errors import PromptError

SYSTEM_MARK = "# system"
CONTEXT_MARK = "# context"
USER_MARK = "# user"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_VARIABLE = re.compile(r"^[a-z_][a-z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)


@dataclass(frozen=True)
class RenderedPrompt:
    """What is sent: the stable system text, the stable context (may be empty) and the per-call
    user text, with every variable filled in."""

    name: str
    sha256: str
    system: str
    user: str
    context: str = ""

    @property
    def full_user(self) -> str:
        """The whole user message as one text (the context first): for engines that send a
        single user turn and have no cache to place a block boundary for."""
        return f"{self.context}\n\n{self.user}" if self.context else self.user


@dataclass(frozen=True)
class Prompt:
    name: str
    path: Path
    sha256: str
    system: str
    user_template: str
    variables: frozenset[str]
    context_template: str = ""

    def render(self, variables: Mapping[str, object]) -> RenderedPrompt:
        """Fill the user part; a missing, unused or non-string variable is a PromptError."""
        given = set(variables)
        missing = sorted(self.variables - given)
        unused = sorted(given - self.variables)
        if missing or unused:
            parts = [f"missing {', '.join(missing)}" if missing else ""]
            parts.append(f"unused {', '.join(unused)}" if unused else "")
            detail = "; ".join(p for p in parts if p)
            raise PromptError(
                f"prompt {self.name!r}: variables do not match its placeholders ({detail})"
            )
        for key, value in variables.items():
            if not isinstance(value, str):
                kind = type(value).__name__
                raise PromptError(
                    f"prompt {self.name!r}: variable {key!r} must be a string, not {kind}"
                )

        def fill(match: re.Match[str]) -> str:
            return str(variables[match.group(1).strip()])

        user = _PLACEHOLDER.sub(fill, self.user_template)
        context = _PLACEHOLDER.sub(fill, self.context_template)
        return RenderedPrompt(self.name, self.sha256, self.system, user, context)


def prompt_path(name: str, directory: Path | None = None) -> Path:
    if not _NAME.match(name):
        raise PromptError(f"prompt name {name!r} must be lower-case letters, digits, '-' or '_'")
    if directory is None:
        from legion_llm.resources import prompts_dir

        directory = prompts_dir()
    return directory / f"{name}.md"


def load_prompt(name: str, directory: Path | None = None) -> Prompt:
    """Read and check `<directory>/<name>.md` (default: the shipped prompts folder)."""
    path = prompt_path(name, directory)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptError(f"prompt {name!r} not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptError(
            f"prompt {name!r} cannot be read: {path} ({type(exc).__name__})"
        ) from None
    return parse_prompt(name, raw, path)


def parse_prompt(name: str, raw: str, path: Path) -> Prompt:
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    system, context, user = _split(name, text)
    if _PLACEHOLDER.search(system):
        raise PromptError(
            f"prompt {name!r}: the # system part must not hold placeholders (it is the cached block)"
        )
    found = _PLACEHOLDER.finditer(context + "\n" + user)
    names = {_check_placeholder(name, m.group(1)) for m in found}
    return Prompt(name, path, digest, system, user, frozenset(names), context)


def _split(name: str, text: str) -> tuple[str, str, str]:
    """(system, context, user): the parts after `# system`, the optional `# context`, `# user`."""
    lines = text.split("\n")
    stripped = [line.rstrip() for line in lines]
    if SYSTEM_MARK not in stripped:
        raise PromptError(f"prompt {name!r} has no '{SYSTEM_MARK}' line")
    start = stripped.index(SYSTEM_MARK)
    if USER_MARK not in stripped[start + 1 :]:
        raise PromptError(f"prompt {name!r} has no '{USER_MARK}' line after '{SYSTEM_MARK}'")
    middle = stripped.index(USER_MARK, start + 1)
    context_at = (
        stripped.index(CONTEXT_MARK, start + 1)
        if CONTEXT_MARK in stripped[start + 1 : middle]
        else middle
    )
    system = "\n".join(lines[start + 1 : context_at]).strip("\n")
    context = "\n".join(lines[context_at + 1 : middle]).strip("\n") if context_at < middle else ""
    user = "\n".join(lines[middle + 1 :]).strip("\n")
    if not system.strip() or not user.strip():
        raise PromptError(f"prompt {name!r}: the # system and # user parts must both have text")
    if context_at < middle and not context.strip():
        raise PromptError(f"prompt {name!r}: the # context part is empty (drop the line)")
    return system, context, user


def _check_placeholder(prompt: str, inner: str) -> str:
    variable = inner.strip()
    if not _VARIABLE.match(variable):
        raise PromptError(
            f"prompt {prompt!r}: malformed placeholder {{{{{inner}}}}} (use {{{{lower_case_name}}}})"
        )
    return variable
