"""The host engine (the calling agent proposes over the CLI or MCP): the request handed to the
agent is built at the same seam, so it holds no secret; a proposal that echoes one is verified and
written redacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legion_llm.app.commands.phases import compact_maker
from legion_llm.memory.phases.find import find_phase
from tests.cli.test_host_cli import offline_answers, prepare, submit
from tests.redact.test_write_paths import _phase_with_secrets, leaked


def test_prepare_hands_over_no_secret_and_submit_writes_none(cli: Any, tmp_path: Path) -> None:
    root, _ = _phase_with_secrets(tmp_path)
    request = prepare(cli, root, "compact", "3")
    assert leaked(json.dumps(request)) == [] and "[REDACTED:github-token]" in request["inputs"]
    (proposal,) = offline_answers(root, compact_maker(find_phase(root, "3"), False))
    assert leaked(json.dumps(proposal))  # an answer drawn from the originals echoes secrets
    result = submit(cli, root, request["ticket"], proposal, "compact", "3")
    assert result.exit_code == 0, result.stderr
    written = (root / ".planning/phases/03-billing-exports/03-COMPACTED.md").read_text("utf-8")
    assert leaked(written) == [] and "[REDACTED:" in written
    assert leaked(result.stdout + result.stderr) == []


def test_errors_match_hands_the_agent_its_close_calls_without_secrets(
    cli: Any, project: Path
) -> None:
    """The close calls `errors match` hands to the calling agent are a model's prompt: the new
    error and every stored one in it are redacted (a hand-edited ERRORS.md may hold a secret)."""
    from tests.pipeline.test_errmatch import BAND_QUERY, ERRORS_TEXT, FIX
    from tests.redact.samples import sample

    token, password = sample("github-token"), sample("password")
    memory = project / ".planning/memory"
    memory.mkdir()
    stored = ERRORS_TEXT.replace(FIX, f"{FIX}; {token.text}")  # E-001's fix, edited by hand
    (memory / "ERRORS.md").write_text(stored, encoding="utf-8")
    query = f"{BAND_QUERY}\n{password.text}"
    result = cli("errors", "match", query, "--json", "--root", project)
    assert result.exit_code == 0, result.stderr
    ask = result.json["data"]["to_judge"]
    assert leaked(json.dumps(ask)) == [] and "[REDACTED:password]" in ask["inputs"]
