"""The fresh test split of the error corpus (issue 22, point 4): fixtures/errors-corpus/fresh/.

Checks the data only (schema, counts, provenance, anonymisation, that it is new); it never runs
the matcher on it: the split is held out, run only to report (its README).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from legion_llm.evals.error_data import ErrorsDataset, load_dataset, load_definition
from legion_llm.memory.redact import Redactor

REPO = Path(__file__).resolve().parents[1]
FRESH = REPO / "fixtures" / "errors-corpus" / "fresh"
OLD_CORPUS = REPO / "fixtures" / "errors-corpus"
ORIGINAL = REPO / "fixtures" / "errors"

GROUP_FIELDS = {"group", "ecosystem", "family", "root_cause", "fix", "confusable_with",
                "sources", "split"}  # fmt: skip
MESSAGE_FIELDS = {"id", "group", "text", "tool", "source"}
THREAD = re.compile(r"^https://(github\.com/[\w.-]+/[\w.-]+/(issues|pull|discussions)/\d+|\S+)$")
EMAIL = re.compile(r"[\w.%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
SSH_REMOTE = re.compile(r"^git@[\w.-]+$")  # git@github.com:owner/repo is a host, not a person
HOME = re.compile(
    r"(?:/home/|/Users/|\b[A-Za-z]:\\{1,2}Users\\{1,2}|/c/Users/)([^/\\\s'\"`:;,)>]+)"
)
# user@host:~$ of a shell prompt (not a stack frame's fn@http://...)
PROMPT = re.compile(r"(?<![\w.-])([\w.-]+)@([\w.-]+):(?:~|/(?!/))")
PROMPT_NAMES = {"dev", "root", "ubuntu", "kali", "user", "host", "server", "ubuntu-22.04"}
CONTAINER_ID = re.compile(r"[0-9a-f]{12}")
# the user names left in paths: ours (dev) and placeholders the reporters typed themselves,
# CI/container accounts, and app folders that are not people
HOME_PLACEHOLDERS = {
    "dev", "user", "username", "<username", "X", "Me", "Blah", "PC", "Administrator", "root",
    "runner", "vsts-agent", "ubuntu", "pi", "gitpod", "container", "flutter", "cloudtest", "tfsbuild", ".cache",
    "nginxWebUI",
}  # fmt: skip


# the one text two groups share (the same error printed for either hidden cause): named in the
# README as the issue asks, so the eval can tell it from a collision of the matcher's making
IDENTICAL_TEXT = {
    'Invariant Violation: requireNativeComponent: "RNSVGPath" was not found in the UIManager.': {
        "f-rn-svg-duplicate-or-incompatible-version",
        "f-rn-svg-native-module-not-built",
    }
}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@cache
def _groups() -> tuple[dict[str, Any], ...]:
    return tuple(_rows(FRESH / "groups.jsonl"))


@cache
def _messages() -> tuple[dict[str, Any], ...]:
    return tuple(
        row
        for path in sorted(FRESH.glob("*.jsonl"))
        if path.name != "groups.jsonl"
        for row in _rows(path)
    )


def _dataset() -> ErrorsDataset:
    spec = load_definition().splits["fresh"]
    return load_dataset(spec.path, spec.split)


def _normal(text: str) -> str:
    return " ".join(text.split())


def _old_texts(folder: Path) -> set[str]:
    return {
        _normal(row["text"]).lower()
        for path in folder.glob("*.jsonl")
        if path.name != "groups.jsonl"
        for row in _rows(path)
    }


def test_the_definition_reads_the_fresh_folder_whole_and_gates_it_with_the_issues_gates() -> None:
    definition = load_definition()
    spec = definition.splits["fresh"]
    assert spec.path == FRESH.resolve() and spec.split is None
    assert definition.gates["fresh"] == {  # issue 22's gates sit on the held-out split
        "fix_precision": 0.95,
        "max_hard_negative_fix": 0.05,
        "fix_coverage": 0.60,
        "confirm_recall": 0.95,
        "max_exact_collisions": 0,
    }
    assert spec.identical_text == (
        "f-rn-svg-duplicate-or-incompatible-version = f-rn-svg-native-module-not-built",
    )  # the one pair its README names as the very same text
    data = _dataset()
    assert len(data.messages) == len(_messages()) and set(data.groups) == {
        g["group"] for g in _groups()
    }
    # the old corpus folder does not pick the fresh files up (they sit one folder down)
    old = load_dataset(OLD_CORPUS)
    assert not set(old.groups) & set(data.groups)
    assert not {m.id for m in old.messages} & {m.id for m in data.messages}


def test_schema_of_groups_and_messages() -> None:
    groups = {g["group"]: g for g in _groups()}
    assert len(groups) == len(_groups())  # no group twice
    for group in groups.values():
        assert set(group) == GROUP_FIELDS, group["group"]
        assert group["split"] == "fresh" and group["group"].startswith("f-")
        assert group["root_cause"].strip() and group["fix"].strip(), group["group"]
        assert group["family"] and group["ecosystem"], group["group"]
        for other in group["confusable_with"]:
            assert other in groups and other != group["group"], (group["group"], other)
            assert group["group"] in groups[other]["confusable_with"], (group["group"], other)
    ids = Counter(m["id"] for m in _messages())
    assert max(ids.values()) == 1
    for message in _messages():
        assert set(message) == MESSAGE_FIELDS, message["id"]
        assert message["group"] in groups, message["id"]
        assert re.fullmatch(re.escape(message["group"]) + r"-\d{2}", message["id"])
        assert message["text"].strip() and message["tool"].strip(), message["id"]


def test_every_group_and_message_names_its_public_thread() -> None:
    sources: dict[str, set[str]] = defaultdict(set)
    for message in _messages():
        assert THREAD.match(message["source"]), message["id"]
        sources[message["group"]].add(message["source"])
    for group in _groups():
        assert group["sources"], group["group"]
        assert all(THREAD.match(url) for url in group["sources"]), group["group"]
        assert sources[group["group"]] <= set(group["sources"]), group["group"]


def test_counts_as_the_eval_counts_them() -> None:
    data = _dataset()
    by_group: dict[str, list[str]] = defaultdict(list)
    for message in data.messages:
        by_group[message.group].append(message.id)
    stored = {min(ids) for ids in by_group.values()}  # each group's first message by id
    fix_queries = [m for m in data.messages if m.id not in stored]
    with_lookalikes = {g for g, group in data.groups.items() if group.confusable_with}
    hard_negatives = [m for m in data.messages if m.group in with_lookalikes]
    assert len(fix_queries) >= 500
    assert len(hard_negatives) >= 500
    families = {g.family for g in data.groups.values()}
    assert len(families) >= 25 and len({g.ecosystem for g in data.groups.values()}) >= 20
    per_family = Counter(g.family for g in data.groups.values())
    assert min(per_family.values()) >= 2  # every family has look-alike root causes
    # most groups have a stored entry and queries; a one-message group is there as a look-alike
    # (stored, and asked as a hard negative)
    single = {g for g, ids in by_group.items() if len(ids) == 1}
    assert len(single) <= len(by_group) // 4 and single <= with_lookalikes


def test_new_families_only() -> None:
    old = {row["family"] for row in _rows(OLD_CORPUS / "groups.jsonl")}
    fresh = {g["family"] for g in _groups()}
    assert not fresh & old
    old_groups = {row["group"] for row in _rows(OLD_CORPUS / "groups.jsonl")}
    old_groups |= {row["group"] for row in _rows(ORIGINAL / "groups.jsonl")}
    assert not {g["group"] for g in _groups()} & old_groups


def test_no_message_text_is_copied_from_the_old_sets_or_shared_between_fresh_groups() -> None:
    old = _old_texts(OLD_CORPUS) | _old_texts(ORIGINAL)
    assert len(old) > 1000  # both old sets were read
    groups_of: dict[str, set[str]] = defaultdict(set)
    for message in _messages():
        text = _normal(message["text"])
        assert text.lower() not in old, message["id"]  # not even in another case
        groups_of[text].add(message["group"])
    shared = {text: groups for text, groups in groups_of.items() if len(groups) > 1}
    assert shared == IDENTICAL_TEXT
    readme = (FRESH / "README.md").read_text(encoding="utf-8")
    assert all(text in readme for text in shared)


def test_anonymised() -> None:
    redactor = Redactor()
    for row in (*_messages(), *_groups()):
        name = row.get("id", row["group"])
        for field in ("text", "tool", "root_cause", "fix"):
            value = row.get(field, "")
            assert not redactor.find(value), (name, field)
            for email in EMAIL.finditer(value):
                assert SSH_REMOTE.match(email.group()), (name, field, email.group())
            for prompt in PROMPT.finditer(value):
                user, machine = prompt.groups()
                assert user in PROMPT_NAMES, (name, field, prompt.group())
                assert machine in PROMPT_NAMES or CONTAINER_ID.fullmatch(machine), (name, field)
            for home in HOME.finditer(value):
                assert home.group(1) in HOME_PLACEHOLDERS, (name, field, home.group(1))
