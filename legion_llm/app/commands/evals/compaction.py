"""`eval compaction`: compact every fixture phase, score it, check the gates
(evals/compaction.toml); with a corpus, the invariant over every real phase."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.commands.evals.log import write_eval_log
from legion_llm.app.context import Common, no_progress
from legion_llm.app.result import Block, CommandResult, Styled, Table

if TYPE_CHECKING:
    from legion_llm.evals.compaction import EvalRun
    from legion_llm.llm.engine import Engine


def corpus_result(
    c: Common, engine: Engine, corpus: Path, out: Path | None, *, warnings: Sequence[str] = ()
) -> CommandResult:
    """`eval compaction --corpus DIR`: the invariant over every real phase (compaction_corpus)."""
    from legion_llm.evals.compaction_corpus import corpus_log, corpus_phases, run_corpus_eval

    total = len(corpus_phases(corpus))
    with c.progress("compaction", total) as bar:
        run = run_corpus_eval(engine, corpus, today=c.today, on_case=_ticker(bar, "compaction"))
    log = corpus_log(run, engine)
    path = write_eval_log(c, "compaction-corpus", engine.name, out, log)

    s = run.summary()
    human: list[Block] = []
    rows = [[p.name, p.tokens_original, f"{p.ratio:.2f}", "yes" if p.verified else "NO",
             ", ".join(p.sections_from_offline) or "-", p.error or "; ".join(p.problems)]
            for p in run.phases if p.error or not p.verified or p.sections_from_offline]  # fmt: skip
    if rows:
        human.append(Table("Phases that fell back or failed", ["phase", "tokens", "ratio",
                           "verified", "offline sections", "problems"], rows))  # fmt: skip
    verdict, data = ("[green]all gates pass[/green]", []) if run.passed else (
        "[red]gates FAILED[/red]: {}", ["; ".join(run.failed_gates())])  # fmt: skip
    human.append(Styled(f"{s['verified']}/{s['phases']} phases written and verified; ratio median "
                        f"{s['ratio_median']:.2f}, max {s['ratio_max']:.2f}; a section fell back "
                        f"to the offline text on {s['fallback_phases']} ({s['fallback_share']:.1%}); "
                        f"{verdict}; log: {{}}", (*data, str(path))))  # fmt: skip
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
    with (c.progress if write_log else no_progress)("compaction", total) as bar:
        run = run_compaction_eval(engine, folder, today=c.today, on_case=_ticker(bar, "compaction"))
    extra = log_extra() if log_extra and write_log else {}  # before the usage is read
    log = eval_log(run, engine, prompt_sha256=load_prompt(PROMPT).sha256,
                   commit=head_commit(DEFINITION.parent))  # fmt: skip
    if not write_log:
        return CommandResult("eval compaction", log)
    log.update(extra)
    path = write_eval_log(c, "compaction", engine.name, out, log)
    data = {**log, "log": str(path)}
    return CommandResult("eval compaction", data, _human(run, path), list(warnings),
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


def _human(run: EvalRun, log: Path) -> list[Block]:
    summary = run.summary()
    verdict = "[green]all gates pass[/green]" if run.passed else "[red]gates FAILED[/red]"
    return [
        Table("Compaction eval", COLUMNS, [_row(case) for case in run.cases]),
        Styled(f"{summary['passed']}/{summary['cases']} cases pass, {verdict}; log: {{}}",
               (str(log),)),
    ]  # fmt: skip


def _ticker(bar: Any, label: str) -> Callable[[str], None]:
    """The per-case callback of a suite: one step of the bar, named after the case."""
    return lambda name: bar(advance=1, description=f"{label}: {name}")
