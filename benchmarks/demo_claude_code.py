"""`legion-llm compact 3 --engine claude-code` and the whole `legion-llm demo`, through the REAL
`claude` CLI with nothing but a Claude Code login: no ANTHROPIC_API_KEY anywhere.

    .venv/bin/python benchmarks/demo_claude_code.py --claude /tmp/cc/node_modules/.bin/claude

There is no real subscription login on a test machine, so the login is a dummy
CLAUDE_CODE_OAUTH_TOKEN (`claude auth status` then says loggedIn, authMethod oauth_token), HOME
and CLAUDE_CONFIG_DIR are a temp folder, and ANTHROPIC_BASE_URL points the CLI at the loopback fake
Messages API (tests/fakes), which answers each structured question with what the offline engine
would write for the project as it is at that moment. Everything else (argv, envelope, usage,
verification, the written files) is the product as a user runs it. Prints what a user would see.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.app.commands.distill import distill_maker
from legion_llm.app.commands.learnings import extract_maker
from legion_llm.app.commands.phases import compact_maker
from legion_llm.app.context import Common
from legion_llm.app.host import MakeStep, record
from legion_llm.memory.phases.find import find_phase
from tests.fakes import FakeMessagesAPI, Reply

REPO = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("legion-llm")
MISSION = ".mission-control/missions/archive/mission-2026-06-12-audit-export"
DAY = date(2026, 6, 15)


def offline_answer(make: MakeStep, root: Path) -> dict[str, Any]:
    recorder, _ = record(make(Common(root.resolve(), DAY, True), None))
    answer: dict[str, Any] = recorder.offline_answers[0].model_dump()
    return answer


def responder(project: dict[str, Path]) -> Any:
    def respond(request: Any) -> Reply:
        tools = (request.body or {}).get("tools") or []
        tool = next((t for t in tools if t.get("name") == "StructuredOutput"), None)
        if tool is None:
            return Reply.text("(no StructuredOutput tool in this request)")
        fields = tool["input_schema"].get("properties", {})
        root = project["root"]
        if "deliverables" in fields:
            answer = offline_answer(compact_maker(find_phase(root, "3"), False), root)
        elif "patterns" in fields:
            answer = offline_answer(distill_maker(None), root)
        elif "learnings" in fields:
            answer = offline_answer(extract_maker(root / MISSION, DAY.isoformat()), root)
        else:  # error-match: the demo's new error is its stored statement timeout (candidate 1)
            verdict = {"candidate": 1, "same_root_cause": True, "reason": "same statement timeout"}
            answer = {"verdicts": [verdict], "match": 1}
        return Reply.tool(answer, name="StructuredOutput")

    return respond


def show(argv: list[str], env: dict[str, str]) -> None:
    print("$ legion-llm " + " ".join(argv[1:]))
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    print(done.stdout.rstrip() + ("\n" + done.stderr.rstrip() if done.stderr.strip() else ""))
    print(f"(exit {done.returncode})\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", help="the claude CLI (default: PATH)")
    claude = parser.parse_args().claude or shutil.which("claude")
    if not claude:
        raise SystemExit("no claude CLI: npm install --prefix /tmp/cc @anthropic-ai/claude-code")
    project: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as tmp, FakeMessagesAPI(responder=responder(project)) as api:
        folder = Path(tmp)
        (folder / "home").mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ANTHROPIC_", "LEGION_", "CLAUDE_"))}  # fmt: skip
        env.update(HOME=str(folder / "home"), CLAUDE_CONFIG_DIR=str(folder / "home/.claude"),
                   CLAUDE_CODE_OAUTH_TOKEN="oauth-dummy", ANTHROPIC_BASE_URL=api.base_url,
                   PATH=f"{Path(claude).parent}{os.pathsep}{env.get('PATH', '')}")  # fmt: skip
        project["root"] = folder / "demo-copy"
        shutil.copytree(REPO / "fixtures" / "demo-project", project["root"])
        show([str(CLI), "llm", "check", "--root", str(project["root"])], env)
        show([str(CLI), "compact", "3", "--engine", "claude-code", "--root", str(project["root"]),
              "--today", DAY.isoformat()], env)  # fmt: skip
        project["root"] = folder / "demo-run"
        show([str(CLI), "demo", "--engine", "claude-code", "--root", str(project["root"])], env)
        print(f"{len(api.calls())} requests reached the loopback fake; totals {api.total_usage()}")


if __name__ == "__main__":
    main()
