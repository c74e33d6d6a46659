"""`legion-llm llm check` and `llm selftest` through the real CLI entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import respx

from legion_llm.llm.pricing import DEFAULT_MODEL
from tests.llm.conftest import COUNTED, TEST_KEY, error_reply, text_reply, tool_reply

USAGE_KEYS = {"calls", "input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens", "estimated_cost_usd", "engine", "model"}  # fmt: skip


def test_check_without_a_key_picks_offline(cli: Any, project: Path) -> None:
    result = cli("llm", "check", "--root", project, "--json")
    assert result.exit_code == 0
    data = result.json["data"]
    assert data["engine"]["selected"] == "offline" and data["engine"]["requested"] == "auto"
    assert data["credential"] == {"configured": False, "variable": None}
    assert data["model"]["name"] == DEFAULT_MODEL and data["model"]["source"] == "default"
    assert (
        data["model"]["price"]["input_per_mtok"] == 0.10 and data["model"]["thinking"] == "disable"
    )
    assert data["api_called"] is False and data["ready"] is True
    assert set(data["usage"]) >= USAGE_KEYS and data["usage"]["calls"] == 0


def test_check_shows_the_price_in_its_human_output(cli: Any, project: Path) -> None:
    """The README's `llm check  # engine, model, price, limits`: the price was only in --json."""
    human = cli("llm", "check", "--root", project).stdout
    line = "price:     $0.1 in / $0.5 out per million tokens (cache write $0.125, read $0.01; price table)"
    assert line in human.splitlines()
    unknown = cli("llm", "check", "--root", project, "--model", "claude-next").stdout
    assert "price:     unknown (not in the price table; give it with --price IN/OUT)" in unknown
    priced = cli("llm", "check", "--root", project, "--model", "claude-next", "--price", "3/15")
    assert "price:     $3 in / $15 out per million tokens" in priced.stdout


def test_check_with_a_key_never_prints_it(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    for args in (("--json",), ()):
        result = cli("llm", "check", "--root", project, *args)
        assert result.exit_code == 0
        assert TEST_KEY not in result.stdout + result.stderr
    data = cli("llm", "check", "--root", project, "--json").json["data"]
    assert data["engine"]["selected"] == "anthropic"
    assert data["credential"] == {"configured": True, "variable": "ANTHROPIC_API_KEY"}
    human = cli("llm", "check", "--root", project).stdout
    assert (
        "key:       configured in ANTHROPIC_API_KEY" in human and "No API call was made." in human
    )


def test_check_forced_anthropic_without_a_key_is_not_ready(cli: Any, project: Path) -> None:
    result = cli("llm", "check", "--engine", "anthropic", "--root", project, "--json")
    assert result.exit_code == 1 and result.json["ok"] is False
    assert result.json["data"]["problems"] == [
        "error: --engine anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
    ]


def test_check_reports_sources(cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = {"memory": {"llm": {"model": "claude-opus-4-8", "max_cost_usd": 5, "typo": 1}}}
    (project / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    password = "pa" + "55"  # built at run time: the repository holds no credential (issue 15)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"https://user:{password}@gateway.test/v")
    monkeypatch.setenv("LEGION_LLM_DEADLINE", "30")
    assert (
        cli("trust", "--root", project).exit_code == 0
    )  # a project's model needs trust (issue 34)
    result = cli("llm", "check", "--root", project, "--max-cost", "1", "--json")
    data = result.json["data"]
    assert data["model"] == {**data["model"], "name": "claude-opus-4-8",
                             "source": "settings.json memory.llm.model"}  # fmt: skip
    assert data["limits"]["max_cost_usd"] == {"value": 1.0, "source": "flag"}
    assert data["limits"]["deadline_s"] == {"value": 30.0, "source": "env LEGION_LLM_DEADLINE"}
    assert data["base_url"] == {
        "url": "https://***@gateway.test/v",
        "source": "env ANTHROPIC_BASE_URL",
    }
    assert "pa55" not in result.stdout + result.stderr
    assert result.json["warnings"] == [
        "Warning: settings.json memory.llm.typo is not a known setting; ignored."
    ]
    flagged = cli("llm", "check", "--root", project, "--model", "claude-haiku-4-5", "--json")
    assert flagged.json["data"]["model"]["source"] == "flag"


def test_check_refuses_an_unknown_model_without_a_price(
    cli: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    offline = cli("llm", "check", "--root", project, "--model", "claude-next", "--engine",
                  "offline", "--json")  # fmt: skip
    assert offline.exit_code == 0 and offline.json["data"]["problems"][0].startswith("note: model")
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    result = cli("llm", "check", "--root", project, "--model", "claude-next", "--json")
    data = result.json["data"]
    assert result.exit_code == 1 and data["ready"] is False and data["model"]["known"] is False
    assert data["problems"][0].startswith("error: model 'claude-next' is not in the price table")
    assert "--price IN/OUT" in data["problems"][0] and data["model"]["price"] is None
    human = cli("llm", "check", "--root", project, "--model", "claude-next")
    assert human.exit_code == 1 and "problem:   model 'claude-next'" in human.stdout
    assert "problem:   error:" not in human.stdout and "requested auto: auto" not in human.stdout
    priced = cli("llm", "check", "--root", project, "--model", "claude-next", "--price", "3/15",
                 "--json")  # fmt: skip
    assert priced.exit_code == 0 and priced.json["data"]["ready"] is True
    assert priced.json["data"]["model"]["price"] == {
        "input_per_mtok": 3.0, "output_per_mtok": 15.0, "cache_write_per_mtok": 3.75,
        "cache_read_per_mtok": pytest.approx(0.3), "source": "flag"}  # fmt: skip
    bad = cli("llm", "check", "--root", project, "--price", "cheap")
    assert bad.exit_code == 2 and "--price must be IN/OUT" in bad.stderr


def test_bad_engine_flag_is_a_usage_error(cli: Any, project: Path) -> None:
    result = cli("llm", "check", "--engine", "gpt", "--root", project)
    assert result.exit_code == 2 and "--engine must be one of" in result.stderr


@pytest.mark.subprocess
def test_check_imports_no_anthropic(project: Path) -> None:
    loaded = _modules_after(["llm", "check", "--root", str(project), "--json"], {})
    assert not loaded & {"anthropic", "tiktoken", "tenacity", "httpx2"}


@pytest.mark.subprocess
def test_plain_memory_command_imports_no_llm_library(project: Path) -> None:
    loaded = _modules_after(["outcomes", "recall", "--json", "--root", str(project)], {})
    assert not loaded & {"anthropic", "tiktoken", "tenacity", "httpx2"}
    assert "legion_llm.llm.engine" not in loaded


def _modules_after(args: list[str], env: dict[str, str]) -> set[str]:
    """Run the CLI in a fresh interpreter and list the top-level modules it imported."""
    code = (
        "import sys\nfrom legion_llm.entry import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    modules = set(line.split()[1:])
    assert "legion_llm.cli.app" in modules
    return modules


def test_selftest_offline(cli: Any, project: Path) -> None:
    result = cli("llm", "selftest", "--root", project, "--json", "--word", "hello")
    assert result.exit_code == 0
    data = result.json["data"]
    assert data["passed"] is True and data["engine"] == "offline"
    assert data["output"] == {"echo": "hello", "length": 5}
    assert data["usage"]["engine"] == "offline" and data["usage"]["offline_calls"] == 1
    assert result.stderr.count("notice: no ANTHROPIC_API_KEY") == 1


def test_selftest_forced_anthropic_without_a_key(cli: Any, project: Path) -> None:
    result = cli("llm", "selftest", "--engine", "anthropic", "--root", project, "--json")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: --engine anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the environment"
    )
    assert result.json["ok"] is False


def test_selftest_over_http_reports_usage(
    cli: Any, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    usage = {"input_tokens": 300, "output_tokens": 40, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 250}  # fmt: skip
    route = api.post("/v1/messages").mock(
        return_value=text_reply('{"echo": "legion", "length": 6}', usage=usage)
    )
    result = cli("llm", "selftest", "--root", project, "--json", "--max-cost", "1")
    assert result.exit_code == 0, result.stderr
    data = result.json["data"]
    assert route.call_count == 1 and data["passed"] is True and data["engine"] == "anthropic"
    # the default model, Haiku 5.5: 0.10 / 0.50 per MTok, writes 0.125
    assert {k: data["usage"][k] for k in USAGE_KEYS} == {
        "calls": 1, "input_tokens": 300, "output_tokens": 40,
        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 250,
        "estimated_cost_usd": round((300 * 0.10 + 40 * 0.50 + 250 * 0.125) / 1e6, 6),
        "engine": "anthropic", "model": DEFAULT_MODEL,
    }  # fmt: skip
    assert data["usage"]["input_tokens_counted"] == COUNTED
    assert data["usage"]["input_tokens_estimated"] > 0
    assert TEST_KEY not in result.stdout + result.stderr


def test_selftest_falls_back_when_claude_rejects_the_key(
    cli: Any, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    api.post("/v1/messages").mock(return_value=error_reply(401))
    result = cli("llm", "selftest", "--root", project, "--json")
    assert result.exit_code == 0
    data = result.json["data"]
    assert data["engine"] == "offline" and "HTTP 401" in data["fallback_reason"]
    assert data["usage"]["engine"] == "offline" and data["usage"]["calls"] == 0
    assert result.stderr.count("notice: Claude is unavailable") == 1
    assert TEST_KEY not in result.stdout + result.stderr


def test_selftest_max_cost_stops_with_usage_in_the_error(
    cli: Any, project: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    route = api.post("/v1/messages").mock(return_value=tool_reply({"echo": "legion", "length": 6}))
    result = cli("llm", "selftest", "--root", project, "--json", "--max-cost", "0.0001")
    assert result.exit_code == 4 and route.call_count == 0
    assert result.json["ok"] is False and result.json["data"]["usage"]["calls"] == 0
    assert "--max-cost" in result.stderr
