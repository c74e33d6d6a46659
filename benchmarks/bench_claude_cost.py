"""What compaction costs on the Claude path, against a loopback fake that bills and caches like the API.

    .venv/bin/python benchmarks/bench_claude_cost.py [--models claude-sonnet-5-5,claude-haiku-5-5]
                                                     [--json]

Every fixture phase (fixtures/phases/*, the compaction eval's set) is compacted through the real
Claude engine (the SDK, streamed calls, count_tokens, the cache markers, the cost accounting)
against tests/fakes/FakeMessagesAPI, once per stand-in model (tests/fakes/compaction_models.py):

- perfect: answers every request with a grounded, complete digest of the plans it lists;
- careless: the same, but every fifth requirement id and file path left out and one path that no
  summary names added (all of which repair fixes without a re-ask);
- lazy (totals only): a first answer of placeholders, which needs a re-ask; the re-ask names
  the sections to redo and reads the summaries from the cache.

One fake serves the run of one stand-in model over every phase, so the prompt cached by one phase
is read by the next (as in an eval run; entries live five minutes); each run starts with an
empty cache. Per phase it prints the original tokens (the plan
summaries, counted with cl100k as the fake bills), the tokens sent (every input token the fake
billed: uncached, written to and read from the cache), sent / original, calls, cache reads and
the cost (USD, legion_llm/llm/pricing.py). "prompt" is the phase's prompt once without its
summaries: the system text, the output schema, the plans and ids with their verdicts, and the
fixed wording (the same request with the summaries left empty, counted as the fake bills).

Goals (exit status 1 when missed): the perfect model sends at most 1.05 x the originals plus one
prompt, on every phase; the careless one at most 1.3 x the originals over the set.

`--corpus DIR` (for example ../shared/realworld) runs every real phase the parser accepts
instead of the fixture set, with the careless model only, and checks its spend against the
one-call minimum: the input of one request (the prompt once and the summaries as sent) billed
uncached, against every input token billed, cache writes at 1.25 x and reads at 0.1 x (the
API's prices relative to uncached input). Goals: at most 1.4 over the corpus, and at most
2,500 tokens of a phase's prompt besides its summaries (`--corpus ../shared` reads every
corpus there).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from legion_llm.llm.claude_api.request import build_request
from legion_llm.llm.config import resolve_llm_config
from legion_llm.llm.engine import Notices
from legion_llm.llm.factory import select_engine
from legion_llm.llm.pricing import model_info
from legion_llm.llm.prompts import load_prompt
from legion_llm.memory.phases.find import find_phase
from legion_llm.pipeline.compact.offline import PROMPT
from legion_llm.pipeline.compact.prepare import Prepared
from legion_llm.pipeline.compact.render import PhaseDigest
from legion_llm.pipeline.compact.run import compact_phase
from legion_llm.pipeline.compact.split import prompt_variables
from tests.fakes import FakeMessagesAPI
from tests.fakes.billing import default_counter, segments
from tests.fakes.compaction_models import PhaseModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "phases"
TODAY = date(2026, 11, 30)
PERFECT_GOAL, CARELESS_GOAL = 1.05, 1.30
MINIMUM_GOAL = 1.40  # careless spend over the one-call minimum, on a corpus
OVERHEAD_GOAL = 2_500  # tokens a phase's prompt sends besides its summaries, on a corpus
WRITE_RATE, READ_RATE = 1.25, 0.10
BEHAVIOURS = ("perfect", "careless", "lazy")
KEY = "sk-ant-bench-0000000000000000"


@dataclass
class Row:
    case: str
    model: str
    behaviour: str
    original: int
    sent: int
    calls: int
    cache_read: int
    cache_written: int
    cost: float
    reasks: int
    ok: bool
    prompt: int
    weighted: float = 0.0  # input tokens as billed: writes at 1.25 x, reads at 0.1 x
    minimum: int = 0  # the first request's input, all of it uncached

    @property
    def ratio(self) -> float:
        return self.sent / max(self.original, 1)


def cases() -> list[tuple[str, str]]:
    found = []
    for folder in sorted(FIXTURES.iterdir()):
        expected = folder / "expected.json"
        if expected.is_file():
            found.append((folder.name, str(json.loads(expected.read_text())["phase"])))
    return found


def prompt_tokens(model: str, prep: Prepared) -> int:
    """The phase's prompt once, without its summaries (what the minimum adds to them)."""
    variables = prompt_variables(prep.phase, prep.docs, prep.facts, 0, prep.facts)
    rendered = load_prompt(PROMPT).render({**variables, "summaries": ""})
    info = model_info(model)
    request = build_request(PhaseDigest, rendered, info=info, max_tokens=1, mode=info.structured)
    return sum(s.tokens for s in segments(request, default_counter()))


def run_one(
    fake: FakeMessagesAPI,
    model: str,
    case: str,
    spec: str,
    behaviour: str,
    source: Path | None = None,
) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / case.split("/")[0]
        if source is None:
            shutil.copytree(FIXTURES / case, root)
        else:
            shutil.copytree(source / ".planning", root / ".planning")
        phase = find_phase(root, spec)
        model_stub = PhaseModel(phase, careless=behaviour == "careless",
                                lazy_first=behaviour == "lazy")  # fmt: skip
        fake.responder = model_stub
        before = len(fake.calls())
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.base_url}
        config = resolve_llm_config({"model": model}, env=env)
        engine = select_engine("anthropic", config, env=env, notices=Notices(sink=None))
        result = compact_phase(phase, engine, today=TODAY, force=True, write=False)
        calls = fake.calls()[before:]
        original = sum(default_counter()(d.text) for d in model_stub.prepared.docs)
    usage = [c.usage or {} for c in calls]
    sent = sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
               for u in usage)  # fmt: skip
    weighted = sum(u["input_tokens"] + WRITE_RATE * u["cache_creation_input_tokens"]
                   + READ_RATE * u["cache_read_input_tokens"] for u in usage)  # fmt: skip
    first = usage[0] if usage else {}
    minimum = sum(first.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                             "cache_read_input_tokens"))  # fmt: skip
    return Row(case, model, behaviour, original, sent, len(calls),
               sum(u["cache_read_input_tokens"] for u in usage),
               sum(u["cache_creation_input_tokens"] for u in usage),
               engine.meter.total.estimated_cost_usd, sum(a["reask"] for a in result.answers),
               result.report.ok, prompt_tokens(model, model_stub.prepared), weighted,
               minimum)  # fmt: skip


def corpus_cases(corpus: Path) -> list[tuple[str, str, Path]]:
    """(project/phase, the phase folder relative to its project, the project) for every phase
    of a corpus or a folder of corpora (`../shared`: realworld and realworld-c alike)."""
    from legion_llm.evals.compaction_corpus import corpus_projects
    from legion_llm.memory.phases.find import load_phase, phase_folders

    found = []
    for project in corpus_projects(corpus):
        planning = project / ".planning"
        for folder in phase_folders(planning):
            if load_phase(folder, planning).summaries:
                spec = str(folder.relative_to(project))
                found.append((f"{project.relative_to(corpus)}/{folder.name}", spec, project))
    return found


def run_corpus(corpus: Path, models: list[str], as_json: bool) -> int:
    """The careless model over every real phase: spend against the one-call minimum."""
    report: dict[str, Any] = {}
    missed = []
    for model in models:
        with FakeMessagesAPI() as fake:
            rows = [run_one(fake, model, name, spec, "careless", source)
                    for name, spec, source in corpus_cases(corpus)]  # fmt: skip
        spend, minimum = sum(r.weighted for r in rows), sum(r.minimum for r in rows)
        worst = max(rows, key=lambda r: r.weighted / max(r.minimum, 1))
        overhead = max(rows, key=lambda r: r.prompt)
        line = {"phases": len(rows), "spend_over_minimum": round(spend / minimum, 3),
                "prompt_overhead_max": overhead.prompt, "prompt_overhead_phase": overhead.case,
                "worst_phase": worst.case, "worst": round(worst.weighted / max(worst.minimum, 1), 3),
                "calls": sum(r.calls for r in rows), "reasks": sum(r.reasks for r in rows),
                "cost_usd": round(sum(r.cost for r in rows), 4),
                "not_verified": [r.case for r in rows if not r.ok]}  # fmt: skip
        report[model] = line
        if line["spend_over_minimum"] > MINIMUM_GOAL:
            missed.append(f"{model}: careless spend {line['spend_over_minimum']} x the minimum")
        if overhead.prompt > OVERHEAD_GOAL:
            missed.append(f"{model}: the prompt's own overhead reached {overhead.prompt} tokens "
                          f"({overhead.case}; goal {OVERHEAD_GOAL})")  # fmt: skip
        missed += [f"{model} {case}: failed its review" for case in line["not_verified"]]
        if not as_json:
            print(f"\n{model}, careless, {len(rows)} real phases: spend {line['spend_over_minimum']}"
                  f" x the one-call minimum (worst {line['worst']} x, {worst.case}); prompt "
                  f"overhead at most {overhead.prompt} tokens ({overhead.case}); "
                  f"{line['calls']} calls, {line['reasks']} re-asks, ${line['cost_usd']:.4f}")  # fmt: skip
    if as_json:
        print(json.dumps({**report, "missed": missed}, indent=1))
    else:
        print("\ngoals: " + ("all met" if not missed else "MISSED:\n  " + "\n  ".join(missed)))
    return 1 if missed else 0


def table(rows: list[Row]) -> str:
    head = ("| case | original | prompt | perfect sent (x) | calls | cache read / written | cost "
            "| careless sent (x) | calls | re-asks | cost |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    by_case: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_case.setdefault(row.case, {})[row.behaviour] = row
    lines = [head]
    for case, pair in by_case.items():
        p, c = pair["perfect"], pair["careless"]
        lines.append(f"| {case} | {p.original:,} | {p.prompt:,} | {p.sent:,} ({p.ratio:.2f}) | {p.calls} | "
                     f"{p.cache_read:,} / {p.cache_written:,} | ${p.cost:.4f} | {c.sent:,} ({c.ratio:.2f}) | {c.calls} | "
                     f"{c.reasks} | ${c.cost:.4f} |")  # fmt: skip
    total = {b: [r for r in rows if r.behaviour == b] for b in ("perfect", "careless")}
    original = sum(r.original for r in total["perfect"])
    summary = {b: (sum(r.sent for r in rs), sum(r.calls for r in rs),
                   f"{sum(r.cache_read for r in rs):,} / {sum(r.cache_written for r in rs):,}",
                   sum(r.cost for r in rs), sum(r.reasks for r in rs))
               for b, rs in total.items()}  # fmt: skip
    (ps, pc, pr, pd, _), (cs, cc, _, cd, ck) = summary["perfect"], summary["careless"]
    prompts = sum(r.prompt for r in total["perfect"])
    lines.append(f"| **all {len(by_case)}** | {original:,} | {prompts:,} | {ps:,} ({ps / original:.2f}) | {pc} | "
                 f"{pr} | ${pd:.4f} | {cs:,} ({cs / original:.2f}) | {cc} | {ck} | ${cd:.4f} |")  # fmt: skip
    return "\n".join(lines)


def totals(rows: list[Row]) -> str:
    lines = ["| stand-in model | original | sent (x) | calls | re-asks | cache read / written | cost |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for behaviour in dict.fromkeys(r.behaviour for r in rows):
        rs = [r for r in rows if r.behaviour == behaviour]
        original, sent = sum(r.original for r in rs), sum(r.sent for r in rs)
        lines.append(f"| {behaviour} | {original:,} | {sent:,} ({sent / original:.2f}) | "
                     f"{sum(r.calls for r in rs)} | {sum(r.reasks for r in rs)} | "
                     f"{sum(r.cache_read for r in rs):,} / {sum(r.cache_written for r in rs):,} | "
                     f"${sum(r.cost for r in rs):.4f} |")  # fmt: skip
    return "\n".join(lines)


def goals(rows: list[Row]) -> list[str]:
    missed = [f"{r.model} perfect {r.case}: {r.sent} > {PERFECT_GOAL} x {r.original} + {r.prompt}"
              for r in rows if r.behaviour == "perfect"
              and r.sent > PERFECT_GOAL * r.original + r.prompt]  # fmt: skip
    for model in dict.fromkeys(r.model for r in rows):
        careless = [r for r in rows if r.model == model and r.behaviour == "careless"]
        sent, original = sum(r.sent for r in careless), sum(r.original for r in careless)
        if sent > CARELESS_GOAL * original:
            missed.append(f"{model} careless: {sent} > {CARELESS_GOAL} x {original}")
    missed += [f"{r.model} {r.behaviour} {r.case}: the result failed its review"
               for r in rows if not r.ok]  # fmt: skip
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="claude-sonnet-5-5,claude-haiku-5-5")
    parser.add_argument("--json", action="store_true", help="rows as JSON instead of tables")
    parser.add_argument(
        "--corpus", type=Path, help="a folder of real projects (../shared/realworld)"
    )
    args = parser.parse_args(argv)
    if args.corpus:
        return run_corpus(args.corpus, args.models.split(","), args.json)
    rows: list[Row] = []
    report: dict[str, Any] = {}
    for model in args.models.split(","):
        model_rows = []
        for behaviour in BEHAVIOURS:  # a fresh fake each: no answer reads another run's cache
            with FakeMessagesAPI() as fake:
                model_rows += [
                    run_one(fake, model, case, spec, behaviour) for case, spec in cases()
                ]
        rows += model_rows
        report[model] = {"rows": [vars(r) for r in model_rows]}
        if not args.json:
            print(f"\n{model} (prices per MTok: {vars(model_info(model).rates)})\n")
            print(table([r for r in model_rows if r.behaviour != "lazy"]))
            print()
            print(totals(model_rows))
    missed = goals(rows)
    if args.json:
        print(json.dumps({**report, "missed": missed}, indent=1))
    else:
        print("\ngoals: " + ("all met" if not missed else "MISSED:\n  " + "\n  ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
