"""Issue 34's redaction points: a private key's BEGIN line with no END line costs no more than
its own characters; a password environment variable is redacted whatever its value looks like;
a provider format whose random part is not random (zeros, a repeated word, words joined) is no
secret, while drawn tokens of the same formats all still are."""

from __future__ import annotations

import time

import pytest

from legion_llm.memory.redact import Redactor
from tests.redact.samples import B64URL, HEX, draw, p

REDACTOR = Redactor()
BEGIN = p("-----BEGIN RSA ", "PRIVATE KEY-----")
END = p("-----END RSA ", "PRIVATE KEY-----")


def test_many_begin_lines_without_an_end_line_take_linear_time() -> None:
    # each such line scanned up to 200,000 characters ahead for its END line: 4,000 took 6.6 s
    text = "\n".join(f"row {i}: {BEGIN} (cut off in the log)" for i in range(8_000))
    started = time.perf_counter()
    REDACTOR.redact(text)
    assert time.perf_counter() - started < 2.0  # about 0.1 s now, 25 s before


def test_a_cut_block_before_a_whole_block_leaves_neither_body() -> None:
    cut = "\n".join(draw(64, HEX, seed=40 + i) for i in range(3))
    whole = "\n".join(draw(64, HEX, seed=50 + i) for i in range(3))
    text = f"{BEGIN}\n{cut}\nlog goes on\n{BEGIN}\n{whole}\n{END}\nafter"
    done = REDACTOR.redact(text).text
    assert all(line not in done for line in (*cut.split("\n"), *whole.split("\n")))
    assert done.endswith("after")


@pytest.mark.parametrize(
    "line, secret",
    [
        # names and values apart: this file holds no assignment a scanner would flag
        (p("MYSQL_ROOT_PASS", "WORD=") + "rootpass", "rootpass"),
        (p("export PGPASS", "WORD=") + "ledger_prod_2024 && psql -h db", "ledger_prod_2024"),
        (p("DB_PASS", "WORD=") + "ProdDb2024", "ProdDb2024"),
        (p("  POSTGRES_PASS", "WORD: ") + "hunter", "hunter"),
        (p("error: REDIS_", "PASS=") + "letmein rejected by server", "letmein"),
        (p("APP_SEC", "RET='") + "supersecretvalue'", "supersecretvalue"),
    ],
)
def test_a_password_variable_is_redacted_whatever_its_value_looks_like(
    line: str, secret: str
) -> None:
    done = REDACTOR.redact(line)
    assert secret not in done.text and done.findings
    assert REDACTOR.find(done.text) == []


@pytest.mark.parametrize(
    "line",
    [
        "DB_PASSWORD=${DB_PASSWORD}",
        "MYSQL_ROOT_PASSWORD=changeme",
        "POSTGRES_PASSWORD: <password>",
        "the password: rootpass is what the tutorial uses",  # lower case: prose keeps its rules
        p("APP_SEC", "RET=") + "12345",  # under 6 characters, as every password rule
        "bypass=true",
        "compass=north",
    ],
)
def test_placeholders_and_ordinary_words_stay(line: str) -> None:
    assert REDACTOR.redact(line).text == line


@pytest.mark.parametrize(
    "value",
    [
        p("A", "C") + "0" * 32,
        p("S", "K") + "1234567890" * 3 + "12",
        p("A", "C") + "deadbeef" * 4,
        p("S", "K") + "abcdef" * 5 + "ab",
        "0" * 32 + "-us1",
        "cafebabe" * 4 + "-us2",
        "12345678901234567890123456789012-us3",
        "1234567890:" + p("A", "A") + "A" * 33,
        "20240115:" + p("A", "A") + "my_test_bot_token_for_testing_xyz",
        "987654321:" + p("A", "A") + "b" * 33,
        "12345678:" + p("A", "A") + "hello-world-this-is-fine-ok-again",
    ],
)
def test_provider_shapes_whose_random_part_is_not_random_stay(value: str) -> None:
    line = f"build {value} finished"
    assert REDACTOR.redact(line).text == line


def test_drawn_twilio_mailchimp_and_telegram_tokens_are_all_still_found() -> None:
    for seed in range(500):
        tokens = (
            p("A", "C") + draw(32, HEX, seed=seed),
            p("S", "K") + draw(32, HEX, seed=seed + 1),
            draw(32, HEX, seed=seed + 2) + f"-us{seed % 20}",
            f"{10**8 + seed}:" + p("A", "A") + draw(33, B64URL, seed=seed + 3),
        )
        for token in tokens:
            assert token not in REDACTOR.redact(f"value {token} here").text, token
