"""A 200 answer whose body is not a Messages API answer (a broken proxy or gateway: an HTML page,
broken or other JSON, nothing): one notice and the offline engine, or, with no fallback, one
error line; never an internal error. Through the real SDK (respx on httpcore2) and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from legion_llm.llm.engine import Engine, Notices
from legion_llm.llm.errors import LLMUnavailableError
from legion_llm.llm.selftest import PROMPT, SelfTestReply
from tests.llm.hostile import MISSION, demo, no_fallback, use_key
from tests.pipeline.test_errmatch import BAND_QUERY, ERRORS_TEXT

Make = Callable[..., Engine]
NOT_ANSWERS = {
    "html page": httpx.Response(200, text="<html>502 Bad Gateway</html>",
                                headers={"content-type": "text/html"}),
    "broken json": httpx.Response(200, text="{\"id\": \"msg_1\", ",
                                  headers={"content-type": "application/json"}),
    "json, not a message": httpx.Response(200, json={"status": "ok"}),
    "json list": httpx.Response(200, json=[1, 2, 3]),
    "empty body": httpx.Response(200, text=""),
}  # fmt: skip


@pytest.mark.parametrize("name", NOT_ANSWERS)
def test_a_200_that_is_not_a_messages_answer_is_unavailable(
    name: str, api: respx.MockRouter, claude: Make
) -> None:
    route = api.post("/v1/messages").mock(return_value=NOT_ANSWERS[name])
    with pytest.raises(LLMUnavailableError, match="HTTP 200") as caught:
        claude(fallback_offline=False).ask(SelfTestReply, PROMPT, {"word": "legion"})
    assert route.call_count == 1  # a broken proxy is not retried
    assert caught.value.status == 200 and "after 1 attempt" in caught.value.message


@pytest.mark.parametrize("name", NOT_ANSWERS)
def test_a_200_that_is_not_an_answer_falls_back_with_one_notice(
    name: str, api: respx.MockRouter, claude: Make, collected: Notices
) -> None:
    api.post("/v1/messages").mock(return_value=NOT_ANSWERS[name])
    engine = claude("auto")  # an explicit --engine anthropic stops instead (one error line)
    for word in ("legion", "memory"):
        assert engine.ask(SelfTestReply, PROMPT, {"word": word}).engine == "offline"
    assert len(collected.messages) == 1
    assert collected.messages[0].startswith("notice: Claude is unavailable (Claude API answered")


ERRORS_MD = ERRORS_TEXT  # a stored error close to BAND_ERROR, but not the same: a close call
BAND_ERROR = BAND_QUERY
# `errors add` asks a model only before a merge in the fix band that is not exact (issue 22)
FIX_BAND_ERROR = "ModuleNotFoundError: No module named 'yaml' while importing settings"
LLM_COMMANDS = {
    "compact": ["compact", "3", "--dry-run"],
    "distill": ["distill", "--dry-run"],
    "errors add": [
        "errors",
        "add",
        "--signature",
        FIX_BAND_ERROR,
        "--fix",
        "pin it",
        "--agent",
        "dev",
    ],
    "learnings extract": ["learnings", "extract", MISSION, "--dry-run"],
}


@pytest.mark.subprocess
@pytest.mark.parametrize("command", LLM_COMMANDS)
def test_llm_commands_meet_a_broken_proxy_with_a_notice_or_one_error_line(
    command: str,
    cli: Any,
    tmp_path: Path,
    api: respx.MockRouter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_key(monkeypatch)
    route = api.post("/v1/messages").mock(return_value=NOT_ANSWERS["html page"])
    root = demo(tmp_path)
    (root / ".planning/memory/ERRORS.md").write_text(ERRORS_MD, encoding="utf-8")
    args = [*LLM_COMMANDS[command], "--root", str(root)]
    auto = cli(*args, "--json")
    assert auto.exit_code == 0, auto.stderr
    assert route.call_count == 1  # Claude was asked, once, then stayed off
    notices = [line for line in auto.stderr.splitlines() if line.startswith("notice:")]
    assert len(notices) == 1 and "HTTP 200" in notices[0] and "internal error" not in auto.stderr
    no_fallback(monkeypatch)
    (root / ".planning/memory/ERRORS.md").write_text(ERRORS_MD, encoding="utf-8")  # as before
    forced = cli(*args)
    assert forced.exit_code == 4
    assert forced.stderr.count("\n") == 1 and forced.stderr.startswith("error: Claude API")


@pytest.mark.parametrize("name", NOT_ANSWERS)
def test_a_proxy_that_answers_every_route_with_its_page_is_unavailable_too(
    name: str, api: respx.MockRouter, claude: Make, collected: Notices
) -> None:
    """A captive portal answers the token count as it answers the call: the count is given up
    (estimates), the call is the one notice and the offline engine; no internal error."""
    api.post("/v1/messages/count_tokens").mock(return_value=NOT_ANSWERS[name])
    api.post("/v1/messages").mock(return_value=NOT_ANSWERS[name])
    engine = claude("auto")
    assert engine.ask(SelfTestReply, PROMPT, {"word": "legion"}).engine == "offline"
    assert len(collected.messages) == 1 and "HTTP 200" in collected.messages[0]
