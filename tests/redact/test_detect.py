"""What the redactor finds and what it leaves alone, and the properties every writer relies on:
only secrets change, twice is once, a redacted cell survives the table codec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from legion_llm.memory.redact import Redactor, write_warning
from legion_llm.memory.table import encode_row, normalise_text, parse_markdown
from tests.redact.samples import HEX, SAMPLES, Sample, draw, everything, p

REDACTOR = Redactor()


@pytest.mark.parametrize("item", SAMPLES, ids=lambda s: s.kind)
def test_each_kind_becomes_its_marker_and_nothing_else_changes(item: Sample) -> None:
    done = REDACTOR.redact(item.text)
    assert done.text == item.redacted
    assert [f.kind for f in done.findings] == [item.kind]


def test_all_kinds_in_one_text() -> None:
    text = everything()
    done = REDACTOR.redact(text)
    assert not [s.kind for s in SAMPLES if s.secret in done.text]
    assert {f.kind for f in done.findings} == {s.kind for s in SAMPLES}


def test_the_issue_examples_read_as_written() -> None:
    url = "postgres://app:" + draw(12, seed=1) + "@db:5432/ledger"
    assert REDACTOR.text(url) == "postgres://app:[REDACTED:password]@db:5432/ledger"
    token = p("gh", "p_") + draw(36, seed=2)
    assert REDACTOR.text(f"token {token}.") == "token [REDACTED:github-token]."


ORDINARY = [
    "BILL-01, BILL-02 and AUTH-03 pass; REQ-104 deferred",
    "commit 3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a fixes the cursor",
    "fix(export): stream rows (a1b2c3d) Merge 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "request id 123e4567-e89b-12d3-a456-426614174000 timed out",
    "see src/billing/export.py and ./tests/test_export.py:41 and C:\\work\\ledger\\sync.py",
    "upgraded to 2.14.1 then v3.0.0-rc.1; python 3.11.7",
    "the blob id dGhpcyBpcyBqdXN0IGFuIGlk and chunk Zm9vYmFyYmF6cXV4 were re-read",
    "max_tokens: 4096, token_count=1200, tokens: 500",
    "sort_key: name, primary_key=True, cache_key = 'user:42:profile'",
    "Password: Required (8+ characters); password: ${DB_PASSWORD}; pwd: /srv/app",
    "DATABASE_URL=postgresql://user:password@localhost:5432/app",
    "postgres://postgres:postgres@localhost:5400/test and redis://localhost:6379/0",
    'STRIPE_SECRET_KEY="sk_live_..."  # from the dashboard',
    "Wrong passphrase: `decryptData(envelope)` throws",
    "tests pass: kTerritoryData.length==42",
    "api_key = os.environ['API_KEY']; token = settings.github_token; secret: <your secret>",
    "Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON",
    "the bearer token is read from the keychain",
    "CLERK_SECRET_KEY=sk_" + "test_PLACEHOLDER and GITHUB_TOKEN=gh" + "p_" + "x" * 36,
    "| O-012 | 2026-03-01 | main | 3 | 03-01 | dev | backend | success | 4 | api | Did it |",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert REDACTOR.find(text) == []
    assert REDACTOR.text(text) == text


def test_a_high_entropy_value_counts_only_under_a_secret_name() -> None:
    value = draw(32, HEX, seed=3)
    assert REDACTOR.text(f"checksum: {value}") == f"checksum: {value}"
    assert REDACTOR.text(f"api_key: {value}") == "api_key: [REDACTED:api-key]"
    assert REDACTOR.text(f"AUTH_TOKEN={value}") == "AUTH_TOKEN=[REDACTED:token]"


def test_a_token_is_not_cut_out_of_a_longer_word() -> None:
    body = draw(36, seed=4)
    assert REDACTOR.find("x" + p("gh", "p_") + body + "x") == []


def test_an_unterminated_private_key_is_redacted_up_to_its_last_base64_line() -> None:
    dashes = "-" * 5
    lines = [draw(64, seed=10 + i) for i in range(3)]
    text = f"log:\n{dashes}BEGIN PRIVATE KEY{dashes}\n" + "\n".join(lines) + "\n\nThe end."
    assert REDACTOR.text(text) == "log:\n[REDACTED:private-key]\n\nThe end."
    assert REDACTOR.find(f"it begins with {dashes}BEGIN RSA PRIVATE KEY{dashes} and more") == []


def test_a_private_key_inside_a_json_string_goes_whole() -> None:
    dashes = "-" * 5
    body = "\\n".join(draw(64, seed=20 + i) for i in range(4))
    key = f"{dashes}BEGIN PRIVATE KEY{dashes}\\n{body}\\n{dashes}END PRIVATE KEY{dashes}\\n"
    text = f'{{"type": "service_account", "private_key": "{key}", "client_email": "a@b.iam"}}'
    assert REDACTOR.text(text) == (
        '{"type": "service_account", "private_key": "[REDACTED:private-key]\\n", '
        '"client_email": "a@b.iam"}'
    )


def test_headers_and_flags() -> None:
    opaque = draw(40, seed=30)
    basic = draw(24, seed=31) + "=="
    assert REDACTOR.text(f"curl -H 'Authorization: Bearer {opaque}'") == (
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'"
    )
    assert (
        REDACTOR.text(f"Authorization: Basic {basic}")
        == "Authorization: Basic [REDACTED:basic-auth]"
    )
    assert (
        REDACTOR.text(f"gh auth login --token {opaque}") == "gh auth login --token [REDACTED:token]"
    )
    password = draw(10, seed=32) + "-1"
    assert REDACTOR.text(f"mysql --password {password} -h db") == (
        "mysql --password [REDACTED:password] -h db"
    )


def test_allow_list_keeps_what_it_matches() -> None:
    kept = p("AK", "IA") + "IOSFODNN7EXAMPLE"
    other = p("AK", "IA") + draw(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", seed=5)
    text = f"doc id {kept}, real id {other}"
    allowed = Redactor([r"AKIA\w*EXAMPLE"])
    assert allowed.text(text) == f"doc id {kept}, real id [REDACTED:aws-access-key-id]"


def test_disabled_finds_but_keeps_and_says_so() -> None:
    item = SAMPLES[0]
    off = Redactor(enabled=False)
    done = off.redact(item.text)
    assert done.text == item.text and done.findings
    _, hits = off.values({"summary": item.text})
    (warning,) = write_warning(off, hits, "OUTCOMES.md")
    assert "as given" in warning and "enabled is false" in warning and item.secret not in warning


def test_warnings_name_kind_and_field_never_the_value() -> None:
    values = {"error_signature": SAMPLES[20].text, "fix": SAMPLES[10].text + " " + SAMPLES[0].text}
    clean, hits = REDACTOR.values(values)
    (warning,) = write_warning(REDACTOR, hits, "ERRORS.md")
    assert warning == (
        "warning: redacted 3 secret(s) before writing ERRORS.md: password in error_signature, "
        "aws-access-key-id in fix, github-token in fix"
    )
    assert not any(s.secret in warning or s.secret in str(clean) for s in SAMPLES)


secret_texts = st.sampled_from([s.text for s in SAMPLES] + [s.secret for s in SAMPLES])
pieces = st.lists(st.one_of(st.text(max_size=40), secret_texts), max_size=6)
mixed = pieces.map("".join)  # glued: a token may run into a word and stop being one
spaced = pieces.map(" ".join)


@given(mixed)
def test_redacting_twice_is_redacting_once(text: str) -> None:
    once = REDACTOR.text(text)
    assert REDACTOR.text(once) == once


@given(st.text(max_size=200))
def test_text_without_secrets_is_returned_unchanged(text: str) -> None:
    assert REDACTOR.text(text) == text


@given(st.lists(spaced, min_size=1, max_size=4))
def test_a_redacted_cell_survives_the_table_codec(values: list[str]) -> None:
    clean = [REDACTOR.text(v) for v in values]
    header = "| " + " | ".join(f"C{i}" for i in range(len(clean))) + " |\n"
    separator = "|" + "---|" * len(clean) + "\n"
    doc = parse_markdown("intro\n\n" + header + separator + encode_row(clean) + "\n\ntrailer\n")
    [table] = doc.tables
    [(_, cells)] = list(doc.rows(table))
    assert list(cells.values()) == [normalise_text(v) for v in clean]
    assert not [cell for cell in cells.values() if REDACTOR.find(cell)]  # nothing left to find


def test_no_value_needs_more_than_the_text_it_came_from() -> None:
    """Findings carry a kind and a span, never a copy of the secret."""
    (finding,) = REDACTOR.find(SAMPLES[0].text)
    assert set(vars(finding)) == {"kind", "start", "end"}
    assert SAMPLES[0].text[finding.start : finding.end] == SAMPLES[0].secret


def test_an_assignment_inside_another_value_is_found() -> None:
    """`error: DB_PASSWORD=...` is how an agent's error output reads: the outer `error:` must
    not swallow the inner assignment (nor `url: ...?access_token=...` its query)."""
    password = draw(10, seed=40) + "!"
    token = draw(40, seed=41)
    assert REDACTOR.text(f"error: DB_PASSWORD={password} rejected") == (
        "error: DB_PASSWORD=[REDACTED:password] rejected"
    )
    assert REDACTOR.text(f"env: SERVICE_TOKEN={token}") == "env: SERVICE_TOKEN=[REDACTED:token]"
    assert REDACTOR.text(f"callback: https://x.io/cb?access_token={token}&state=1") == (
        "callback: https://x.io/cb?access_token=[REDACTED:token]&state=1"
    )


def test_an_aws_secret_named_in_words_or_next_to_its_key_id() -> None:
    key_id = p("AK", "IA") + draw(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", seed=42)
    secret = draw(20, seed=43) + "/" + draw(19, seed=47)
    assert REDACTOR.text(f"AWS secret: {secret}") == "AWS secret: [REDACTED:aws-secret-key]"
    assert REDACTOR.text(f"the AWS secret key is {secret}") == (
        "the AWS secret key is [REDACTED:aws-secret-key]"
    )
    pair = "[REDACTED:aws-access-key-id] [REDACTED:aws-secret-key]"
    assert (
        REDACTOR.text(f"InvalidSignature for {key_id} {secret}") == f"InvalidSignature for {pair}"
    )
    assert REDACTOR.text(f"| {key_id} | {secret} |") == (
        "| [REDACTED:aws-access-key-id] | [REDACTED:aws-secret-key] |"
    )
    sha = draw(40, HEX, seed=44)  # a commit hash after a key id is no secret
    assert (
        REDACTOR.text(f"{key_id} rotated in {sha}")
        == f"[REDACTED:aws-access-key-id] rotated in {sha}"
    )


@pytest.mark.parametrize("cut", ["<br>", "\n", "\r\n", "\u2028"])
def test_a_token_broken_by_a_line_break_goes_whole(cut: str) -> None:
    token = p("gh", "p_") + draw(36, seed=45)
    assert REDACTOR.text(f"token {token[:20]}{cut}{token[20:]} failed") == (
        "token [REDACTED:github-token] failed"
    )
    key = p("sk", "_live_") + draw(24, seed=46)
    assert REDACTOR.text(f"| charged with {key[:12]}{cut}{key[12:]}. |") == (
        "| charged with [REDACTED:stripe-key]. |"
    )
    whole = f"push with {token}{cut}Next line"  # a whole token keeps the word after the break
    assert REDACTOR.text(whole) == f"push with [REDACTED:github-token]{cut}Next line"


def test_an_assignment_after_a_letter_that_lowercases_to_two_is_found() -> None:
    """The fast search for assignment lines runs on lower-cased text; U+0130 lower-cases to two
    characters, so the places must not shift."""
    password = draw(10, seed=48) + "!"
    text = "\u0130stanbul " * 3 + f"DB_PASSWORD={password}"
    assert REDACTOR.text(text) == "\u0130stanbul " * 3 + "DB_PASSWORD=[REDACTED:password]"
