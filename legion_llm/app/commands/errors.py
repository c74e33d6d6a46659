"""`errors match`: known fixes for a new error, answered fix, confirm or none."""

from __future__ import annotations

from typing import Any

from legion_llm.app.context import Common
from legion_llm.app.result import Block, CommandResult, Table
from legion_llm.app.session import LazySession, usage_lines
from legion_llm.memory.knowledge.read import ERRORS, read_knowledge


def match_result(c: Common, text: str, limit: int, llm: LazySession) -> CommandResult:
    """`data.answer` is fix, confirm or none; `data.matches` the ranked candidates (at most
    `limit`), each with its confidence and evidence; when the answer is `fix`, `matches[0]` is
    it. A model engine is asked only to settle a `confirm`."""
    from legion_llm.app.host import judge_request
    from legion_llm.memory.redact import project_redactor
    from legion_llm.pipeline.errmatch import answer_error, confirm_to_judge

    loaded = read_knowledge(ERRORS, c.paths.errors)
    engine = llm.open().engine if loaded.records else None
    found = answer_error(loaded.records, text, engine, limit)
    matches = [found.match_dict(i) for i in range(len(found.matches))]
    data: dict[str, Any] = {"answer": found.answer, "decided_by": found.decided_by,
                            "shown": found.shown, "matches": matches}  # fmt: skip
    close_calls = confirm_to_judge(text, found, project_redactor(c.root))
    if close_calls:  # no model judged the candidates: the calling agent can (host engine)
        data["to_judge"] = judge_request(close_calls)
    warnings = list(loaded.warnings)
    if llm.session is not None:
        data["usage"] = llm.session.usage()
        warnings += llm.session.warnings
    columns = ["id", "confidence", "score", "shown", "resolved", "fix"]
    rows = [[m["id"], m["confidence"], m["score"], "yes" if m["shown"] else "no", m["resolved"],
             m["fix"]] for m in matches]  # fmt: skip
    human: list[Block] = [answer_line(data)]
    if matches:
        human.append(Table("errors match", columns, rows))
    if llm.session is not None:
        human += usage_lines(llm.session.usage(), llm.verbose)
    return CommandResult("errors match", data, human, warnings)


def answer_line(data: dict[str, Any]) -> str:
    """The one line that says which of the three answers it is."""
    matches = data["matches"]
    if data["answer"] == "fix":
        best = matches[0]
        return f"fix: {best['id']} applies (confidence {best['confidence']:.2f}): {best['fix']}"
    if data["answer"] == "confirm":
        ids = ", ".join(m["id"] for m in matches[: data["shown"]])
        return f"confirm: not sure; check which of {ids} applies before using its fix"
    if matches:
        best = matches[0]
        return f"none: no stored fix applies (closest {best['id']}, confidence {best['confidence']:.2f})"
    return "none: no stored fix applies"
