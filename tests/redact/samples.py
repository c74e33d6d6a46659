"""Fake secrets of every kind we detect, built at run time.

No complete secret is written in this repository: each is assembled from a split prefix and
characters drawn from a seeded generator, so a secret scanner reading the source finds nothing,
while the strings have the real formats' shapes (and their entropy).
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


def draw(n: int, alphabet: str = ALNUM, *, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def p(*parts: str) -> str:
    """A prefix written in pieces (the source never holds it whole next to its body)."""
    return "".join(parts)


def _pem(label: str, seed: int) -> str:
    body = "\n".join(draw(64, B64, seed=seed + i) for i in range(6))
    dashes = "-" * 5
    return (
        f"{dashes}BEGIN {label}PRIVATE KEY{dashes}\n{body}\n{draw(20, B64, seed=seed)}==\n"
        f"{dashes}END {label}PRIVATE KEY{dashes}"
    )


def _jwt(seed: int) -> str:
    header = p("ey", "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9")
    payload = p("ey", "J") + draw(40, B64URL, seed=seed)
    return f"{header}.{payload}.{draw(43, B64URL, seed=seed + 1)}"


@dataclass(frozen=True)
class Sample:
    kind: str  # the marker kind expected
    secret: str  # the part that must disappear
    text: str  # a line holding it, as an agent would write it

    @property
    def redacted(self) -> str:
        return self.text.replace(self.secret, f"[REDACTED:{self.kind}]")


def _samples() -> list[Sample]:
    aws_secret = draw(40, B64, seed=11)
    url_password = draw(14, ALNUM, seed=12)
    env_password = draw(12, ALNUM, seed=13) + "!"
    entropy_key = draw(32, HEX, seed=14)
    items = [
        ("github-token", p("gh", "p_") + draw(36, seed=1), "push failed with token {s}"),
        (
            "github-token",
            p("github", "_pat_") + draw(22, seed=2) + "_" + draw(59, seed=3),
            "GH fine-grained token {s} expires soon",
        ),
        ("github-token", p("gh", "s_") + draw(36, seed=4), "app installation token: {s}"),
        ("gitlab-token", p("gl", "pat-") + draw(20, B64URL, seed=5), "CI used {s} to clone"),
        (
            "slack-bot-token",
            p("xo", "xb-") + "1234567890-9876543210-" + draw(24, seed=6),
            "the bot posts with {s}",
        ),
        (
            "slack-user-token",
            p("xo", "xp-") + "1234567890-1234567890-1234567890-" + draw(32, HEX, seed=7),
            "user token {s} in the log",
        ),
        (
            "slack-webhook",
            "T"
            + draw(8, UPPER_DIGITS, seed=8)
            + "/B"
            + draw(8, UPPER_DIGITS, seed=9)
            + "/"
            + draw(24, seed=10),
            "alerts go to https://hooks.slack.com/services/{s} now",
        ),
        ("stripe-key", p("sk", "_live_") + draw(24, seed=15), "charged with {s}"),
        ("stripe-key", p("sk", "_test_") + draw(24, seed=16), "tests use {s}"),
        ("stripe-key", p("rk", "_live_") + draw(24, seed=17), "restricted key {s}"),
        (
            "aws-access-key-id",
            p("AK", "IA") + draw(16, UPPER_DIGITS, seed=18),
            "fix: export the id {s} first",
        ),
        ("aws-secret-key", aws_secret, "AWS_SECRET_ACCESS_KEY=" + "{s}"),
        ("google-api-key", p("AI", "za") + draw(35, B64URL, seed=19), "maps key {s} works"),
        (
            "anthropic-key",
            p("sk-", "ant-", "api03-") + draw(93, B64URL, seed=20) + "AA",
            "set ANTHROPIC key to {s}",
        ),
        ("openai-key", p("sk-", "proj-") + draw(48, B64URL, seed=21), "the OpenAI key {s}"),
        ("npm-token", p("np", "m_") + draw(36, seed=22), "publish with {s}"),
        (
            "pypi-token",
            p("py", "pi-", "AgEIcHlwaS5vcmc") + draw(60, B64URL, seed=23),
            "twine upload with {s}",
        ),
        ("private-key", _pem("RSA ", 30), "the deploy key:\n{s}\nwas committed"),
        ("private-key", _pem("OPENSSH ", 40), "{s}"),
        ("jwt", _jwt(24), "Authorization: Bearer {s}"),
        ("password", url_password, "DATABASE_URL=postgres://app:{s}@db:5432/ledger"),
        ("password", url_password, "broker amqps://svc:{s}@mq.internal/vhost"),
        ("password", env_password, "DB_PASSWORD={s}"),
        ("password", env_password, "password: {s}"),
        ("password", env_password, '{"password": "{s}"}'),
        ("secret", draw(30, ALNUM, seed=25), "client_secret = '{s}'"),
        ("api-key", entropy_key, '"api_key": "{s}"'),
        ("token", draw(40, B64URL, seed=26), "SERVICE_TOKEN={s}"),
    ]
    return [Sample(kind, s, text.replace("{s}", s)) for kind, s, text in items]


SAMPLES = _samples()
KINDS = sorted({s.kind for s in SAMPLES})


def sample(kind: str) -> Sample:
    return next(s for s in SAMPLES if s.kind == kind)


def everything() -> str:
    """One text holding one secret of every sample (a pasted log, a phase summary)."""
    return "\n".join(s.text for s in SAMPLES)
