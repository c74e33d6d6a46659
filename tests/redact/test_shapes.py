"""The four shapes the attack pass stored and sent as given while `scan` said clean (issue 25,
point 7), and the ordinary text next to them that must stay as written."""

from __future__ import annotations

import json

import pytest

from legion_llm.memory.redact import Redactor
from tests.redact.samples import ALNUM, B64, draw, p

REDACTOR = Redactor()


def pem(lines: int, *, end: bool) -> str:
    dashes = "-" * 5
    body = "\n".join(draw(64, B64, seed=300 + i) for i in range(lines))
    block = f"{dashes}BEGIN RSA {p('PRIV', 'ATE')} KEY{dashes}\n{body}"
    return block + (f"\n{dashes}END RSA {p('PRIV', 'ATE')} KEY{dashes}" if end else "")


def kept(text: str, secret_parts: list[str]) -> list[str]:
    done = REDACTOR.text(text)
    return [part for part in secret_parts if part in done]


def test_a_json_escaped_key_cut_before_its_end_line() -> None:
    block = pem(6, end=False)
    text = json.dumps({"log": "deploy failed:\n" + block + "\n(truncated)"})
    assert "\\n" in text and "\n" not in text
    assert kept(text, block.splitlines()[1:]) == []


def test_an_escaped_key_block_over_20000_characters() -> None:
    block = pem(400, end=True)  # 400 lines of 64: about 26,000 characters
    assert len(block) > 20_000
    text = json.dumps({"secret": block})
    assert kept(text, block.splitlines()[1:-1]) == []
    assert REDACTOR.redact(text).findings[0].kind == "private-key"


@pytest.mark.parametrize("name", ["AWS_SESSION_TOKEN", "aws_session_token", "sessionToken"])
def test_a_value_over_300_characters(name: str) -> None:
    value = p("IQoJb3JpZ2lu", "X2VjE") + draw(600, B64, seed=7) + "=="
    for text in (f"{name}={value}", f'"{name}": "{value}"', f"--{name.lower()} {value}"):
        assert kept(text, [value[:40], value[-40:]]) == [], text


@pytest.mark.parametrize("password", ["ab/cd9XyZ!", "q?w9Er#ty", "p#ss/w0rd?x"])
def test_url_passwords_holding_slash_question_mark_or_hash(password: str) -> None:
    text = f"DATABASE_URL_HOST postgres://app:{password}@db.internal:5432/ledger"
    done = REDACTOR.text(f"see postgres://app:{password}@db.internal:5432/ledger")
    assert password not in done and "postgres://app:[REDACTED:password]@db.internal" in done
    assert password not in REDACTOR.text(text)


@pytest.mark.parametrize(
    "text",
    ["npm view http://localhost:4873/@babel/core", "git clone https://host.test:8443/@scope/x",
     "curl https://api.test:443/users/@me", "see https://example.com:8080/a#frag@b"],
)  # fmt: skip
def test_a_port_then_a_path_with_an_at_sign_is_no_password(text: str) -> None:
    assert REDACTOR.find(text) == []


def test_an_alnum_secret_stays_found() -> None:
    secret = draw(20, ALNUM, seed=5) + "9!"
    assert secret not in REDACTOR.text(f"DB_PASSWORD={secret}")
