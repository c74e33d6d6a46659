"""Shapes real users paste that a probe found slipping through: assignments inside JSON-escaped
strings (a mission's log.jsonl line rendered into the prompt), `--password=...` flags, Rails'
SECRET_KEY_BASE, ODBC `;Pwd=...;`, and passwords on mysql / docker login / sshpass / curl command
lines. Every secret is drawn at run time; each case's text must come back with only the secret
replaced."""

from __future__ import annotations

import pytest

from legion_llm.memory.redact import Redactor
from tests.redact.samples import ALNUM, draw

REDACTOR = Redactor()
PW = draw(11, ALNUM, seed=71) + "7"
LONG = draw(24, ALNUM, seed=72) + "9"

CASES = [
    ("json-escaped env", f'"note": "deploy used CLIENT_SECRET=\\"{LONG}\\" and failed"', "secret"),
    (
        "json-escaped object",
        f'"error": "{{\\"user\\": \\"app\\", \\"password\\": \\"{PW}\\"}}"',
        "password",
    ),
    ("json twice escaped", f'"x": "{{\\\\\\"password\\\\\\": \\\\\\"{PW}\\\\\\"}}"', "password"),
    ("long flag with =", f"mysqldump --password={PW} shop", "password"),
    ("named flag with =", f"app --db-password={PW} --verbose", "password"),
    ("rails secret_key_base", f"export SECRET_KEY_BASE={LONG}", "secret"),
    ("rails secret_key_base yaml", f"  secret_key_base: {LONG}", "secret"),
    ("odbc pwd", f"Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={PW};Encrypt=yes", "password"),
    ("odbc pwd last", f"Server=db;Uid=sa;PWD={PW}", "password"),
    ("mysql -p'...'", f"mysql -u root -p'{PW}' -h 127.0.0.1 shop", "password"),
    ('mysql -p"..."', f'mysqldump -uroot -p"{PW}" shop > dump.sql', "password"),
    ("mysql -p...", f"mysql -uroot -p{PW} shop", "password"),
    ("docker login -p", f"docker login -u ci -p {PW} registry.example.io", "password"),
    ("sshpass -p", f"sshpass -p '{PW}' ssh deploy@host", "password"),
    ("curl -u", f"curl -u admin:{PW} https://api.example.io/v1", "password"),
    ("curl --user", f"curl -s --user 'ci:{PW}' https://ci.example.io", "password"),
]


@pytest.mark.parametrize(("label", "text", "kind"), CASES, ids=[c[0] for c in CASES])
def test_the_secret_alone_is_replaced(label: str, text: str, kind: str) -> None:
    secret = LONG if LONG in text else PW
    assert REDACTOR.text(text) == text.replace(secret, f"[REDACTED:{kind}]")


ORDINARY = [
    "mysql -u root -p shop < schema.sql",  # -p alone: mysql asks for it
    "mysql -u root -p -h 127.0.0.1",
    "docker run -u 1000:1000 -p 8080:80 app",
    "curl -u $USER:$TOKEN https://x.io and curl -u user:password https://x.io",
    "PWD=/home/app/src; cd $PWD",
    "ssh -p 2222 deploy@host",
    "pytest -p no:cacheprovider --password-file=secrets.txt",
    '"message": "the field \\"password\\" is required"',
    "secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
    "--password=${DB_PASSWORD} and --token=$GITHUB_TOKEN",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_command_lines_are_left_alone(text: str) -> None:
    assert REDACTOR.text(text) == text
