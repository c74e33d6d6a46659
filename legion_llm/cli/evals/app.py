"""`legion-llm eval ...`: one sub-app, one command per eval suite (compaction here; more later).

Each command: options -> the suite's runner in legion_llm.evals -> a progress bar on stderr, a
summary table, a JSON log (`--out`), and exit code 1 when a gate fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from legion_llm.cli.batch import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT,
    BatchOpt,
    BatchOptions,
    IntervalOpt,
    TimeoutOpt,
    WaitOpt,
)
from legion_llm.cli.common import (
    CommandResult,
    Common,
    JsonOpt,
    RootOpt,
    TodayOpt,
    common,
    finish,
)
from legion_llm.cli.evals import errors as eval_errors
from legion_llm.cli.evals import learn as learn_eval
from legion_llm.cli.evals.batch import eval_batch_result
from legion_llm.cli.evals.log import check_out, write_eval_log
from legion_llm.cli.llm import EngineOpt, MaxCostOpt, ModelOpt, PriceOpt, open_session
from legion_llm.cli.render import plain, rich_print, table

if TYPE_CHECKING:
    from legion_llm.evals.compaction import EvalRun
    from legion_llm.llm.engine import Engine

app = typer.Typer(no_args_is_help=True, help="Run an eval suite and check its gates.")

FixturesOpt = Annotated[
    Path | None, typer.Option("--fixtures", help="Dataset folder (default: the suite's own).")
]
CorpusOpt = Annotated[
    Path | None,
    typer.Option(
        "--corpus",
        help="A folder of real projects (each with .planning/, no ground truth): check that "
        "every phase gets a verified file, never longer than its originals.",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", help="JSON log (default: eval-logs/<suite>-<engine>-<time>.json in the root)."
    ),
]


@contextmanager
def progress(total: int, label: str, quiet: bool) -> Iterator[Callable[[str], None]]:
    """A rich progress bar on stderr (none with --json); yields the per-case callback."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True, disable=quiet) as bar:
        task = bar.add_task(label, total=total)
        yield lambda name: bar.update(task, advance=1, description=f"{label}: {name}")


@app.command("compaction")
def compaction(
    engine: EngineOpt = None,
    model: ModelOpt = None,
    max_cost: MaxCostOpt = None,
    price: PriceOpt = None,
    fixtures: FixturesOpt = None,
    corpus: CorpusOpt = None,
    out: OutOpt = None,
    batch: BatchOpt = False,
    wait: WaitOpt = False,
    poll_interval: IntervalOpt = DEFAULT_INTERVAL,
    timeout: TimeoutOpt = DEFAULT_TIMEOUT,
    root: RootOpt = None,
    today: TodayOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Compact every fixture phase, score it, check the gates (evals/compaction.toml)."""
    from legion_llm.evals.compaction import load_definition

    c = common(root, today, json_)
    dataset, _ = load_definition()
    folder = fixtures or dataset
    check_out(c, out)
    if batch or wait:
        options = BatchOptions(batch, wait, poll_interval, timeout)
        finish(eval_batch_result(c, "compaction", folder, out, options, engine=engine,
                                 model=model, max_cost=max_cost, price=price), c)  # fmt: skip
        return
    session = open_session(c, engine, model, max_cost, price=price)
    if corpus is not None:
        finish(corpus_result(c, session.engine, corpus, out, warnings=session.warnings), c)
        return
    finish(compaction_result(c, session.engine, folder, out, warnings=session.warnings), c)


def corpus_result(
    c: Common, engine: Engine, corpus: Path, out: Path | None, *, warnings: Sequence[str] = ()
) -> CommandResult:
    """`eval compaction --corpus DIR`: the invariant over every real phase (compaction_corpus)."""
    from legion_llm.evals.compaction_corpus import corpus_log, corpus_phases, run_corpus_eval

    total = len(corpus_phases(corpus))
    with progress(total, "compaction", c.as_json) as on_case:
        run = run_corpus_eval(engine, corpus, today=c.today, on_case=on_case)
    log = corpus_log(run, engine)
    path = write_eval_log(c, "compaction-corpus", engine.name, out, log)

    def human() -> None:
        s = run.summary()
        rows = [[p.name, p.tokens_original, f"{p.ratio:.2f}", "yes" if p.verified else "NO",
                 ", ".join(p.sections_from_offline) or "-", p.error or "; ".join(p.problems)]
                for p in run.phases if p.error or not p.verified or p.sections_from_offline]  # fmt: skip
        if rows:
            table("Phases that fell back or failed", ["phase", "tokens", "ratio", "verified",
                                                       "offline sections", "problems"], rows)  # fmt: skip
        verdict = "[green]all gates pass[/green]" if run.passed else (
            "[red]gates FAILED[/red]: " + plain("; ".join(run.failed_gates())))  # fmt: skip
        rich_print(f"{s['verified']}/{s['phases']} phases written and verified; ratio median "
                   f"{s['ratio_median']:.2f}, max {s['ratio_max']:.2f}; a section fell back to "
                   f"the offline text on {s['fallback_phases']} ({s['fallback_share']:.1%}); "
                   f"{verdict}; log: {plain(str(path))}")  # fmt: skip

    return CommandResult("eval compaction", {**log, "log": str(path)}, human, list(warnings),
                         0 if run.passed else 1)  # fmt: skip


def compaction_result(
    c: Common,
    engine: Engine,
    folder: Path | None,
    out: Path | None,
    *,
    log_extra: Callable[[], dict[str, Any]] | None = None,
    write_log: bool = True,
    warnings: Sequence[str] = (),
) -> CommandResult:
    """Run the compaction eval with `engine` and write its log (for the command and a batch:
    `log_extra()` is called once the suite has run, before its usage goes into the log)."""
    from legion_llm.evals.compaction import DEFINITION, eval_log, load_cases, run_compaction_eval
    from legion_llm.llm.prompts import load_prompt
    from legion_llm.memory.gitinfo import head_commit
    from legion_llm.pipeline.compact.offline import PROMPT

    total = len(load_cases(folder)) if folder else 0
    with progress(total, "compaction", c.as_json or not write_log) as on_case:
        run = run_compaction_eval(engine, folder, today=c.today, on_case=on_case)
    extra = log_extra() if log_extra and write_log else {}  # before the usage is read
    log = eval_log(run, engine, prompt_sha256=load_prompt(PROMPT).sha256,
                   commit=head_commit(DEFINITION.parent))  # fmt: skip
    if not write_log:
        return CommandResult("eval compaction", log)
    log.update(extra)
    path = write_eval_log(c, "compaction", engine.name, out, log)
    data = {**log, "log": str(path)}
    return CommandResult("eval compaction", data, lambda: _human(run, path), list(warnings),
                         0 if run.passed else 1)  # fmt: skip


COLUMNS = ["case", "tokens", "log share", "ratio", "id recall", "path recall", "invented",
           "grounding", "sections", "plans", "gates"]  # fmt: skip
# grounding: ungrounded verdicts / placeholder cells / unknown plans / deliverables without overlap
GROUNDING = ("ungrounded_verdicts", "placeholder_cells", "unknown_plans",
             "deliverables_without_overlap")  # fmt: skip


def _row(case: Any) -> list[Any]:
    s = case.scores
    if case.error:
        return [case.name, *["-"] * (len(COLUMNS) - 2), f"ERROR {case.error}"]
    return [case.name, s["tokens_original"], f"{s['log_share']:.2f}", f"{s['ratio']:.3f}",
            f"{s['id_recall']:.2f}", f"{s['path_recall']:.2f}", s["invented"],
            "/".join(str(s.get(k, 0)) for k in GROUNDING), f"{s['section_completeness']:.2f}", f"{s['plan_coverage']:.2f}",
            "; ".join(case.failed_gates) or "pass"]  # fmt: skip


def _human(run: EvalRun, log: Path) -> None:
    rows = [_row(case) for case in run.cases]
    columns = COLUMNS
    table("Compaction eval", columns, rows)
    summary = run.summary()
    verdict = "[green]all gates pass[/green]" if run.passed else "[red]gates FAILED[/red]"
    rich_print(
        f"{summary['passed']}/{summary['cases']} cases pass, {verdict}; log: {plain(str(log))}"
    )


app.command("distill")(learn_eval.eval_distill)
app.command("learnings")(learn_eval.eval_learnings)
app.command("errors")(eval_errors.errors_eval_cmd)
