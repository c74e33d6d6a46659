"""The error-signature matcher: salient lines, normalisation, fingerprints, ranking, bands."""

from __future__ import annotations

from itertools import pairwise

import pytest

from legion_llm.memory.signatures import match as signatures
from legion_llm.memory.signatures.match import (
    HIGH,
    LOW,
    MID,
    TIE,
    Candidate,
    Match,
    SignatureIndex,
    decide_offline,
    fingerprint,
    normalise,
    salient,
    same_root_cause,
)
from legion_llm.memory.signatures.tokens import SUBJECT, tokens

PY_TRACEBACK = """Traceback (most recent call last):
  File "/srv/billing/jobs/export.py", line 41, in <module>
    main()
  File "/srv/billing/jobs/export.py", line 37, in main
    import boto3
ModuleNotFoundError: No module named 'boto3'"""

PY_TRACEBACK_WIN = """Traceback (most recent call last):
  File "C:\\Users\\ops\\tools\\sync.py", line 3, in <module>
    from boto3.session import Session
ModuleNotFoundError: No module named 'boto3'"""

RUSTC = """   Compiling ledger v0.4.1 (/home/dev/ledger)
error[E0599]: no method named `len` found for struct `Config` in the current scope
  --> src/settings.rs:44:19
   |
44 |     let n = cfg.len();
   |                 ^^^ method not found in `Config`

error: could not compile `ledger` (lib) due to 1 previous error"""

TSC = """src/pages/cart.tsx:12:5 - error TS2741: Property 'total' is missing in type '{ items: never[]; }' but required in type 'CartProps'.

12     <Cart items={[]} />
       ~~~~

Found 1 error in src/pages/cart.tsx:12"""

NPM = """npm ERR! code E404
npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found
npm ERR! 404
npm ERR! A complete log of this run can be found in:
npm ERR!     /home/kim/.npm/_logs/2025-02-03T10_11_12_345Z-debug-0.log"""

GO_PANIC = """--- FAIL: TestParse (0.00s)
panic: runtime error: slice bounds out of range [:12] with capacity 8 [recovered]
goroutine 7 [running]:
example.com/parse.Header(...)
\t/home/ci/parse/header.go:31 +0x1c5"""

JAVA = """Exception in thread "main" java.lang.RuntimeException: boot failed
\tat com.shop.Main.main(Main.java:12)
Caused by: java.io.FileNotFoundException: /etc/shop/app.yml (No such file or directory)
\tat java.base/java.io.FileInputStream.open0(Native Method)"""

MAVEN = """[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project shop-api: There are test failures. -> [Help 1]
[ERROR] Re-run Maven using the -X switch to enable full debug logging."""

ARGPARSE = """ERROR: usage: pytest [options] [file_or_dir] [file_or_dir] [...]
pytest: error: unrecognized arguments: --reruns=3
  inifile: /home/u/app/pytest.ini"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PY_TRACEBACK, "ModuleNotFoundError: No module named 'boto3'"),
        (
            RUSTC,
            "error[E0599]: no method named `len` found for struct `Config` in the current scope",
        ),
        (
            TSC,
            "error TS2741: Property 'total' is missing in type '{ items: never[]; }' but required in type 'CartProps'.",
        ),
        (
            NPM,
            "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found",
        ),
        (GO_PANIC, "panic: runtime error: slice bounds out of range [:12] with capacity 8"),
        (
            JAVA,
            "java.lang.RuntimeException: boot failed\njava.io.FileNotFoundException: /etc/shop/app.yml (No such file or directory)",
        ),
        (MAVEN, "maven-surefire-plugin: There are test failures."),
        (ARGPARSE, "error: unrecognized arguments: --reruns=3"),
        ("bash: ./release.sh: Permission denied", "./release.sh: Permission denied"),
        ("E       fixture 'httpx_mock' not found", "fixture 'httpx_mock' not found"),
    ],
)
def test_salient_picks_the_line_that_names_the_error(text: str, expected: str) -> None:
    assert salient(text) == expected


def test_salient_of_unrecognised_text_is_its_first_line() -> None:
    assert salient("\n  something odd happened\nmore\n") == "something odd happened"


def test_normalise_parameterises_what_varies() -> None:
    text = (
        "request 7f3e9a2c-1d4b-4e8f-9a6b-2c5d8e1f0a3b from alice@example.com to "
        "https://api.example.com/v2/users?id=9 via 10.0.3.7:8443 at 0x7ffd5e3c took 1532ms "
        "on 2025-09-12T10:22:01.442Z (node v20.11.1, build 3f9c0b2e71d4a8f6, pid 4821)"
    )
    assert normalise(text) == (
        "request <uuid> from <email> to https:<url> via <ip> at <hex> took <duration> "
        "on <date> (node <version>, build <hash>, pid <num>)"
    )


@pytest.mark.parametrize(
    "path",
    [
        "/home/ana/app/src/main.py:12:5",
        "C:\\Users\\ana\\app\\src\\main.py",
        "src/app/main.py:12",
        "./scripts/run.sh",
    ],
)
def test_normalise_replaces_paths_and_positions(path: str) -> None:
    assert normalise(f"failure in {path} now") == "failure in <path> now"


def test_normalise_keeps_codes_identifiers_and_short_quoted_names() -> None:
    assert normalise("error TS2322: Type 'string' is not assignable to type 'number'.") == (
        "error TS2322: Type 'string' is not assignable to type 'number'."
    )
    assert normalise("error[E0382]: borrow of moved value: `items`") == (
        "error[E0382]: borrow of moved value: 'items'"
    )
    assert normalise("Error: ENOENT: no such file or directory, open '/app/data/seed.json'") == (
        "Error: ENOENT: no such file or directory, open '<path>/seed.json'"
    )


def test_subjects_are_the_names_an_error_says_are_missing() -> None:
    kinds = tokens(normalise("ModuleNotFoundError: No module named 'boto3'"))
    assert kinds["boto3"] == SUBJECT
    kinds = tokens(normalise("error TS2307: Cannot find module 'lodash/merge'"))
    assert kinds["lodash"] == SUBJECT
    kinds = tokens(normalise("error[E0382]: borrow of moved value: `items`"))
    assert kinds["items"] != SUBJECT  # a variable name is incidental
    kinds = tokens(normalise("error: unrecognized arguments: --reruns=<num>"))
    assert kinds["reruns"] == SUBJECT


def test_fingerprint_ignores_paths_lines_and_addresses() -> None:
    assert fingerprint(PY_TRACEBACK) == fingerprint(PY_TRACEBACK_WIN)
    assert fingerprint(PY_TRACEBACK) == fingerprint("ModuleNotFoundError: No module named 'boto3'")
    a = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: addr=0x0 pc=0x4a2f1c]"
    b = "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: addr=0x18 pc=0x1029a6c84]"
    assert fingerprint(a) == fingerprint(b)


def test_fingerprint_differs_when_the_missing_module_differs() -> None:
    assert fingerprint("ModuleNotFoundError: No module named 'boto3'") != fingerprint(
        "ModuleNotFoundError: No module named 'pandas'"
    )


STORE = [
    Candidate("E-001", "ModuleNotFoundError: No module named 'boto3'", "pip install boto3", True),
    Candidate("E-002", "ModuleNotFoundError: No module named 'pandas'", "pip install pandas", True),
    Candidate("E-003", "KeyError: 'STRIPE_SECRET_KEY'", "export STRIPE_SECRET_KEY", True),
    Candidate(
        "E-004",
        "error[E0599]: no method named `len` found for struct `Config` in the current scope",
        "impl len",
        False,
    ),
    Candidate(
        "E-005",
        "fatal: Authentication failed for 'https://git.example.com/team/app.git/'",
        "use a token",
        True,
    ),
    Candidate(
        "E-006", "Error: listen EADDRINUSE: address already in use :::3000", "free the port", True
    ),
]


def test_rank_puts_the_same_error_first_with_an_exact_match() -> None:
    ranked = SignatureIndex(STORE).rank(PY_TRACEBACK_WIN)
    assert ranked[0].candidate.key == "E-001"
    assert ranked[0].exact and ranked[0].score == 1.0 and ranked[0].band == "match"
    # by score, but for scores within TIE of each other, where a resolved fix goes first
    assert all(b.score <= a.score + TIE for a, b in pairwise(ranked))


def test_rank_matches_variants_fuzzily_and_reports_conflicts() -> None:
    index = SignatureIndex(STORE)
    variant = "Error: listen EADDRINUSE :::4000\n    at Server.setupListenHandle (node:net:1817:16)"
    best = index.rank(variant, limit=1)[0]
    assert best.candidate.key == "E-006" and not best.exact and best.band == "match"
    other = index.rank("ModuleNotFoundError: No module named 'numpy'", limit=6)
    assert all(m.band != "match" for m in other)
    assert all(not decide_offline(m) for m in other)
    assert "numpy" in other[0].conflicts


def test_unrelated_text_matches_nothing() -> None:
    assert SignatureIndex(STORE).rank("zzz qqq") == []
    assert SignatureIndex([]).rank("KeyError: 'x'") == []


def test_resolved_fix_goes_first_among_near_equal_scores() -> None:
    text = "fatal: Authentication failed for 'https://git.example.com/team/app.git/'"
    unresolved = Candidate("E-010", text, "retry", resolved=False)
    resolved = Candidate(
        "E-011", text.replace("team/app", "team/api"), "use a token", resolved=True
    )
    ranked = SignatureIndex([unresolved, resolved]).rank(text)
    assert [m.candidate.key for m in ranked] == ["E-011", "E-010"]
    assert abs(ranked[0].score - ranked[1].score) <= signatures.TIE


def test_resolved_does_not_beat_a_clearly_better_score() -> None:
    weak = Candidate(
        "E-020", "KeyError: 'DATABASE_URL' while loading settings for tenants", "", True
    )
    strong = Candidate("E-021", "KeyError: 'STRIPE_SECRET_KEY'", "", False)
    ranked = SignatureIndex([weak, strong]).rank("KeyError: 'STRIPE_SECRET_KEY'")
    assert ranked[0].candidate.key == "E-021"


def test_thresholds_define_three_bands() -> None:
    assert 0 < LOW < MID < HIGH < 1
    assert signatures.band_of(HIGH) == "match"
    assert signatures.band_of(LOW) == "ambiguous"
    assert signatures.band_of(LOW - 0.01) == "none"


def _match(score: float, **extra: object) -> Match:
    return Match(Candidate("E-1", "x"), score, signatures.band_of(score), **extra)  # type: ignore[arg-type]


def test_decide_offline_in_each_band() -> None:
    assert decide_offline(_match(0.9))
    assert not decide_offline(_match(0.1))
    assert decide_offline(_match(MID + 0.01))
    assert not decide_offline(_match(MID - 0.01))
    assert not decide_offline(_match(MID + 0.05, conflicts=("boto3", "pandas")))
    # different codes with the same wording, or naming the same missing thing, are siblings
    assert decide_offline(_match(MID + 0.05, conflicts=("TS2582", "TS2593"), wording=HIGH))
    assert not decide_offline(_match(MID + 0.05, conflicts=("TS2582", "TS2593"), wording=0.4))
    sibling = {"conflicts": ("E0432", "E0433"), "shared_keys": ("serde_json",), "wording": 0.4}
    assert decide_offline(_match(MID + 0.05, **sibling))
    both = {"conflicts": ("E0432", "E0433", "regex", "serde_json"), "wording": HIGH}
    assert not decide_offline(_match(MID + 0.05, **both))


def test_a_shared_telling_name_decides_below_the_band_unless_something_conflicts() -> None:
    agreed = ("auth=peer",)
    low = signatures.AGREED_FLOOR + 0.01
    assert low < LOW  # below the ambiguous band: without the name this is "none"
    assert not decide_offline(_match(low))
    assert decide_offline(_match(low, agreed=agreed))
    assert not decide_offline(_match(signatures.AGREED_FLOOR - 0.01, agreed=agreed))
    assert not decide_offline(_match(low, agreed=agreed, conflicts=("port=5432", "port=6379")))
    assert not decide_offline(_match(low, agreed=agreed, conflicts=("E0432", "E0433")))


def test_the_same_auth_method_worded_apart_is_one_root_cause_a_weak_name_is_not() -> None:
    stored = 'FATAL: Peer authentication failed for user "dev" (PG::ConnectionBad on WSL2)'
    query = 'knex: pool error: fatal: peer authentication failed for user "kemal"'
    found = SignatureIndex([Candidate("E-1", stored)]).rank(query, 1)[0]
    assert found.agreed == ("auth=peer",) and decide_offline(found)
    other = 'FATAL: Ident authentication failed for user "dev" (PG::ConnectionBad on WSL2)'
    differ = SignatureIndex([Candidate("E-2", other)]).rank(query, 1)[0]
    assert not differ.agreed and not decide_offline(differ)
    # an exit code both texts print (here 137, killed) says nothing of the cause
    weak = SignatureIndex(
        [Candidate("E-3", "Last State: Terminated  Reason: OOMKilled  Exit Code: 137")]
    )
    killed = "Back-off restarting failed container; Last State: Terminated  Exit Code: 137"
    assert ("exit-code", "killed") in signatures.features(killed).names
    assert weak.rank(killed, 1)[0].agreed == ()


def test_same_root_cause_for_dedupe() -> None:
    same, score = same_root_cause(PY_TRACEBACK, PY_TRACEBACK_WIN)
    assert same and score == 1.0
    differ, _ = same_root_cause(PY_TRACEBACK, "ModuleNotFoundError: No module named 'pandas'")
    assert not differ
    index = SignatureIndex(STORE)
    assert same_root_cause(STORE[5].signature, "Error: listen EADDRINUSE :::4000", index)[0]
    assert same_root_cause("zzz", "qqq") == (False, 0.0)


# ---------------------------------------------------------------- canonical wordings


@pytest.mark.parametrize(
    ("one", "other"),
    [
        # tsc 4.8+ names the expression (TS18048) where older releases say "Object" (TS2532)
        (
            "src/a.ts:3:7 - error TS2532: Object is possibly 'undefined'.",
            "src/b.ts:9:1 - error TS2532: Object is possibly 'undefined'.",
        ),
        # Python: str + int and int + str word the same mistake differently
        (
            'TypeError: can only concatenate str (not "float") to str',
            "TypeError: unsupported operand type(s) for +: 'str' and 'float'",
        ),
        # unittest's assertEqual and pytest's rewritten assert, float repr noise either way
        ("AssertionError: 0.7000000000000001 != 0.7", "E       assert 1.2000000000000002 == 1.2"),
        # javac `--release` (9+) and `-target` (8) on a JDK older than the target
        (
            "Fatal error compiling: error: release version 25 not supported",
            "Fatal error compiling: error: invalid target release: 17",
        ),
        # Maven: a cached miss is the same miss
        (
            "Failure to find org.acme:util:jar:2.1 in https://repo.example.org/m2 was cached in "
            "the local repository, resolution will not be reattempted until the update interval "
            "of central has elapsed or updates are forced",
            "Could not find artifact org.acme:util:jar:3.0 in https://nexus.example.org/m2",
        ),
        # Groovy's compiler-crash wrapper around the message (Gradle build scripts)
        (
            "> BUG! exception in phase 'conversion' in source unit '_BuildScript_' "
            "Unsupported class file major version 66",
            "Unsupported class file major version 61",
        ),
        # Go's go.sum check names the module it verified
        (
            "verifying golang.org/x/text@v0.14.0: missing go.sum entry for go.mod file; to add it:",
            "go: missing go.sum entry for go.mod file; to add it:",
        ),
        # Docker CLI on Windows: the engine's named pipe is missing
        (
            'error during connect: Get "http://%2F%2F.%2Fpipe%2Fdocker_engine/v1.45/info": '
            "open //./pipe/docker_engine: The system cannot find the file specified.",
            "Cannot connect to the Docker daemon at unix:///run/user/1000/docker.sock. "
            "Is the docker daemon running?",
        ),
    ],
)
def test_alternative_wordings_share_a_fingerprint(one: str, other: str) -> None:
    assert fingerprint(one) == fingerprint(other)


def test_code_aliases_and_wording_families_meet_in_normalise() -> None:
    assert "TS18048" in normalise("error TS2532: Object is possibly 'undefined'.")
    assert "TS18047" in normalise("error TS2531: Object is possibly 'null'.")  # null stays null
    assert normalise("error: Unsupported major.minor version 52.0") == (
        "error: has been compiled by a more recent version of the Java Runtime "
        "(class file version <num>)"
    )
    assert normalise("OSError: [WinError 10048] Only one usage of each socket address "
                     "(protocol/network address/port) is normally permitted") == (
        "OSError: [WinError <num>] address already in use"
    )  # fmt: skip
    assert normalise("open C:\\app\\config.toml: The system cannot find the file specified.") == (
        "open <path>: no such file or directory."
    )


@pytest.mark.parametrize(
    ("one", "other", "subject"),
    [
        (
            "pytest: error: unrecognized arguments: --reruns=3",
            "PytestConfigWarning: Unknown config option: reruns",
            "reruns",
        ),
        (
            "ERROR tests/test_a.py - Failed: 'integration' not found in `markers` configuration "
            "option",
            "PytestUnknownMarkWarning: Unknown pytest.mark.integration - is this a typo?  You can "
            "register custom marks to avoid this warning - for details, see https://docs.pytest.org",
            "integration",
        ),
    ],
)
def test_alternative_wordings_name_the_same_subject(one: str, other: str, subject: str) -> None:
    kinds = [tokens(normalise(salient(text))) for text in (one, other)]
    assert all(k.get(subject) == SUBJECT for k in kinds), kinds
    same, score = same_root_cause(one, other)
    assert same, score


RUST_E0432 = """error[E0432]: unresolved import `regex`
 --> src/lib.rs:1:5
  |
1 | use regex::Regex;
  |     ^^^^^ use of undeclared crate or module `regex`"""

RUST_E0308 = """error[E0308]: mismatched types
 --> src/lib.rs:8:20
  |
8 |     User::new(1, username)
  |     ---------    ^^^^^^^^ expected `String`, found `&str`"""


def test_rustc_primary_label_joins_the_salient_when_it_names_what_is_missing() -> None:
    assert salient(RUST_E0432) == (
        "error[E0432]: unresolved import `regex`\nuse of undeclared crate or module `regex`"
    )
    assert salient(RUST_E0308) == "error[E0308]: mismatched types"  # a label about types only
    same, _ = same_root_cause(
        RUST_E0432, "error[E0433]: failed to resolve: use of undeclared crate or module `regex`"
    )
    assert same
    differ, _ = same_root_cause(
        RUST_E0432, "error[E0433]: failed to resolve: use of undeclared crate or module `rand`"
    )
    assert not differ


def test_a_log_prefix_does_not_hide_an_indented_command() -> None:
    text = (
        "#9 1.204 cmd/main.go:5:2: no required module provides package example.com/x/y; to add it:\n"
        "#9 1.204 \tgo get example.com/x/y"
    )
    assert salient(text) == "no required module provides package example.com/x/y; to add it:"


def test_a_value_only_one_side_names_is_variation_not_difference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = 'FATAL:  database "shop" does not exist'
    query = 'PostgresError: database "immich" does not exist'
    shared = SignatureIndex([Candidate("db", stored)]).rank(query, 1)[0].score
    monkeypatch.setattr(signatures, "ONE_SIDED", {})
    full = SignatureIndex([Candidate("db", stored)]).rank(query, 1)[0].score
    assert shared > full  # the two database names weigh less in the union


def test_a_contraction_does_not_open_a_quote_so_the_missing_package_decides() -> None:
    """`Can't resolve 'dayjs'`: the apostrophe of "Can't" used to open a quoted span that ran to
    the package's first quote, so the name was an ordinary word and another package matched."""
    axios = "Module not found: Error: Can't resolve 'axios' in '/app/src/api'"
    index = SignatureIndex([Candidate("E-1", axios, "npm install axios")])
    other = index.rank("Module not found: Error: Can't resolve 'dayjs' in '/app/src/ui'", 1)
    assert not other or not decide_offline(other[0])
    again = index.rank("Module not found: Error: Can't resolve 'axios' in '/home/ana/web/src'", 1)
    assert again and decide_offline(again[0])


def test_node_s_built_in_modules_are_one_missing_thing_where_node_resolves_them() -> None:
    crypto = "Module not found: Error: Can't resolve 'crypto' in '/app/node_modules/jsonwebtoken'"
    stream = "Module not found: Error: Can't resolve 'stream' in '/app/node_modules/cipher-base'"
    found = SignatureIndex([Candidate("E-1", crypto, "add resolve.fallback")]).rank(stream, 1)
    assert found and decide_offline(found[0])  # webpack 5 dropped every polyfill: one fix
    assert signatures.features("error TS2307: Cannot find module 'fs'.").subjects == {
        "node-builtin"
    }
    # Python's modules are not Node's: a missing `crypto` there is its own package
    assert signatures.features("ModuleNotFoundError: No module named 'crypto'").subjects == {
        "crypto"
    }
