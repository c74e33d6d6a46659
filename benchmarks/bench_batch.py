"""One call at a time or one Message Batch: what the same bulk work costs each way.

    .venv/bin/python benchmarks/bench_batch.py [--model claude-haiku-5-5]

Every model call is answered by the loopback fake Messages API (tests/fakes) with its Message
Batches endpoints (tests/fakes/batches.py), which bills like the API: input tokens counted from
the body with the project's own estimate (cl100k), the prompt cache simulated (batch requests
share it too), output tokens of the answer. Costs are computed here from what the fake billed,
with the price table (standard price for POST /v1/messages, the table's batch_factor for each
succeeded batch request, used or not), and printed next to what the product itself reported.

Two jobs, each run twice on fresh copies and a fresh fake (a cold cache both times):
- `compact --all`: seven pending phases (fixtures merged into one project: 2, 3, 4, 5, 6, 6.1,
  7; phase 7 is large), each answered with the offline engine's digest of the phase it names
  (a careful proposer; a part of a split phase gets the whole phase's digest, so the pipeline's
  own check re-asks it, exactly as in a direct run).
- `eval distill`: 31 outcome histories, each answered with an empty proposal (valid, so no
  re-ask); the suite distils each history twice, and the second pass reads what the first
  wrote, so those requests are built from earlier answers and go direct in the batch run.
- `eval errors`: every split; each query whose close candidates need a judge makes one call
  (answered "none of them"), and no query reads another's answer.

Direct: `--engine anthropic`, one call after another. Batch: `--batch --wait --poll-interval 0`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.llm.budget import call_usage
from legion_llm.llm.pricing import DEFAULT_MODEL, model_info
from legion_llm.memory.phases.find import completed_without_compaction
from tests.fakes import FakeMessagesAPI, RecordedRequest, Reply
from tests.fakes.batches import FakeBatches
from tests.pipeline.compaction_cases import good_digest

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("legion-llm")
TODAY = "2026-11-30"
PHASES = ("legion-spec-billing-exports", "paths-zoo", "ten-plan-phase", "decimal-phase",
          "very-large-phase")  # fmt: skip
JOBS = ("compact", "distill", "errors")
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens")  # fmt: skip


def merged_project(folder: Path) -> Path:
    root = folder / "project"
    shutil.copytree(ROOT / "fixtures" / "phases" / PHASES[0], root)
    for name in PHASES[1:]:
        source = ROOT / "fixtures" / "phases" / name / ".planning"
        shutil.copytree(source / "phases", root / ".planning" / "phases", dirs_exist_ok=True)
        roadmap = root / ".planning" / "ROADMAP.md"
        roadmap.write_text(roadmap.read_text() + "\n" + (source / "ROADMAP.md").read_text())
    return root


def phase_responder(root: Path) -> Callable[[RecordedRequest], Reply | None]:
    digests = {p.key: json.loads(good_digest(p).model_dump_json())
               for p in completed_without_compaction(root)}  # fmt: skip

    def respond(request: RecordedRequest) -> Reply | None:
        found = re.search(r"Phase ([0-9.]+): ", json.dumps(request.body))
        return (
            Reply.answer(digests[found.group(1)]) if found and found.group(1) in digests else None
        )

    return respond


def empty_proposal(request: RecordedRequest) -> Reply | None:
    """A valid answer with nothing in it: no pattern to distil, no candidate the same cause."""
    body = request.body if isinstance(request.body, dict) else {}
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
    if schema is None and body.get("tools"):
        schema = body["tools"][0]["input_schema"]
    properties = (schema or {}).get("properties") or {}
    if "patterns" in properties:
        return Reply.answer({"patterns": []})
    if "verdicts" in properties:
        return Reply.answer({"verdicts": [], "match": 0})
    return None


def billed(usages: list[dict[str, Any]], model: str, *, batch: bool) -> float:
    info = model_info(model)
    return sum(call_usage(info, **{k: int(u.get(k, 0)) for k in USAGE_KEYS}, batch=batch)
               .estimated_cost_usd for u in usages)  # fmt: skip


def measure(job: str, mode: str, model: str) -> dict[str, Any]:
    """Run one job one way on a fresh copy against a fresh fake; what the fake billed."""
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        if job == "compact":
            root = merged_project(Path(tmp))
            responder = phase_responder(root)
            argv = ["compact", "--all"]
        else:
            root = Path(tmp) / "project"
            (root / ".planning").mkdir(parents=True)
            responder, argv = empty_proposal, ["eval", job]
        argv += (
            ["--batch", "--wait", "--poll-interval", "0"]
            if mode == "batch"
            else ["--engine", "anthropic"]
        )
        with FakeMessagesAPI(responder=responder) as api:
            batches = FakeBatches(api, polls_to_end=2)
            env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": api.base_url,
                   "LEGION_LLM_MODEL": model, "LEGION_LLM_MAX_ATTEMPTS": "1"}  # fmt: skip
            done = subprocess.run([str(CLI), *argv, "--root", str(root), "--today", TODAY, "--json"],
                                  capture_output=True, text=True, env=env, timeout=900)  # fmt: skip
            if not done.stdout:
                raise SystemExit(f"{job} {mode}: exit {done.returncode}: {done.stderr.strip()}")
            data = json.loads(done.stdout)["data"]
            direct = [r.usage or {} for r in api.calls("/v1/messages")]
            items = [i.usage or {} for i in batches.items]
    usage = data.get("usage") or {}
    return {"job": job, "mode": mode, "batch_requests": len(items), "direct_calls": len(direct),
            "input": sum(int(u.get("input_tokens", 0)) for u in direct + items),
            "cache_read": sum(int(u.get("cache_read_input_tokens", 0)) for u in direct + items),
            "cache_write": sum(int(u.get("cache_creation_input_tokens", 0)) for u in direct + items),
            "output": sum(int(u.get("output_tokens", 0)) for u in direct + items),
            "billed_usd": billed(direct, model, batch=False) + billed(items, model, batch=True),
            "reported_usd": float(usage.get("estimated_cost_usd", 0.0))}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args()
    rows = [measure(job, mode, args.model) for job in JOBS for mode in ("direct", "batch")]
    header = (f"{'job':<9}{'mode':<8}{'batch req':>10}{'direct':>8}{'input':>9}{'cache rd':>10}"
              f"{'cache wr':>10}{'output':>8}{'billed $':>11}{'reported $':>12}")  # fmt: skip
    print(f"model {args.model}; tokens and dollars as the fake billed them\n{header}")
    for r in rows:
        print(f"{r['job']:<9}{r['mode']:<8}{r['batch_requests']:>10}{r['direct_calls']:>8}"
              f"{r['input']:>9}{r['cache_read']:>10}{r['cache_write']:>10}{r['output']:>8}"
              f"{r['billed_usd']:>11.5f}{r['reported_usd']:>12.5f}")  # fmt: skip
    for job in JOBS:
        direct, batch = (next(r for r in rows if r["job"] == job and r["mode"] == m)
                         for m in ("direct", "batch"))  # fmt: skip
        share = batch["billed_usd"] / direct["billed_usd"] if direct["billed_usd"] else 0.0
        print(f"{job}: the batch run cost {share:.0%} of one call at a time")


if __name__ == "__main__":
    main()
