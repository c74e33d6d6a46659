"""No false positives on real project text: the fixture phases, error messages, missions, the
demo project, every file under ../shared/realworld, and this repository's own files (which must
hold no string a secret scanner would flag: test secrets are built at run time)."""

from __future__ import annotations

import string
import subprocess
from pathlib import Path

import pytest

from legion_llm.memory.redact import Redactor
from tests.conftest import CORPORA as REAL_CORPORA
from tests.conftest import FIXTURES, NO_CORPUS, REPO
from tests.redact.samples import ALNUM, B64, B64URL, HEX, draw

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


# What the redactor finds in every corpus under ../shared/realworld*, every file read: exactly these. A test plan's
# literal password in a quoted JSON field (a Go integration test's request body, in the plan
# and its research notes) is redacted on purpose: a quoted literal in a password field cannot be
# told from a real one by its text, and a test plan is where real staging passwords get pasted
# too; the plan stays readable with `[REDACTED:password]` (docs/security.md).
REALWORLD_PASSWORDS = [
    "realworld/Amead24__Kterodactyl/.planning/milestones/v1.1-phases/14-go-api-integration-tests/"
    "14-01-PLAN.md:100: password",
    "realworld/Amead24__Kterodactyl/.planning/milestones/v1.1-phases/14-go-api-integration-tests/"
    "14-RESEARCH.md:248: password",
    # a staging database password pasted into a run command (`DB_PASS=...`) and a UAT note
    "realworld-c/wildbear94__MiceSign/.planning/phases/35-backend-logging/35-01-PLAN.md:320: "
    "password",
    "realworld-c/wildbear94__MiceSign/.planning/phases/35-backend-logging/35-HUMAN-UAT.md:71: "
    "password",
]


@pytest.mark.corpus
@pytest.mark.skipif(not REAL_CORPORA, reason=NO_CORPUS)
def test_every_realworld_file_has_no_redaction() -> None:
    """Code signatures (`userPrivateKey: Uint8Array`, `privateKey: ed25519Seed,`) and public
    keys are not secrets; the one literal password of a test plan is (issue 25, point 13)."""
    corpus = {f"{c.name}/{name}": text for c in REAL_CORPORA for name, text in texts(c).items()}
    assert len(corpus) >= 500
    assert findings(corpus) == REALWORLD_PASSWORDS


def uuid(seed: int) -> str:
    h = draw(32, HEX, seed=seed)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def ordinary_lines() -> list[str]:
    """Lines like those the attack pass saw changed (cache keys with SHAs, `*_key` UUIDs, public
    keys, a signing-key fingerprint, typed key variables): written here, none a secret."""
    sha1, sha256 = draw(40, HEX, seed=1), draw(64, HEX, seed=2)
    public = "BN" + draw(85, B64URL, seed=3)
    return [
        f"key: node-modules-{sha256}",
        f"cache_key: deps-v1-{sha1}",
        f"cache-key=pnpm-store-linux-{sha256}",
        f"restore_key: gradle-{sha1[:12]}",
        f"idempotency_key: {uuid(4)}",
        f"IDEMPOTENCY_KEY={uuid(5)}",
        f'"partition_key": "{uuid(6)}"',
        f"row_key = {uuid(7)}",
        f"object_key: {uuid(8)}",
        f"VAPID_PUBLIC_KEY={public}",
        f"NEXT_PUBLIC_VAPID_PUBLIC_KEY={public}",
        f"public_key: {public}",
        f'"publicKey": "{public}"',
        f"pub_key = {public}",
        f"git commit --signing-key {sha1.upper()}",
        f"gpg --signing-key={sha1[:16].upper()}",
        f"signing_key: {' '.join(sha1.upper()[i : i + 4] for i in range(0, 40, 4))}",
        f"host_key: SHA256:{draw(43, B64, seed=9)}",
        f"fingerprint_key: {':'.join(sha1[i : i + 2] for i in range(0, 32, 2))}",
        "privateKey: Uint8Array;",
        "  userPrivateKey: Uint8Array,",
        "export function derive(userPrivateKey: Uint8Array): Promise<KeyPair>",
        "privateKey: ed25519Seed,",
        "publicKey: ed25519PublicKey,",
        "secretKey: Uint8Array",
        "password: string;",
        "apiKey: ApiKeyV2 | null",
        "let sessionToken: JwtToken2 = await login()",
    ]


def test_ordinary_lines_are_not_redacted() -> None:
    lines = ordinary_lines()
    assert [line for line in lines if REDACTOR.find(line)] == []


def test_their_secret_neighbours_still_are() -> None:
    """The same names with secret values, and secret names with the same shapes of value."""
    secret = draw(24, ALNUM, seed=11) + "9x"
    lines = [
        f"api_key: {uuid(12)}",  # an API key may be a UUID (Heroku's are)
        f"ENCRYPTION_KEY={draw(64, HEX, seed=13)}",
        f'PRIVATE_KEY="{secret}"',
        f"privateKey: '{secret}'",
        f"secret_key = {secret}",
        f"VAPID_PRIVATE_KEY={draw(43, B64URL, seed=14)}",
        f"password: Welcome{draw(4, string.digits, seed=15)}!",
    ]
    assert [line for line in lines if not REDACTOR.find(line)] == []


@pytest.mark.subprocess
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
