"""An API or proxy error body that echoes the key, an Authorization header or an x-api-key value
never leaves the process: not in a notice, --json, an error line, an eval log or an MCP result.
Through the real SDK (respx on httpcore2), the CLI, the eval log writer and the MCP server (in
process, so the same mock answers its Claude calls)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.engine import Engine, FallbackEngine, Notices
from legion_llm.llm.scrub import MASK, remember, scrub, scrub_data
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from tests.llm.conftest import TEST_KEY
from tests.llm.hostile import MISSION, demo, no_fallback, use_key
from tests.mcp.inprocess import call_tool

Make = Callable[..., Engine]
OTHER_TOKEN = "gw-session-" + "0123456789abcdef"  # not the configured key: only its shape tells
PROXY_KEY = "proxy-shared-secret-42424242"


def masked(text: str) -> bool:
    """The key's place is masked: by the scrub ([redacted]) or, since error text is redacted
    when it is made (issue 25), by the redaction step ([REDACTED:bearer-token], ...)."""
    return MASK in text or "[REDACTED:" in text


def echo_401() -> httpx.Response:
    """The API (or a proxy posing as it) repeats the key it was sent."""
    error = {"type": "authentication_error", "message": f"invalid x-api-key: {TEST_KEY}"}
    return httpx.Response(401, json={"type": "error", "error": error})


def echo_headers_500() -> httpx.Response:
    """A proxy dumps the request headers into its error message."""
    message = (f"upstream refused: Authorization: Bearer {OTHER_TOKEN}; "
               f'"x-api-key": "{PROXY_KEY}"; key={TEST_KEY}')  # fmt: skip
    error = {"type": "api_error", "message": message}
    return httpx.Response(500, json={"type": "error", "error": error})


def echo_text_502() -> httpx.Response:
    """A proxy's plain-text error page with the Authorization header in it."""
    return httpx.Response(502, text=f"Bad gateway\nAuthorization: Bearer {TEST_KEY}\n")


ECHOES = [echo_401, echo_headers_500, echo_text_502]
SECRETS = (TEST_KEY, OTHER_TOKEN, PROXY_KEY)


def leaked(*texts: str) -> list[str]:
    return [secret for secret in SECRETS if any(secret in text for text in texts)]


# ------------------------------------------------------------------ the scrub itself


def test_scrub_masks_key_values_bearer_tokens_and_api_key_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-from-the-environment-77")
    remember("remembered-secret-value-99")
    text = (
        "a tok-from-the-environment-77 b remembered-secret-value-99 c Authorization: bearer "
        'abc.DEF-123_456/789+== d {"x-api-key": "k-1234567890"} e X-Api-Key=zz-0987654321 '
        "f sk-ant-"
        "api03-AbCdEf0123456789 g"
    )  # split: the repository holds no key (issue 15)
    assert scrub(text) == (
        f'a {MASK} b {MASK} c Authorization: bearer {MASK} d {{"x-api-key": "{MASK}"}} '
        f"e X-Api-Key={MASK} f {MASK} g"
    )
    assert scrub(scrub(text)) == scrub(text)


def test_scrub_leaves_ordinary_text_alone() -> None:
    remember("short")  # too short to be a key: masking it would mangle ordinary words
    text = "Bearer tokens expire; the x-api-key header is documented; keep it short."
    assert scrub(text) == text


def test_scrub_data_walks_keys_values_lists_and_tuples() -> None:
    remember(TEST_KEY)
    value = {"a": [TEST_KEY, ("x", 1, None)], TEST_KEY: {"b": f"Bearer {OTHER_TOKEN}"}, "n": 2.5}
    assert scrub_data(value) == {
        "a": [MASK, ["x", 1, None]],
        MASK: {"b": f"Bearer {MASK}"},
        "n": 2.5,
    }


# ------------------------------------------------------------------ through the SDK (point 9)


@pytest.mark.parametrize("reply", ECHOES)
def test_fallback_notice_printed_by_the_default_sink_carries_no_key(
    reply: Callable[[], httpx.Response],
    api: respx.MockRouter,
    claude: Make,
    collected: Notices,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from legion_llm.llm.engine import stderr_notice

    api.post("/v1/messages").mock(return_value=reply())
    collected.sink = stderr_notice
    engine = claude("auto", max_attempts=1)  # explicit --engine anthropic stops instead
    assert isinstance(engine, FallbackEngine)
    answer = engine.ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert answer.engine == "offline"
    printed = capsys.readouterr().err
    assert printed.count("notice: Claude is unavailable") == 1
    assert masked(printed) and not leaked(printed)


# ------------------------------------------------------------------ through the CLI (point 9)


@pytest.mark.parametrize("reply", ECHOES)
def test_cli_prints_no_key_in_notices_json_or_errors(
    reply: Callable[[], httpx.Response],
    cli: Any,
    tmp_path: Path,
    api: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_key(monkeypatch)
    api.post("/v1/messages").mock(return_value=reply())
    root = demo(tmp_path)
    fallback = cli("llm", "selftest", "--root", root, "--json")
    assert fallback.exit_code == 0 and fallback.json["data"]["engine"] == "offline"
    assert masked(fallback.json["data"]["fallback_reason"])
    human = cli("compact", "3", "--dry-run", "--root", root)
    as_json = cli("compact", "3", "--dry-run", "--root", root, "--json")
    assert human.exit_code == 0 and as_json.exit_code == 0
    assert masked(as_json.json["data"]["answers"][0]["fallback_reason"])
    no_fallback(monkeypatch)
    forced = cli("llm", "selftest", "--root", root)
    forced_json = cli("llm", "selftest", "--root", root, "--json")
    # a refused key is a setting to fix (exit 2, no fragment of the key shown); other failures exit 4
    refused = reply is echo_401
    assert forced.exit_code == forced_json.exit_code == (2 if refused else 4)
    assert forced.stderr.startswith(
        "error: Claude API refused the key" if refused else "error: Claude API returned HTTP"
    )
    assert masked(forced_json.json["data"]["error"])
    runs = (fallback, human, as_json, forced, forced_json)
    assert not leaked(*(r.stdout + r.stderr for r in runs))


@pytest.mark.subprocess
def test_eval_log_and_its_table_carry_no_key(
    cli: Any, tmp_path: Path, api: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_key(monkeypatch)
    api.post("/v1/messages").mock(side_effect=lambda request: echo_headers_500())
    root = demo(tmp_path)
    no_fallback(monkeypatch)
    human = cli("eval", "compaction", "--root", root, "--out", "a.json")
    as_json = cli("eval", "compaction", "--root", root, "--out", "b.json", "--json")
    assert human.exit_code == 1 and as_json.exit_code == 1  # every case failed: Claude refused
    logs = [(root / name).read_text(encoding="utf-8") for name in ("a.json", "b.json")]
    assert all("HTTP 500" in log and masked(log) for log in logs)
    assert not leaked(*logs, human.stdout, human.stderr, as_json.stdout, as_json.stderr)


# ------------------------------------------------------------------ through MCP (point 9)


@pytest.mark.parametrize("reply", ECHOES)
def test_mcp_results_and_tool_errors_carry_no_key(
    reply: Callable[[], httpx.Response],
    tmp_path: Path,
    api: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_key(monkeypatch)
    api.post("/v1/messages").mock(return_value=reply())
    root = demo(tmp_path)
    result = call_tool(root, "memory_extract_learnings", {"mission": MISSION})  # a preview
    no_fallback(monkeypatch)
    error = call_tool(root, "phase_compact", {"phase": "3"})  # a preview
    assert not result.is_error and error.is_error
    notices = json.loads(result.text)["data"]["notices"]
    assert len(notices) == 1 and masked(notices[0])
    refused = reply is echo_401
    assert ("Claude API refused the key" if refused else "Claude API returned HTTP") in error.text
    assert masked(error.text)
    assert not leaked(result.text, error.text)
