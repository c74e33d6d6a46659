"""No false positives on real project text: the fixture phases, error messages, missions, the
demo project, every file under ../shared/realworld, and this repository's own files (which must
hold no string a secret scanner would flag: test secrets are built at run time)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from legion_llm.memory.redact import Redactor
from tests.conftest import FIXTURES, REALWORLD, REPO

REDACTOR = Redactor()
CORPORA = ["phases", "errors", "missions", "distill", "demo-project"]
# Not false positives: a fake token planted on purpose, in the gitleaks output a phase quotes
# (gitleaks itself reports it as generic-api-key). A secret-shaped literal is redacted whoever
# says it is fake.
PLANTED = {
    "phases": [
        "requirement-id-styles/.planning/phases/01-repo-hygiene-and-docs/01-03-SUMMARY.md:48: token"
    ]
}
# Not a false positive either: a password a user pasted in a public issue the error corpus quotes
# (`curl -u admin:<password> https://...`), found since curl's -u is read.
PASTED = ["fixtures/errors-corpus/kubernetes.jsonl:40: password"]


def texts(folder: Path) -> dict[str, str]:
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            try:
                found[str(path.relative_to(folder))] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    return found


def findings(corpus: dict[str, str]) -> list[str]:
    return [f"{name}:{f.line(text)}: {f.kind}" for name, text in corpus.items()
            for f in REDACTOR.find(text)]  # fmt: skip


@pytest.mark.parametrize("name", CORPORA)
def test_fixture_corpora_have_no_redaction(name: str) -> None:
    corpus = texts(FIXTURES / name)
    assert len(corpus) >= 3
    assert findings(corpus) == PLANTED.get(name, [])


@pytest.mark.skipif(not REALWORLD.is_dir(), reason="../shared/realworld is absent")
def test_every_realworld_file_has_no_redaction() -> None:
    corpus = texts(REALWORLD)
    assert len(corpus) >= 20
    assert findings(corpus) == []


def test_the_repository_itself_holds_no_secret() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    corpus = {}
    for name in listed.stdout.split("\n"):
        path = REPO / name
        if name and path.is_file():
            try:
                corpus[name] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    assert len(corpus) > 100
    planted = [f"fixtures/phases/{item}" for item in PLANTED["phases"]]
    assert findings(corpus) == PASTED + planted
