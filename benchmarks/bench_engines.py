"""What each engine sends for one compaction: `compact 3` on the demo project, every model call
answered by the loopback fake Messages API (tests/fakes), which bills with the project's own token
estimate (cl100k), so sent tokens compare directly with the originals.

    .venv/bin/python benchmarks/bench_engines.py [--claude PATH_TO_CLAUDE]

- anthropic: our own request through the SDK (ANTHROPIC_API_KEY=dummy, ANTHROPIC_BASE_URL=fake).
- claude-code: the real `claude` CLI (`--claude`, else PATH; install it with
  `npm install --prefix /tmp/cc @anthropic-ai/claude-code`), "logged in" with a dummy
  CLAUDE_CODE_OAUTH_TOKEN, HOME and CLAUDE_CONFIG_DIR in a temp folder; skipped when absent.
- sampling: the sampling engine in process, its MCP client played by a function (what one
  `sampling/createMessage` carries; the client's model and bill, so no cost of ours).
- host: no model call of ours; the agent reads the request object (instructions, schema, inputs).

Every answer is the digest the offline engine would write (a perfect proposer: no re-ask), so
the numbers are what each path costs at best. Prints one row per engine and the minimum (the
originals plus the prompt once).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.llm.tokens import count_tokens
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.run import header_for, offline_digest, prepare
from tests.fakes import FakeMessagesAPI, Reply

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("legion-llm")
TODAY = "2026-06-15"


def demo(folder: Path, name: str) -> Path:
    target = folder / name
    shutil.copytree(ROOT / "fixtures" / "demo-project", target)
    return target


def digest_of(root: Path) -> dict[str, Any]:
    prep = prepare(find_phase(root, "3"))
    return offline_digest(prep, header_for(prep, date.fromisoformat(TODAY))).model_dump()


def run(root: Path, engine: str, env: dict[str, str]) -> dict[str, Any]:
    argv = [str(CLI), "compact", "3", "--root", str(root), "--today", TODAY, "--engine", engine,
            "--json"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{engine}: exit {done.returncode}: {done.stderr.strip()}")
    data: dict[str, Any] = json.loads(done.stdout)["data"]
    return data


def responder(answer: dict[str, Any]) -> Any:
    def respond(request: Any) -> Reply:
        tools = [t.get("name") for t in (request.body or {}).get("tools") or []]
        if "StructuredOutput" in tools:
            return Reply.tool(answer, name="StructuredOutput")
        return Reply.answer(answer)

    return respond


def measure(engine: str, root: Path, env: dict[str, str]) -> dict[str, Any]:
    with FakeMessagesAPI(responder=responder(digest_of(root))) as api:
        data = run(root, engine, {**env, "ANTHROPIC_BASE_URL": api.base_url})
        billed = api.total_usage()
        calls = len(api.calls())
    sent = billed["input_tokens"] + billed["cache_read_input_tokens"]
    sent += billed["cache_creation_input_tokens"]
    return {"engine": engine, "requests": calls, "sent": sent, "output": billed["output_tokens"],
            "cache_write": billed["cache_creation_input_tokens"],
            "cost": data["usage"]["estimated_cost_usd"], "ratio": data["ratio"],
            "written": data["written"], "original": data["tokens_original"]}  # fmt: skip


def host_row(root: Path) -> dict[str, Any]:
    done = subprocess.run([str(CLI), "compact", "3", "--root", str(root), "--today", TODAY,
                           "--prepare", "--json"], capture_output=True, text=True, timeout=120)  # fmt: skip
    request = json.loads(done.stdout)["data"]
    read = count_tokens(request["instructions"] + json.dumps(request["schema"]) + request["inputs"])
    return {"engine": "host", "requests": 0, "sent": read, "output": 0, "cost": 0.0, "cache_write": 0,
            "ratio": None, "written": None, "original": None}  # fmt: skip


def sampling_row(root: Path) -> dict[str, Any]:
    """The sampling engine in process, its client played by a function answering the digest:
    what `sampling/createMessage` would carry (system with the schema, and the user message)."""
    from legion_llm.app.commands.phases import compact_result
    from legion_llm.app.context import Common
    from legion_llm.app.session import LLMSession
    from legion_llm.llm.config import LLMConfig
    from legion_llm.llm.engine import Notices
    from legion_llm.llm.sampling import SampleReply, SampleRequest, SamplingEngine

    answer = json.dumps(digest_of(root))
    sent: list[int] = []

    def client(request: SampleRequest) -> SampleReply:
        sent.append(count_tokens("\n".join([request.system, *(t for _, t in request.messages)])))
        return SampleReply(answer, "client-model")

    engine = SamplingEngine(LLMConfig(), client, notices=Notices(sink=None))
    c = Common(root.resolve(), date.fromisoformat(TODAY), True)
    data = compact_result(c, find_phase(root, "3"), LLMSession(engine, LLMConfig()),
                          force=False, dry_run=False).data  # fmt: skip
    return {"engine": "sampling", "requests": len(sent), "sent": sum(sent), "cache_write": 0,
            "output": count_tokens(answer), "cost": data["usage"]["estimated_cost_usd"],
            "ratio": data["ratio"], "written": data["written"], "original": None}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", help="the claude CLI (default: PATH)")
    options = parser.parse_args()
    claude = options.claude or shutil.which("claude")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LEGION_"))}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(measure("anthropic", demo(folder, "a"), {**base, "ANTHROPIC_API_KEY": "sk-x"}))
        if claude:
            home = folder / "home"
            home.mkdir()
            env = {**base, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                   "CLAUDE_CODE_OAUTH_TOKEN": "oauth-dummy", "LEGION_LLM_CLAUDE": claude}  # fmt: skip
            rows.append(measure("claude-code", demo(folder, "c"), env))
        else:
            print("claude-code: skipped (no claude CLI; pass --claude PATH)", file=sys.stderr)
        rows.append(sampling_row(demo(folder, "s")))
        rows.append(host_row(demo(folder, "h")))
        prep = prepare(find_phase(demo(folder, "m"), "3"))
    original = prep.tokens_original
    print(f"originals: {original} tokens (cl100k); minimum to send: originals + the prompt once")
    print(f"{'engine':<12} {'requests':>8} {'sent':>7} {'sent/orig':>9} {'cache write':>11} "
          f"{'output':>7} {'cost $':>9}")  # fmt: skip
    for row in rows:
        print(f"{row['engine']:<12} {row['requests']:>8} {row['sent']:>7} "
              f"{row['sent'] / original:>9.2f} {row['cache_write']:>11} {row['output']:>7} "
              f"{row['cost']:>9.5f}")  # fmt: skip


if __name__ == "__main__":
    main()
