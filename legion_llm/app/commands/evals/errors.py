"""`eval errors`: the error matcher over every labelled split, gates, JSON log."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legion_llm.app.commands.evals.log import write_eval_log
from legion_llm.app.context import Common
from legion_llm.app.result import Block, CommandResult, Table

if TYPE_CHECKING:
    from legion_llm.llm.engine import Engine

# (label, field, format)
METRICS = [
    ("messages / groups", None, ""),
    ("fix answers: precision (cause stored)", "answers.fix_precision", ".3f"),
    ("fix answers: coverage (right fix, cause stored)", "answers.fix_coverage", ".3f"),
    ("hard negatives answered fix", "answers.hard_negative_fix", ".3f"),
    ("confirm recall (right fix is the fix or shown)", "answers.confirm_recall", ".3f"),
    ("retrieval recall (among the 3 sent to a judge)", "answers.retrieval_recall", ".3f"),
    ("queries answered confirm", "answers.confirm_share", ".3f"),
    ("hard negatives answered none", "answers.hard_negative_none", ".3f"),
    ("full coverage below (offline rule, ungated)", None, ""),
    ("fix@1 (first accepted fix is right)", "fix_at_1", ".3f"),
    ("fix@1 ranked / fix@5", None, ""),
    ("pairwise precision", "precision", ".3f"),
    ("pairwise recall", "recall", ".3f"),
    ("grouping accuracy", "grouping_accuracy", ".3f"),
    ("hard negatives given a look-alike's fix", "hard_negative_false_fix", ".3f"),
    ("exact-fingerprint collisions", "exact_collisions", ""),
    ("  of them not named as identical text", "unexplained_collisions", ""),
    ("queries that would call a model", "model_share", ".3f"),
    ("hard negatives with a look-alike's very line (data)", "same_as_lookalike", ".3f"),
    ("fix queries sharing no token with their fix (data)", "nothing_shared", ".3f"),
]
GATE_OF = {
    "answers.fix_precision": "fix_precision",
    "answers.fix_coverage": "fix_coverage",
    "answers.hard_negative_fix": "max_hard_negative_fix",
    "answers.confirm_recall": "confirm_recall",
    "fix_at_1": "fix_at_1",
    "precision": "pairwise_precision",
    "recall": "pairwise_recall",
    "hard_negative_false_fix": "max_hard_negative_false_fix",
    "unexplained_collisions": "max_exact_collisions",
}


def errors_result(
    c: Common,
    engine: Engine,
    fixtures: Path | None,
    out: Path | None,
    *,
    splits: list[str] | None = None,
    log_extra: Callable[[], dict[str, Any]] | None = None,
    write_log: bool = True,
    warnings: Sequence[str] = (),
) -> CommandResult:
    """Run the errors eval with `engine` (one judge call per query) and write its log (for the
    command and a batch: `log_extra()` is called once the suite has run, before its usage goes
    into the log)."""
    from legion_llm.evals.errors import run_errors_eval
    from legion_llm.memory.gitinfo import head_commit
    from legion_llm.pipeline.errmatch import PROMPT, judged_answer

    # the engine settles the `confirm` answers (one call each); the full-coverage numbers stay
    # the offline rule's, so a model run costs one call per confirm, not two per query
    result = run_errors_eval(
        fixtures,
        answerer=lambda text, query, ranked: judged_answer(engine, text, query, ranked),
        splits=splits,
    )
    extra = log_extra() if log_extra and write_log else {}
    data: dict[str, Any] = {
        **result.as_dict(),
        "engine": engine.name,
        "model": engine.model,
        "prompt": PROMPT,
        "prompt_sha256": _prompt_hash(PROMPT),
        "confidence": _confidence_provenance(),
        "git_commit": head_commit(c.root),
        "usage": engine.meter.as_dict(engine.name),
        **extra,
    }
    if not write_log:
        return CommandResult("eval errors", data)
    data["log"] = str(write_eval_log(c, "errors", engine.name, out, data))

    ran = result.splits
    rows = [[label, *(_cell(s, label, name, fmt) for s in ran)]
            for label, name, fmt in METRICS]  # fmt: skip
    human: list[Block] = [Table("eval errors", ["metric", *(s.split for s in ran)], rows)]
    for s in ran:
        eco = [[e, int(v["fix_queries"]), f"{v['fix_at_1']:.3f}", int(v["hard_negatives"]),
                f"{v['hard_negative_false_fix']:.3f}"] for e, v in s.ecosystems.items()]  # fmt: skip
        human.append(Table(f"{s.split}: per ecosystem", ["ecosystem", "queries", "fix@1",
                           "hard negatives", "false fix"], eco))  # fmt: skip
    code = 0 if result.passed else 1
    return CommandResult("eval errors", data, human, [*warnings, *result.failures], code)


def _cell(split: Any, label: str, name: str | None, fmt: str) -> str:
    if name is None:
        if label.startswith("messages"):
            return f"{split.messages} / {split.groups}"
        if label.startswith("full coverage"):
            return ""
        return f"{split.fix_at_1_ranked:.3f} / {split.fix_at_5:.3f}"
    value: Any = split
    for part in name.split("."):
        value = getattr(value, part)
    text = str(len(value)) if isinstance(value, list) else format(value, fmt)
    gate = GATE_OF.get(name, "")
    if gate in split.gates:
        limit = split.gates[gate]
        ok = split.gate_results()[gate]
        text += (
            f" ({'<=' if gate.startswith('max_') else '>='} {limit:g} {'ok' if ok else 'FAILED'})"
        )
    return text


def _prompt_hash(name: str) -> str:
    from legion_llm.llm.prompts import load_prompt

    return load_prompt(name).sha256


def _confidence_provenance() -> dict[str, Any]:
    """Which calibrated confidence answered: its bands and the sha256 of its data file."""
    import hashlib

    from legion_llm.memory.signatures.confidence import DATA, model

    fitted = model()
    digest = hashlib.sha256(DATA.read_bytes()).hexdigest() if DATA.is_file() else None
    return {"fix_band": fitted.fix, "confirm_band": fitted.confirm, "data_sha256": digest}
