"""Error text is redacted before fingerprinting: a new token in a known error still matches its
fix, and a stored signature never holds the token it was first seen with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from legion_llm.memory.signatures.match import (
    Candidate,
    SignatureIndex,
    fingerprint,
    normalise,
    salient,
)
from tests.redact.samples import B64URL, draw, p


def failed_auth(seed: int) -> str:
    key = p("sk-", "ant-", "api03-") + draw(93, B64URL, seed=seed) + "AA"
    return (
        "anthropic.AuthenticationError: Error code: 401 - invalid x-api-key "
        f"{key} for workspace ledger"
    )


def test_a_new_key_in_a_known_error_has_the_same_fingerprint() -> None:
    first, second = failed_auth(1), failed_auth(2)
    assert normalise(salient(first)) != normalise(salient(second))  # unredacted, they differ
    assert fingerprint(first) == fingerprint(second)


def test_a_new_key_matches_the_stored_fix_exactly() -> None:
    index = SignatureIndex([Candidate("E-001", failed_auth(1), "rotate the key", True)])
    (best,) = index.rank(failed_auth(3), limit=1)
    assert best.candidate.key == "E-001" and best.exact and best.band == "match"


@pytest.mark.subprocess
def test_errors_add_then_match_across_tokens(cli: Any, demo_project: Path) -> None:
    added = cli("errors", "add", "--signature", failed_auth(1), "--fix", "Rotate the key",
                "--agent", "dev", "--engine", "offline", "--root", demo_project, "--json")  # fmt: skip
    assert added.exit_code == 0
    stored = (demo_project / ".planning/memory/ERRORS.md").read_text(encoding="utf-8")
    assert "[REDACTED:anthropic-key]" in stored and failed_auth(1).split()[-4] not in stored
    again = cli("errors", "add", "--signature", failed_auth(4), "--fix", "Rotate it again",
                "--agent", "dev", "--engine", "offline", "--root", demo_project, "--json")  # fmt: skip
    assert again.json["data"]["action"] == "updated"  # the same error: both fixes kept
    assert again.json["data"]["decided_by"] == "exact"
    found = cli("errors", "match", failed_auth(5), "--engine", "offline", "--root", demo_project,
                "--json")  # fmt: skip
    best = found.json["data"]["matches"][0]
    assert (
        best["id"] == added.json["data"]["record"]["id"]
        and best["fix"] == "Rotate the key; also: Rotate it again"
    )


def signed_failure(seed: int) -> tuple[str, str]:
    """A boto error naming the key id and its secret, as an agent pastes it, and the secret."""
    key_id = p("AK", "IA") + draw(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", seed=seed)
    secret = draw(20, seed=seed + 1) + "/" + draw(19, seed=seed + 2)
    password = draw(10, seed=seed + 3) + "!"
    text = (
        "botocore.exceptions.ClientError: SignatureDoesNotMatch for "
        f"{key_id} {secret}\nerror: DB_PASSWORD={password} rejected by db"
    )
    return text, secret + " " + password


@pytest.mark.subprocess
def test_errors_add_and_match_hide_an_aws_pair_and_a_nested_password(
    cli: Any, demo_project: Path
) -> None:
    text, secrets = signed_failure(10)
    added = cli("errors", "add", "--signature", text, "--fix", f"AWS secret: {secrets.split()[0]}",
                "--agent", "dev", "--engine", "offline", "--root", demo_project, "--json")  # fmt: skip
    assert added.exit_code == 0, added.stderr
    stored = (demo_project / ".planning/memory/ERRORS.md").read_text(encoding="utf-8")
    assert not [s for s in secrets.split() if s in stored or s in added.stdout]
    assert "aws-secret-key in fix" in added.stderr and "password in error_signature" in added.stderr
    other, _ = signed_failure(20)  # new credentials, the same error
    found = cli("errors", "match", other, "--engine", "offline", "--root", demo_project, "--json")
    best = found.json["data"]["matches"][0]
    assert best["id"] == added.json["data"]["record"]["id"]
    assert found.json["data"]["decided_by"] == "exact"


def test_a_long_error_is_redacted_before_it_is_cut_for_the_judge(
    cli: Any, demo_project: Path
) -> None:
    """The close calls handed to the agent (and a model's judge prompt) cut the error at
    MAX_ERROR_CHARS: a token across the cut must not leave its head there."""
    from legion_llm.pipeline.errmatch import MAX_ERROR_CHARS

    token = p("gh", "p_") + draw(36, seed=30)
    head = "httpx.ReadTimeout: The read operation timed out while fetching the rate feed\n"
    frames = "".join(f"  at frame {i} in worker\n" for i in range(400))
    text = (head + frames)[: MAX_ERROR_CHARS - 37] + " token=" + token + " end\n"  # 30 before
    found = cli("errors", "match", text, "--root", demo_project, "--json")
    assert found.exit_code == 0, found.stderr
    inputs = found.json["data"]["to_judge"]["inputs"]  # a close call: the agent is asked
    assert token[:10] not in found.stdout and "[REDACTED:github-token]" in inputs
