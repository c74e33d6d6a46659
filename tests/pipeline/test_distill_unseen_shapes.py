"""Distillation rules the summary generator (tests/strategies/summaries.py) found missing, each
on a hand-written summary: a plan without a name, YAML escapes in an entry, text in other
scripts, a group larger than one context, an entry longer than one pattern, a name and status
word followed by what was done, a byte-order mark, a name with nothing said of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from legion_llm.memory.phases.patterns import established, is_status
from legion_llm.memory.phases.statements import token_line
from legion_llm.memory.signatures.topics import topic_terms
from legion_llm.pipeline.distill import run_distill
from legion_llm.pipeline.distill_sources import not_a_pattern, parts_of
from tests.pipeline.test_distill_summaries import TODAY, offline, project, rows


def established_fm(*entries: str) -> str:
    return "patterns-established:\n" + "".join(f"  - {e}\n" for e in entries)


def page(plan: str, frontmatter: str, title: str = "", body: str = "") -> str:
    return (f"---\nplan: {plan}\n{frontmatter}---\n\n{title or f'# Plan {plan} Summary'}\n\n"
            f"**Status**: Complete\n\n{body}")  # fmt: skip


def written(tmp_path: Path, summaries: dict[str, str]) -> tuple[list[dict[str, str]], Any]:
    paths = project(tmp_path, summaries)
    result = run_distill(paths, offline(), today=TODAY, phases=["1"])
    return rows(paths), result


def holds(entry: str, found: list[dict[str, str]]) -> bool:
    words = token_line(entry)
    return any(f" {words} " in f" {token_line(r['pattern'] + ' ' + r['context'])} " for r in found)


def test_a_plan_without_a_name_still_gets_its_pattern_with_its_phase_as_the_situation(
    tmp_path: Path,
) -> None:
    entry = "Long reports run in a worker and the page polls the report endpoint every 2 s"
    found, _ = written(tmp_path, {"01-01": page("01-01", established_fm(entry), "# 01-01 Summary")})
    assert [r["pattern"] for r in found] == [entry]
    assert "(ledger)" in found[0]["context"] and "ledger" in found[0]["reuse_criteria"]


def test_yaml_escapes_are_read_as_yaml_reads_them_and_the_entry_is_kept_whole(
    tmp_path: Path,
) -> None:
    flow = (
        "patterns-established: ['Amounts use the account''s locale, never concatenation', "
        '"Empty states say \\"No shifts yet\\", never a blank table"]\n'
    )
    assert established(f"---\n{flow}---\n") == [
        "Amounts use the account's locale, never concatenation",
        'Empty states say "No shifts yet", never a blank table',
    ]
    block = established_fm(
        '"Labels go through `t(\\"billing.total\\")`, so every string is translated"'
    )
    found, _ = written(tmp_path, {"01-01": page("01-01", block)})
    assert [r["pattern"] for r in found] == [
        'Labels go through `t("billing.total")`, so every string is translated'
    ]


def test_words_of_any_script_are_topic_terms_so_unrelated_entries_stay_apart(
    tmp_path: Path,
) -> None:
    assert topic_terms("Каждая проводка неизменяема").split() == ["каждая", "провод", "неизме"]
    assert "請求" in topic_terms("請求書番号は連番") and "beträg" in topic_terms("Beträge")
    first = "Каждая проводка неизменяема: исправление оформляется сторнирующей проводкой"
    second = "Отчёты строятся в фоне, страница опрашивает сервер каждые две секунды"
    found, _ = written(tmp_path, {"01-01": page("01-01", established_fm(first, second))})
    assert sorted(r["pattern"] for r in found) == sorted([first, second])


def test_a_group_of_many_plans_quotes_every_one_of_them(tmp_path: Path) -> None:
    kinds = ["posting", "refund", "payout", "transfer", "adjustment"]
    entries = {
        kind: f"Idempotency keys on every {kind} endpoint, stored with a unique index on "
        f"(account_id, key) and checked inside the transaction that writes the {kind}, so a "
        "retried request returns the first response"
        for kind in kinds
    }
    summaries = {f"01-0{n}": page(f"01-0{n}", established_fm(entries[k]),
                                  f"# Plan 01-0{n} Summary: Ledger {k}s")
                 for n, k in enumerate(kinds, 1)}  # fmt: skip
    found, _ = written(tmp_path, summaries)
    assert all(holds(e, found) for e in entries.values())


def test_an_entry_longer_than_a_pattern_is_kept_clause_by_clause(tmp_path: Path) -> None:
    clauses = [
        f"Approach {n}: every {word} is checked by the service before the row is written, "
        "and the check's message names the field the user must change"
        for n, word in enumerate(["amount", "currency", "account", "date", "memo"], 1)
    ]
    entry = "; ".join(clauses)
    assert len(entry) > 500 and all(len(p) <= 500 for p in parts_of(entry, 500))
    found, _ = written(tmp_path, {"01-01": page("01-01", established_fm(entry))})
    assert all(holds(c, found) for c in clauses)


def test_a_name_and_status_word_then_what_was_done_is_a_pattern_and_a_bare_status_is_reported(
    tmp_path: Path,
) -> None:
    good = "Export job: done in a worker, never in the request, so the page stays fast"
    assert not is_status(good) and is_status("Billing schema: Complete")
    found, result = written(
        tmp_path, {"01-01": page("01-01", established_fm(good, "Billing schema: Complete"))}
    )
    assert [r["pattern"] for r in found] == [good]
    assert [s["pattern"] for s in result.skipped] == ["Billing schema: Complete"]
    assert "is a status" in result.skipped[0]["reason"]


def test_a_byte_order_mark_does_not_hide_the_frontmatter() -> None:
    text = "\ufeff---\npatterns-established:\n  - Money is integer cents in every table\n---\n"
    assert established(text) == ["Money is integer cents in every table"]


def test_a_name_with_nothing_said_of_it_is_no_pattern() -> None:
    for text in ("GitHub Actions CI/CD: -", "Export: n/a", "Auth:"):
        assert not_a_pattern(text) is not None
    assert not_a_pattern("Note: keys are never logged, only their last four characters") is None
