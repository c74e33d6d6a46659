"""A careless stand-in model for `distill` requests on the loopback fake (FakeMessagesAPI).

    api = FakeMessagesAPI(responder=CarelessDistiller())

It reads what a real model reads, the candidate groups of the request, and for each group of
plan-summary entries answers what a competent but careless model would: the lead entry as the
pattern, a context of its own with one invented clause (`cached in Redis for 24 hours`: a fact
no summary states), and beside it the mistakes a model makes: the plan's status offered as a
pattern, a list of files offered as a pattern, a pattern naming a technology no source states,
the same pattern twice, and a pattern citing a plan that was never shown. For a group of
outcomes it offers the first outcome's summary as written (often a status). None of the
mistakes may be written; the invented clause is cut and the rest kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tests.fakes.compaction_models import request_text
from tests.fakes.messages_api import RecordedRequest
from tests.fakes.replies import Reply

_GROUP = re.compile(r"^## Group (\S+) \((.*)\)$")
_CITE = re.compile(r"cite ([^)]*)$")
_ENTRY = re.compile(
    r"^- plan (\S+) \| phase \S+ \| (.*?) \| status (.*?) \| .*? \| "
    r"(?:established|marked|decision|deviation): (.*)$"
)
_OUTCOME = re.compile(r"^- (O-\d+) \| .*\| tags: [^|]* \| (.*?) \[why a candidate")
INVENTED = "cached in Redis for 24 hours"


@dataclass
class CarelessDistiller:
    calls: int = 0

    def __call__(self, request: RecordedRequest) -> Reply | None:
        if request.path != "/v1/messages" or not isinstance(request.body, dict):
            return None
        self.calls += 1
        patterns: list[dict[str, Any]] = []
        for block in request_text(request).split("\n## Group ")[1:]:
            patterns += _answer("## Group " + block)
        return Reply.answer({"patterns": patterns})


def _answer(block: str) -> list[dict[str, Any]]:
    lines = block.strip().split("\n")
    head = _GROUP.match(lines[0])
    if head is None:
        return []
    cite = _CITE.search(head.group(2))
    if cite is None:  # a group of outcomes: the first summary as written
        found = next((m for line in lines[1:] if (m := _OUTCOME.match(line))), None)
        if found is None:
            return []
        return [
            _pattern(found.group(2), "Outcome as recorded", "Reuse as before", [found.group(1)])
        ]
    ids = [i.strip() for i in cite.group(1).split(",")]
    entry = next((m for line in lines[1:] if (m := _ENTRY.match(line))), None)
    if entry is None:
        return []
    plan, name, status, text = entry.groups()
    good = _pattern(text, f"Plan {plan} ({name}), {status}; {INVENTED}",
                    f"Reuse on work like {name}", ids)  # fmt: skip
    return [
        good,
        _pattern(f"{name}: {status}", f"Plan {plan}", f"Reuse on work like {name}", ids),
        _pattern(
            "`src/app.py`, `src/models.py` and `src/routes.py`",
            f"Plan {plan} ({name})",
            f"Reuse on work like {name}",
            ids,
        ),
        _pattern(
            f"{text} on Kubernetes 1.29", f"Plan {plan} ({name})", f"Reuse on work like {name}", ids
        ),
        dict(good),
        _pattern(text, f"Plan {plan} ({name})", f"Reuse on work like {name}", ["99-99"]),
    ]


def _pattern(pattern: str, context: str, reuse: str, ids: list[str]) -> dict[str, Any]:
    return {"pattern": pattern, "context": context, "reuse_criteria": reuse, "source": ids,
            "tags": ["pattern", "reuse"]}  # fmt: skip
