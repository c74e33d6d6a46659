"""`errors add` never loses a fix (issue 34, point 4).

Merging is for the same error: two texts that differ in a name deciding the fix (a table, a
column, a package, a host, a port, a file) are never merged, whatever their score; when the same
error is stored again, both fixes survive; an unresolved entry's text is never replaced.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from legion_llm.memory.knowledge.read import ERRORS, read_knowledge
from legion_llm.memory.knowledge.store import add_knowledge, merged_fix
from legion_llm.memory.signatures.confidence import answered
from legion_llm.memory.signatures.features import features
from legion_llm.memory.signatures.match import Candidate, SignatureIndex
from legion_llm.project import MemoryPaths

TODAY = date(2026, 6, 1)


def store(paths: MemoryPaths, signature: str, fix: str, resolved: str = "true") -> object:
    values = {"error_signature": signature, "fix": fix, "agent": "dev", "resolved": resolved}
    return add_knowledge(paths, ERRORS, values, today=TODAY, branch="main")


def fixes(paths: MemoryPaths) -> dict[str, tuple[str, bool]]:
    records = read_knowledge(ERRORS, paths.errors).records
    return {r.id: (r.values["fix"], r.resolved) for r in records}


PAIRS = {  # the same words, a different deciding name
    "table": (
        'psycopg2.errors.UndefinedTable: relation "users" does not exist',
        'psycopg2.errors.UndefinedTable: relation "invoices" does not exist',
    ),
    "column": (
        'psycopg2.errors.UndefinedColumn: column "email" does not exist',
        'psycopg2.errors.UndefinedColumn: column "name" does not exist',
    ),
    "python module": (
        "ModuleNotFoundError: No module named 'yaml'",
        "ModuleNotFoundError: No module named 'requests'",
    ),
    "package": (
        "ERROR: No matching distribution found for tensorflow==1.2",
        "ERROR: No matching distribution found for torch==0.4",
    ),
    "port": (
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "Error: connect ECONNREFUSED 127.0.0.1:6379",
    ),
    "host": ("getaddrinfo ENOTFOUND redis", "getaddrinfo ENOTFOUND localhost"),
    "file": (
        "FileNotFoundError: [Errno 2] No such file or directory: 'config/settings.yaml'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/users.csv'",
    ),
}


@pytest.mark.parametrize("resolved", ["true", "false"])
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_errors_that_differ_in_a_deciding_name_are_never_merged(
    tmp_path: Path, name: str, resolved: str
) -> None:
    """Before, `relation "invoices"` merged into `relation "users"`: its fix was dropped, or,
    the stored entry unresolved, written over the stored one's."""
    paths = MemoryPaths(tmp_path)
    first, second = PAIRS[name]
    store(paths, first, "the first fix", resolved)
    stored = store(paths, second, "the second fix")
    assert stored.action == "added"  # type: ignore[attr-defined]
    assert fixes(paths) == {
        "E-001": ("the first fix", resolved == "true"),
        "E-002": ("the second fix", True),
    }


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_matcher_never_answers_fix_across_a_deciding_name(name: str) -> None:
    first, second = PAIRS[name]
    ranked = SignatureIndex([Candidate("E-001", first, "the first fix", True)]).rank(second)
    found = answered(features(second), ranked)
    assert found.answer != "fix"


def test_the_same_error_again_keeps_every_fix(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    signature = 'psycopg2.errors.UndefinedTable: relation "users" does not exist'
    store(paths, signature, "restart the app", "false")
    assert store(paths, signature, "run the migrations").action == "updated"  # type: ignore[attr-defined]
    assert store(paths, signature, "seed the test database").action == "updated"  # type: ignore[attr-defined]
    assert store(paths, signature, "Run the migrations.").action == "existing"  # type: ignore[attr-defined]
    [(fix, resolved)] = fixes(paths).values()
    assert resolved
    for each in ("restart the app", "run the migrations", "seed the test database"):
        assert each in fix


def test_merged_fix_says_which_fix_worked() -> None:
    assert merged_fix("a", True, "b", True) == "a; also: b"
    assert merged_fix("a", False, "b", True) == "b (tried before: a, which did not resolve it)"
    assert merged_fix("a", True, "b", False) == "a; also tried: b, which did not resolve it"
    assert merged_fix("Run it.", True, "run  it", True) == "Run it."
    assert merged_fix("", False, "b", True) == "b"


SAME = 'psycopg2.errors.UndefinedTable: relation "users" does not exist'


def test_a_fix_that_is_part_of_a_stored_one_is_still_its_own_fix(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    store(paths, SAME, "set the pool timeout to 300")
    store(paths, SAME, "set the pool timeout to 30")
    ((fix, _),) = fixes(paths).values()
    assert "timeout to 300" in fix and "timeout to 30;" not in fix and fix.endswith("to 30")


def test_the_same_fix_stored_again_as_working_marks_the_error_resolved(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    store(paths, SAME, "run the migrations", resolved="false")
    again = store(paths, SAME, "run the migrations", resolved="true")
    assert again.action == "updated"
    assert list(fixes(paths).values()) == [("run the migrations", True)]


def test_a_merged_fix_past_its_bound_goes_to_a_row_of_its_own(tmp_path: Path) -> None:
    paths = MemoryPaths(tmp_path)
    for n in range(12):
        store(paths, SAME, f"attempt {n}: " + "reset the connection pool and retry " * 5)
    stored = fixes(paths)
    assert len(stored) > 1  # nothing dropped: the fixes that did not fit start another row
    every = " ".join(fix for fix, _ in stored.values())
    assert all(f"attempt {n}:" in every for n in range(12))
