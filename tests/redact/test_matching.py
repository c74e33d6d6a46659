"""Error text is redacted before fingerprinting: a new token in a known error still matches its
fix, and a stored signature never holds the token it was first seen with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_errors_add_then_match_across_tokens(cli: Any, demo_project: Path) -> None:
    added = cli("errors", "add", "--signature", failed_auth(1), "--fix", "Rotate the key",
                "--agent", "dev", "--engine", "offline", "--root", demo_project, "--json")  # fmt: skip
    assert added.exit_code == 0
    stored = (demo_project / ".planning/memory/ERRORS.md").read_text(encoding="utf-8")
    assert "[REDACTED:anthropic-key]" in stored and failed_auth(1).split()[-4] not in stored
    again = cli("errors", "add", "--signature", failed_auth(4), "--fix", "Rotate it again",
                "--agent", "dev", "--engine", "offline", "--root", demo_project, "--json")  # fmt: skip
    assert again.json["data"]["action"] == "existing"
    assert again.json["data"]["decided_by"] == "exact"
    found = cli("errors", "match", failed_auth(5), "--engine", "offline", "--root", demo_project,
                "--json")  # fmt: skip
    best = found.json["data"]["matches"][0]
    assert best["id"] == added.json["data"]["record"]["id"] and best["fix"] == "Rotate the key"
