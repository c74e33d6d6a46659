"""Every entry of the matcher's data files does what it says, and is needed for it.

- data/equivalences.toml: each entry's example pairs are the same root cause, and the entry is
  what rewrites them (without it, their normalised forms are not what the matcher compares);
- data/discriminators.toml: each rule's examples yield the value it names;
- data/banners.json: banners weigh less and never decide an exact match on their own.
"""

from __future__ import annotations

import pytest

from legion_llm.memory.signatures import synonyms
from legion_llm.memory.signatures.banners import FLOOR, _groups, shared_by, weight
from legion_llm.memory.signatures.discriminators import (
    conflicting,
    discriminators,
    rules,
    telling,
    weak_kinds,
)
from legion_llm.memory.signatures.match import (
    Candidate,
    SignatureIndex,
    decide_offline,
    normalise,
    salient,
    same_root_cause,
    strong_fingerprint,
)
from legion_llm.memory.signatures.prefixes import strip_prefixes
from legion_llm.memory.signatures.versions import relation as version_relation_of
from legion_llm.memory.signatures.versions import version_relation

EQUIVALENCES = synonyms.equivalences()


@pytest.mark.parametrize("entry", EQUIVALENCES, ids=[e.name for e in EQUIVALENCES])
def test_each_equivalence_joins_its_examples_and_is_needed(
    entry: synonyms.Equivalence, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert entry.examples, f"{entry.name} has no example"
    for one, other in entry.examples:
        assert same_root_cause(one, other)[0], (one, other)
    rewritten = [normalise(salient(text)) for pair in entry.examples for text in pair]
    others = tuple(e for e in EQUIVALENCES if e is not entry)
    monkeypatch.setattr(synonyms, "equivalences", lambda: others)
    without = [normalise(salient(text)) for pair in entry.examples for text in pair]
    assert rewritten != without, f"{entry.name} rewrites none of its examples"


RULES = rules()


@pytest.mark.parametrize("rule", RULES, ids=[f"{r.kind}-{i}" for i, r in enumerate(RULES)])
def test_each_discriminator_reads_its_examples(rule: object) -> None:
    assert rule.examples  # type: ignore[attr-defined]
    for text, value in rule.examples:  # type: ignore[attr-defined]
        found = discriminators(text.split("\n"))
        assert (rule.kind, value) in found, (text, found)  # type: ignore[attr-defined]


def test_a_different_name_of_the_same_kind_is_a_strong_negative() -> None:
    postgres = "Error: connect ECONNREFUSED 127.0.0.1:5432"
    redis = "Error: connect ECONNREFUSED 127.0.0.1:6379"
    assert conflicting(discriminators([postgres]), discriminators([redis])) == [
        "service=postgres",
        "service=redis",
    ]
    assert strong_fingerprint(postgres) != strong_fingerprint(redis)
    index = SignatureIndex([Candidate("pg", postgres), Candidate("redis", redis)])
    [best, other] = index.rank("connect ECONNREFUSED 10.0.0.7:5432 (node-postgres)", 2)
    assert best.candidate.key == "pg" and decide_offline(best)
    assert not decide_offline(other) and "service=redis" in other.conflicts


def test_banners_weigh_less_and_never_decide_an_exact_match() -> None:
    banners = _groups()
    assert banners, "data/banners.json is empty"
    line, groups = max(banners.items(), key=lambda kv: kv[1])
    assert shared_by(line) == groups >= 3 and FLOOR <= weight(line) < 1.0
    assert weight("ModuleNotFoundError: No module named 'yaml'") == 1.0
    assert (
        strong_fingerprint(
            "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree"
        )
        is None
    )


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["api-1  | Error: boom", "api-1  | at x"], ["Error: boom", "at x"]),
        (["2024-05-01T10:00:00.1234567Z ##[error]Process failed"], ["Process failed"]),
        (["May 02 10:00:01 host app[12]: ERROR bad thing"], ["bad thing"]),
        (
            ["2024-01-01 10:00:00.123 ERROR 1 --- [main] o.s.boot.SpringApplication : run failed"],
            ["run failed"],
        ),
        (
            ["@scope/web:build: error TS2322: x", "@scope/web:build: y", "@scope/web:build: z"],
            ["error TS2322: x", "y", "z"],
        ),
        (["│ Error: Incompatible provider version"], ["Error: Incompatible provider version"]),
        (["plain line", "another"], ["plain line", "another"]),
        # a prefix on every line of a traceback: its indented frames carry it too
        (
            ["[E] Traceback (most recent call last):", '[E]   File "x.py", line 1, in <module>',
             "[E]     import yaml", "[E] ModuleNotFoundError: No module named 'yaml'"],
            ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
             "    import yaml", "ModuleNotFoundError: No module named 'yaml'"],
        ),
        # a bracketed tag before an exception is not a Spring Boot logger's `[thread] name:`
        (["[pod/api-7d9f8-x2x9q/api] Error: listen EADDRINUSE: address already in use :::3000",
          "[pod/api-7d9f8-x2x9q/api]     at Server.setupListenHandle", "[pod/api-7d9f8-x2x9q/api] }"],
         ["Error: listen EADDRINUSE: address already in use :::3000",
          "    at Server.setupListenHandle", "}"]),
    ],
)  # fmt: skip
def test_log_prefixes_are_removed(lines: list[str], expected: list[str]) -> None:
    assert strip_prefixes(lines) == expected


@pytest.mark.parametrize(
    ("line", "relation"),
    [
        ("- Root composer.json requires php ^7.1.3 but your php version (8.0.7) does not "
         "satisfy that requirement.", "newer"),
        ("- x/y dev-master requires php >=7.1.3 -> your PHP version (5.6.30) does not satisfy "
         "that requirement.", "older"),
        ("- This package requires php 7.4 but your PHP version (7.4.3) does not satisfy that "
         "requirement.", "patch"),
        ("error: package `bitstream-io v2.5.3` cannot be built because it requires rustc 1.79 or "
         "newer, while the currently active rustc version is 1.76.0", "older"),
        ("Error: chart requires kubeVersion: >= 1.19.0-0 <= 1.24.0-0 which is incompatible with "
         "Kubernetes v1.25.2", "newer"),
        ("Error: INSTALLATION FAILED: chart requires kubeVersion: >= 1.19 which is incompatible "
         "with Kubernetes v1.21.9-gke.1002", "satisfies"),
        ('error x@1.0.0: The engine "node" is incompatible with this module. Expected version '
         '">=18". Got "16.20.0"', "older"),
        ("ERROR: Package 'x' requires a different Python: 3.8.10 not in '>=3.9'", "older"),
        ("Error: Cannot find module 'lodash'", ""),
    ],
)  # fmt: skip
def test_the_version_relation_says_which_way_the_fix_goes(line: str, relation: str) -> None:
    assert version_relation(line) == relation
    if relation:
        assert ("version", relation) in discriminators([line])


def test_caret_tilde_and_alternatives() -> None:
    assert version_relation_of("^16.8.0 || ^17.0.0", "18.2.0") == "newer"
    assert version_relation_of("^16.8.0 || ^17.0.0", "17.0.2") == "satisfies"
    assert version_relation_of("~1.2.3", "1.3.0") == "newer"
    assert version_relation_of("^0.2.1", "0.3.0") == "newer"  # a 0.x caret stops at the minor


def test_an_absent_name_conflicts_but_is_never_shared() -> None:
    crlf = "-bash: ./deps.sh: /bin/bash^M: bad interpreter: No such file or directory"
    typo = "-bash: ./build.sh: bin/bash: bad interpreter: No such file or directory"
    other = "zsh: ./run.sh: usr/bin/env: bad interpreter: No such file or directory"
    assert ("line-ending", "lf") in discriminators([typo])
    assert conflicting(discriminators([crlf]), discriminators([typo])) == [
        "line-ending=crlf",
        "line-ending=lf",
    ]
    assert ("line-ending", "lf") not in telling(discriminators([typo]))  # no shared token...
    assert telling(discriminators([crlf])) == {("line-ending", "crlf")}  # ...a named one is
    assert not conflicting(discriminators([typo]), discriminators([other]))


def test_every_weak_kind_is_a_kind_some_rule_reads() -> None:
    kinds = {rule.kind for rule in rules()}
    assert weak_kinds() and weak_kinds() <= kinds, sorted(weak_kinds() - kinds)
