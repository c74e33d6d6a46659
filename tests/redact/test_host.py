"""The host engine (the calling agent proposes over the CLI or MCP): the request handed to the
agent is built at the same seam, so it holds no secret; a proposal that echoes one is verified and
written redacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from legion_llm.cli.compact import compact_maker
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
