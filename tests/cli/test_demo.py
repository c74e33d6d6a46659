from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from legion_llm.memory.outcomes import read_outcomes


def test_demo_runs_offline_on_a_copy(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "120"}
    script = Path(sys.executable).with_name("legion-llm")
    done = subprocess.run([script, "demo"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    [copy] = list(tmp_path.glob("legion-llm-demo-*"))
    memory = copy / ".planning/memory"
    assert f"{memory}/OUTCOMES.md" in done.stdout
    stored = {r.id for r in read_outcomes(memory / "OUTCOMES.md").records}
    archived = {r.id for r in read_outcomes(memory / "ARCHIVE.md").records}
    assert {"O-014", "O-015"} <= stored
    assert archived and not archived & stored
    assert "Pruned" in done.stdout and "Session briefing" in done.stdout
    bundled = (
        Path(__file__).resolve().parents[2] / "fixtures/demo-project/.planning/memory/OUTCOMES.md"
    )
    assert "O-014" not in bundled.read_text()  # the bundled project is never changed
