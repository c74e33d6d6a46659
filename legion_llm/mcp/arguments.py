"""Tool arguments the schema refuses, said in one line: the argument's name and what it accepts
(read from the tool's own input schema), never pydantic's multi-line report and its URL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

SHOWN_VALUE = 40  # characters of a refused value repeated in the message


def argument_error(tool: str, exc: ValidationError, schema: Mapping[str, Any] | None) -> str:
    """`Error executing tool T: argument 'x' ...; argument 'y' ...` (one line, each argument once)."""
    properties = (schema or {}).get("properties", {})
    problems: dict[str, str] = {}
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "arguments"
        if name in problems:
            continue
        problems[name] = _problem(name, error, properties.get(name))
    return f"Error executing tool {tool}: " + "; ".join(problems.values())


def _problem(name: str, error: Mapping[str, Any], schema: Mapping[str, Any] | None) -> str:
    if error["type"] == "missing":
        accepts = f" ({accepts_text(schema)})" if schema else ""
        return f"argument {name!r} is required{accepts}"
    if schema is None:
        return f"argument {name!r} is not one this tool takes"
    given = error.get("input")
    shown = repr(given) if not isinstance(given, str) else repr(given[:SHOWN_VALUE])
    return f"argument {name!r} must be {accepts_text(schema)}, not {shown}"


def accepts_text(schema: Mapping[str, Any]) -> str:
    """What a JSON schema accepts, in words: `one of a, b or c`, `a string of 1+ characters`,
    `a whole number of at least 1`, `a number or a string`, `a list of strings`, `null`."""
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]]
        return "one of " + (
            ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]
        )
    if "const" in schema:
        return repr(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = [accepts_text(part) for part in schema[key] if part.get("type") != "null"]
            merged = _merged_enums(schema[key])
            text = merged or " or ".join(dict.fromkeys(parts))
            nullable = any(part.get("type") == "null" for part in schema[key])
            optional = "default" in schema and schema["default"] is None  # null: left out
            return text + (" (or null)" if nullable and not optional else "")
    kind = schema.get("type")
    if kind == "string":
        least = schema.get("minLength")
        return "a string" + (f" of at least {least} character(s)" if least else "")
    if kind in ("integer", "number"):
        noun = "a whole number" if kind == "integer" else "a number"
        bounds = [f"at least {schema['minimum']}" if "minimum" in schema else "",
                  f"at most {schema['maximum']}" if "maximum" in schema else ""]  # fmt: skip
        shown = ", ".join(b for b in bounds if b)
        return noun + (f" ({shown})" if shown else "")
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        items = schema.get("items") or {}
        return "a list" + (f", each item {accepts_text(items)}" if items else "")
    if kind == "object":
        return "an object"
    return "a value of the documented type"


def _merged_enums(parts: list[Mapping[str, Any]]) -> str:
    """`Signal | Literal["all"]`: one list of every value, when every part is an enum."""
    kept = [part for part in parts if part.get("type") != "null"]
    values = [
        v for part in kept for v in part.get("enum", [part["const"]] if "const" in part else [])
    ]
    if all("enum" in part or "const" in part for part in kept) and values:
        return accepts_text({"enum": list(dict.fromkeys(values))})
    return ""


def unknown_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """The one-line refusal of arguments the tool does not take (an empty string: none)."""
    properties = schema.get("properties", {})
    unknown = [name for name in arguments if name not in properties]
    if not unknown:
        return ""
    names = ", ".join(repr(name) for name in unknown)
    noun = "argument" if len(unknown) == 1 else "arguments"
    return (
        f"Error executing tool {tool}: unknown {noun} {names} (it takes: {', '.join(properties)})"
    )


def wrong_kinds(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """The one-line refusal of a boolean given where a number or string is meant (`phase: true`
    is not phase 1), or of anything but true or false where a boolean is meant (`apply: 1`)."""
    properties = schema.get("properties", {})
    problems = []
    for name, value in arguments.items():
        part = properties.get(name)
        if part is None or value is None:
            continue
        kinds = _types(part)
        if isinstance(value, bool) and kinds and "boolean" not in kinds:
            problems.append(
                f"argument {name!r} must be {accepts_text(part)}, not {str(value).lower()}"
            )
        elif not isinstance(value, bool) and kinds == {"boolean"}:
            shown = repr(value)[:SHOWN_VALUE]
            problems.append(f"argument {name!r} must be true or false, not {shown}")
    return f"Error executing tool {tool}: " + "; ".join(problems) if problems else ""


def nul_arguments(tool: str, arguments: Mapping[str, Any]) -> str:
    """The one-line refusal of a string argument (or a string in a list) holding a NUL
    character: no path, phase, mission or memory text can hold one (a path with it cannot even be
    asked for), so it is refused before anything runs."""
    held = [name for name, value in arguments.items() if _holds_nul(value)]
    if not held:
        return ""
    return f"Error executing tool {tool}: " + "; ".join(
        f"argument {name!r} must not hold a NUL character (\\x00)" for name in held
    )


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    return False


def _types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema accepts besides null (an enum or const counts as `enum`)."""
    parts = schema.get("anyOf") or schema.get("oneOf")
    if parts:
        return {kind for part in parts for kind in _types(part)}
    if "enum" in schema or "const" in schema:
        return {"enum"}
    kind = schema.get("type")
    return set() if kind in (None, "null") else {str(kind)}


def listed_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's input schema as the client is shown it: no generated titles, an optional
    argument as its own type (not `anyOf [type, null]` with a null default), and no argument
    beyond those listed (`additionalProperties: false`, as the call refuses them)."""
    properties = {
        name: _listed_property(part) for name, part in schema.get("properties", {}).items()
    }
    listed = {k: v for k, v in schema.items() if k not in ("title", "properties")}
    return {**listed, "properties": properties, "additionalProperties": False}


def _listed_property(part: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in part.items() if k != "title"}
    parts = out.get("anyOf")
    if parts is not None and out.get("default", 0) is None:
        kept = [p for p in parts if p.get("type") != "null"]
        out.pop("anyOf")
        out.pop("default")
        if len(kept) == 1:
            out = {**kept[0], **out}
        else:
            out["anyOf"] = kept
    return out


def server_class() -> type:
    """The SDK's server, refusing unknown arguments and booleans that are not meant, saying a
    refused argument in one line, and listing compact schemas (imported only by build_server)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    class Server(MCPServer[Any]):
        async def list_tools(self) -> Any:
            tools = await super().list_tools()
            # The output schema says only "an object": every tool returns the --json envelope,
            # which the server's instructions describe once.
            return [t.model_copy(update={"input_schema": listed_schema(t.input_schema),
                                         "output_schema": None}) for t in tools]  # fmt: skip

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            tool = self._tool_manager.get_tool(name)
            if tool is not None:
                given = arguments or {}
                refused = (
                    unknown_arguments(name, given, tool.parameters)
                    or wrong_kinds(name, given, tool.parameters)
                    or nul_arguments(name, given)
                )
                if refused:
                    raise ToolError(refused)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                    raise
                schema = None if tool is None else tool.parameters
                raise ToolError(argument_error(name, cause, schema)) from cause

    return Server
