"""A stand-in for the `claude` CLI that follows the contract measured on Claude Code 2.1.197.

claude_stub.py copies this file, with a shebang, to `<folder>/claude`; it reads its scenario
from `<folder>/scenario.json` and appends every call to `<folder>/calls.jsonl`. What it copies
from the real CLI (see tests/llm/test_claude_code_real.py, which checks the real one):
- `--version` prints "2.1.197 (Claude Code)"; `--help` lists the options, and an `auth` command
  (a CLI too old for `--json-schema` lists neither, and treats `auth status` as a prompt);
- `auth status` prints {"loggedIn", "authMethod", "apiProvider"} and exits 1 when logged out;
- options are parsed like commander: an unknown option is "error: unknown option '--x'" on
  stderr, exit 1; `--json-schema` and `--settings` (a JSON string here) must be valid JSON;
- `-p --output-format json` reads the prompt on stdin and prints one JSON result envelope:
  `type`, `subtype`, `is_error`, `api_error_status`, `result`, `structured_output`,
  `total_cost_usd`, `usage`, `modelUsage`, ... (exit 1 when `is_error`).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VALUED = {"--output-format", "--json-schema", "--model", "--system-prompt", "--max-budget-usd",
          "--effort", "--append-system-prompt", "--permission-mode", "--setting-sources",
          "--settings"}  # fmt: skip
VARIADIC = {"--tools", "--allowed-tools", "--disallowed-tools"}
FLAGS = {"-p", "--print", "--no-session-persistence", "--verbose", "-h", "--help", "-v",
         "--version", "--strict-mcp-config"}  # fmt: skip
NEW_OPTIONS = {"--json-schema", "--max-budget-usd", "--no-session-persistence", "--tools"}
ENV_SEEN = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_DISABLE_CLAUDE_MDS",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS", "CLAUDE_CODE_MAX_RETRIES", "CLAUDE_CODE_EFFORT_LEVEL",
            "DISABLE_PROMPT_CACHING", "MAX_STRUCTURED_OUTPUT_RETRIES")  # fmt: skip


def scenario() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / "scenario.json").read_text(encoding="utf-8"))
    return loaded


def log(entry: dict[str, Any]) -> None:
    with (HERE / "calls.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def fail(text: str, code: int = 1) -> None:
    sys.stderr.write(text + "\n")
    sys.exit(code)


def parse(argv: list[str], old: bool) -> tuple[dict[str, Any], list[str]]:
    options: dict[str, Any] = {}
    words: list[str] = []
    known = (VALUED | VARIADIC | FLAGS) - (NEW_OPTIONS if old else set())
    index = 0
    while index < len(argv):
        arg = argv[index]
        name, _, inline = arg.partition("=")
        if not arg.startswith("-"):
            words.append(arg)
        elif name not in known:
            fail(f"error: unknown option '{name}'")
        elif name in FLAGS:
            options[name] = True
        elif inline or "=" in arg:
            options[name] = inline
        else:
            index += 1
            if index >= len(argv):
                fail(f"error: option '{name}' argument missing")
            options[name] = argv[index]
        index += 1
    return options, words


def print_calls() -> list[dict[str, Any]]:
    path = HERE / "calls.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [call for call in map(json.loads, lines) if call.get("print")]


def help_text(old: bool) -> str:
    lines = ["Usage: claude [options] [command] [prompt]", "", "Options:"]
    lines += [f"  {o} <value>" for o in sorted(VALUED - (NEW_OPTIONS if old else set()))]
    lines += ["", "Commands:", "  mcp                 Configure and manage MCP servers"]
    if not old:
        lines.append("  auth                Manage authentication")
    return "\n".join(lines)


def envelope(reply: dict[str, Any], model: str) -> dict[str, Any]:
    """The result object, with the real CLI's keys."""
    cost = reply.get("cost", 0.0021)
    tokens = reply.get("tokens", {"in": 200, "out": 100, "cache_read": 0, "cache_write": 0})
    usage_rows = {model: {"inputTokens": tokens["in"], "outputTokens": tokens["out"],
                          "cacheReadInputTokens": tokens["cache_read"],
                          "cacheCreationInputTokens": tokens["cache_write"],
                          "webSearchRequests": 0, "costUSD": cost, "contextWindow": 200000,
                          "maxOutputTokens": 32000}}  # fmt: skip
    base: dict[str, Any] = {
        "type": "result", "subtype": "success", "is_error": False, "api_error_status": None,
        "duration_ms": 631, "duration_api_ms": 361, "num_turns": 2, "result": "",
        "stop_reason": "tool_use", "session_id": "fff399ff-87f4-4999-962a-883db4340866",
        "total_cost_usd": cost,
        "usage": {"input_tokens": tokens["in"] // 2, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": tokens["out"] // 2,
                  "service_tier": "standard"},
        "modelUsage": usage_rows, "permission_denials": [], "terminal_reason": "completed",
        "uuid": "21d8bbf9-26bd-4901-adb3-b0ca1f96cae1",
    }  # fmt: skip
    kind = reply["kind"]
    if kind == "answer":
        base["result"] = json.dumps(reply["output"])
        base["structured_output"] = reply["output"]
    elif kind == "odd_cost":  # a cost figure no bill has: NaN, negative, missing
        base["result"] = json.dumps(reply["output"])
        base["structured_output"] = reply["output"]
        for row in usage_rows.values():
            row.pop("costUSD")
            if "row_cost" in reply:
                row["costUSD"] = reply["row_cost"]
        base.pop("total_cost_usd")
        if "total" in reply:
            base["total_cost_usd"] = reply["total"]
        if reply.get("no_tokens"):
            base["modelUsage"], base["usage"] = {}, {}
    elif kind == "text":
        base["result"], base["stop_reason"] = reply["text"], "end_turn"
    elif kind == "not_logged_in":
        base.update(is_error=True, result="Not logged in · Please run /login", total_cost_usd=0,
                    modelUsage={}, num_turns=1, stop_reason="stop_sequence")  # fmt: skip
    elif kind == "api_error":
        base.update(is_error=True, api_error_status=reply["status"], result=reply["message"],
                    total_cost_usd=0, modelUsage={}, num_turns=1)  # fmt: skip
    elif kind == "refusal":  # the API's stop_reason "refusal": an error, yet subtype "success"
        base.update(is_error=True, stop_reason="refusal", num_turns=1, result="API Error: Claude "
                    "Code is unable to respond to this request, which appears to violate our "
                    "Usage Policy (https://www.anthropic.com/legal/aup).")  # fmt: skip
    elif kind == "error_text":  # e.g. a proxy's HTML page: no status, subtype "success"
        base.update(is_error=True, result=reply["message"], total_cost_usd=0, modelUsage={},
                    num_turns=1, stop_reason="stop_sequence")  # fmt: skip
    elif kind == "budget":
        base.update(subtype="error_max_budget_usd", is_error=True, stop_reason=None,
                    errors=["Reached maximum budget ($0.001)"])  # fmt: skip
        del base["result"], base["api_error_status"]
    elif kind == "structured_retries":
        base.update(subtype="error_max_structured_output_retries", is_error=True,
                    errors=["Failed to provide valid structured output after 5 attempts"])  # fmt: skip
        del base["result"]
    return base


def on_term(how: str) -> None:
    """What the stub does on SIGTERM: "cleanup" (like the real CLI, which removes its
    ~/.claude/sessions/<pid>.json and exits), "ignore", or the default (die at once)."""
    if how == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif how == "cleanup":

        def cleanup(signum: int, frame: Any) -> None:
            log({"terminated": True, "pid": os.getpid()})
            sys.exit(143)

        signal.signal(signal.SIGTERM, cleanup)


def print_mode(options: dict[str, Any], state: dict[str, Any]) -> None:
    if options.get("--output-format") != "json":
        fail("stub: only --output-format json is scripted", 2)
    for name in ("--json-schema", "--settings"):
        try:
            json.loads(options.get(name, "{}"))
        except json.JSONDecodeError as exc:
            fail(f"Error: {name} is not valid JSON: {exc}")
    prompt = sys.stdin.read()
    replies = state["replies"]
    reply = replies[min(len(print_calls()), len(replies) - 1)]
    env = {k: os.environ[k] for k in ENV_SEEN if k in os.environ}
    log({"print": True, "argv": sys.argv[1:], "stdin": prompt, "env": env, "pid": os.getpid()})
    if reply["kind"] == "sleep":
        on_term(reply.get("on_term", "default"))
        time.sleep(reply["seconds"])
    if reply["kind"] == "garbage":
        sys.stdout.write(reply["stdout"])
        sys.exit(reply.get("code", 0))
    if reply["kind"] == "stderr":  # no envelope, only what it said on stderr
        sys.stderr.write(reply["stderr"])
        sys.exit(reply.get("code", 1))
    if reply["kind"] == "flood":  # a CLI that keeps printing
        line = "x" * 65535 + "\n"
        while True:
            sys.stdout.write(line)
    if reply["kind"] == "orphan":  # a child that leaves the session and holds stdout open
        child = os.fork()
        if child == 0:
            os.setsid()
            log({"orphan": os.getpid()})
            time.sleep(reply["seconds"])
            os._exit(0)
        time.sleep(reply.get("parent_seconds", 0))
        if reply.get("answer") is not None:
            reply = {"kind": "answer", "output": reply["answer"]}
        else:
            sys.exit(0)
    result = envelope(reply, options.get("--model", "claude-sonnet-4-6"))
    sys.stdout.write(json.dumps(result) + "\n")
    sys.exit(1 if result["is_error"] else 0)


def main() -> None:
    state = scenario()
    old = state.get("old", False)
    argv = sys.argv[1:]
    if argv[:2] == ["auth", "status"] and not old:
        log({"auth": True})
        status = {"loggedIn": state["logged_in"], "authMethod": state.get("auth_method", "none"),
                  "apiProvider": "firstParty", "email": "someone@example.com",
                  "orgName": "Example Org"}  # fmt: skip
        print(state.get("auth_stdout") or json.dumps(status, indent=2))
        sys.exit(0 if state["logged_in"] else 1)
    options, words = parse(argv, old)
    if "--version" in options or "-v" in options:
        log({"version": True})
        print(f"{state.get('version', '2.1.197')} (Claude Code)")
        return
    if "--help" in options or "-h" in options:
        log({"help": True})
        print(help_text(old))
        return
    if "-p" in options or "--print" in options:
        print_mode(options, state)
        return
    if words:  # a prompt without -p: answered (and billed) when stdout is not a terminal
        log({"print": True, "paid_prompt": " ".join(words)})
        print("I can help with that.")
        return
    fail("stub: interactive mode is not scripted", 2)


if __name__ == "__main__":
    main()
