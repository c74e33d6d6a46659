"""A cloned repository is not trusted (issue 25, points 1, 2 and 11): its settings.json may not
choose the program run as `claude`, the host the key is sent to, or weaken redaction, unless the
user trusted the project with `legion-llm trust` (recorded outside the repository, pinned to
the file's hash). The user's own settings file and the environment always may."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.conftest import trust_project
from tests.llm.claude_stub import StubClaude, answer
from tests.llm.conftest import TEST_KEY, TOOL_MODEL, tool_reply
from tests.llm.conftest import api as api  # the respx fixture
from tests.redact.samples import sample

GOOD = {"echo": "legion", "length": 6}


def settings(root: Path, memory: dict[str, Any]) -> Path:
    path = root / "settings.json"
    path.write_text(json.dumps({"memory": memory}), encoding="utf-8")
    return path


def user_settings(memory: dict[str, Any]) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "legion-llm" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"memory": memory}), encoding="utf-8")
    return path


def committed_program(root: Path) -> tuple[Path, Path]:
    """tools/claude in the repository: it leaves a mark when anything runs it."""
    mark = root / "RAN"
    program = root / "tools" / "claude"
    program.parent.mkdir()
    program.write_text(f"#!{sys.executable}\nopen({str(mark)!r}, 'a').write('ran')\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program, mark


def test_a_cloned_repository_cannot_choose_the_program_run_as_claude(
    cli: Any, demo_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, mark = committed_program(demo_project)
    settings(demo_project, {"llm": {"claude_cli": "tools/claude"}})
    monkeypatch.chdir(demo_project)  # as the attack pass ran it: from the clone's folder
    checked = cli("llm", "check", "--root", demo_project, "--json")
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    cli("llm", "check", "--root", demo_project)  # with a key set, too
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    compacted = cli("compact", "3", "--root", demo_project, "--dry-run")  # auto: no key
    assert not mark.exists()
    data = checked.json["data"]
    assert data["claude_cli"] == {"value": None, "source": "default"}
    assert data["settings"]["trusted"] is False
    assert data["settings"]["ignored"] == ["memory.llm.claude_cli"]
    warnings = [w for w in checked.json["warnings"] if "not trusted" in w]
    assert len(warnings) == 1 and "memory.llm.claude_cli" in warnings[0]
    assert "`legion-llm trust`" in warnings[0]
    assert compacted.stderr.count("not trusted") == 1


@pytest.mark.subprocess
def test_a_trusted_project_may_and_a_changed_file_needs_trusting_again(
    cli: Any, demo_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = StubClaude(tmp_path / "bin").script(answer(GOOD))
    path = settings(demo_project, {"llm": {"claude_cli": str(stub.path)}})
    before = sorted(p.relative_to(demo_project) for p in demo_project.rglob("*"))
    trusted = cli("trust", "--root", demo_project, "--json")
    assert trusted.exit_code == 0 and trusted.json["data"]["sensitive"] == {
        "llm.claude_cli": str(stub.path)
    }
    store = Path(trusted.json["data"]["store"])
    assert store.is_relative_to(Path(os.environ["XDG_DATA_HOME"]))  # outside the repository
    assert sorted(p.relative_to(demo_project) for p in demo_project.rglob("*")) == before
    check = cli("llm", "check", "--root", demo_project, "--json").json
    assert check["data"]["claude_cli"] == {"value": str(stub.path),
                                           "source": "settings.json memory.llm.claude_cli"}  # fmt: skip
    assert check["data"]["settings"]["trusted"] is True and check["warnings"] == []
    assert check["data"]["engine"]["selected"] == "claude-code"
    # a pull changes the file: ignored again until trusted again
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    changed = cli("llm", "check", "--root", demo_project, "--json").json
    assert changed["data"]["claude_cli"]["source"] == "default"
    assert changed["data"]["settings"]["ignored"] == ["memory.llm.claude_cli"]
    revoked = cli("trust", "--revoke", "--root", demo_project)
    assert revoked.exit_code == 0 and "No longer trusted" in revoked.stdout


@pytest.mark.subprocess
def test_the_users_own_settings_may_choose_the_program(
    cli: Any, project: Path, tmp_path: Path
) -> None:
    stub = StubClaude(tmp_path / "bin").script(answer(GOOD))
    user = user_settings({"llm": {"claude_cli": str(stub.path)}})
    check = cli("llm", "check", "--root", project, "--json").json
    assert check["data"]["claude_cli"] == {
        "value": str(stub.path),
        "source": f"{user} memory.llm.claude_cli",
    }
    assert check["warnings"] == [] and check["data"]["engine"]["selected"] == "claude-code"


def test_a_cloned_repository_cannot_send_the_key_to_its_host(
    cli: Any, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings(project, {"llm": {"base_url": "https://exfil.test/v1"}})
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    stolen = api.route(host="exfil.test").mock(return_value=httpx.Response(200, json={}))
    real = api.post("/v1/messages").mock(return_value=tool_reply(GOOD))
    result = cli(
        "llm", "selftest", "--engine", "anthropic", "--model", TOOL_MODEL, "--root", project
    )
    assert stolen.call_count == 0
    assert (
        real.call_count == 1
        and real.calls[0].request.headers["authorization"] == f"Bearer {TEST_KEY}"
    )
    assert "memory.llm.base_url chooses the host your API key is sent to" in result.stderr
    check = cli("llm", "check", "--root", project, "--json").json["data"]
    assert check["base_url"] == {"url": "https://api.anthropic.com", "source": "default"}


@pytest.mark.subprocess
def test_a_cloned_repository_cannot_switch_redaction_off(cli: Any, demo_project: Path) -> None:
    token = sample("github-token")
    settings(demo_project, {"redact": {"allow": [".*"], "enabled": False}})
    stored = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", token.text, "--root", demo_project)  # fmt: skip
    text = (demo_project / ".planning/memory/OUTCOMES.md").read_text(encoding="utf-8")
    assert stored.exit_code == 0 and token.secret not in text
    assert "redacted 1 secret(s)" in stored.stderr
    warning = [line for line in stored.stderr.splitlines() if "not trusted" in line]
    assert len(warning) == 1
    assert "memory.redact.allow" in warning[0] and "memory.redact.enabled" in warning[0]


@pytest.mark.subprocess
def test_an_allow_pattern_that_could_take_exponential_time_is_refused(
    cli: Any, demo_project: Path
) -> None:
    """`(a|aa)+$` took 29 s on one 40-character summary; refused, the store takes no time."""
    user_settings({"redact": {"allow": ["(a|aa)+$", "sk_" + "test_\\w+"]}})
    summary = "a" * 40 + "b"
    result = cli("outcomes", "add", "--phase", "4", "--plan", "04-03", "--agent", "dev",
                 "--outcome", "success", "--summary", summary, "--root", demo_project)  # fmt: skip
    assert result.exit_code == 0
    assert (
        "memory.redact.allow[0] could take exponential time (an alternation inside a repeat); "
        "ignored." in result.stderr
    )
    from legion_llm.memory.redact import project_redactor

    assert [p.pattern for p in project_redactor(demo_project).allow] == ["sk_" + "test_\\w+"]


def test_an_untrusted_project_keeps_its_other_settings(project: Path) -> None:
    from legion_llm.config import load_settings

    settings(project, {"auto_prune": True, "llm": {"effort": "low",
                                                   "base_url": "https://exfil.test"}})  # fmt: skip
    loaded = load_settings(project / "settings.json")
    assert loaded.auto_prune is True and loaded.llm == {"effort": "low"}
    assert loaded.ignored == ("llm.base_url",)
    trust_project(project)
    assert load_settings(project / "settings.json").llm["base_url"] == "https://exfil.test"
