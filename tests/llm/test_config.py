"""LLM settings: flags > env > settings.json memory.llm > defaults; the key stays hidden."""

from __future__ import annotations

import pytest

from legion_llm.errors import UsageError
from legion_llm.llm.config import (
    FIELDS,
    Credential,
    LLMConfig,
    Secret,
    find_credential,
    resolve_llm_config,
)


def test_defaults() -> None:
    config = resolve_llm_config({}, env={})
    assert config == LLMConfig()
    assert set(config.sources.values()) == {"default"}
    assert config.effective_base_url == "https://api.anthropic.com"


def test_precedence_flag_env_settings_default() -> None:
    settings = {"model": "claude-opus-4-8", "max_cost_usd": 2, "max_tokens": 1000}
    env = {"LEGION_LLM_MODEL": "claude-haiku-4-5", "LEGION_LLM_MAX_COST": "1.5"}
    config = resolve_llm_config(
        settings, env=env, flags={"model": "claude-sonnet-5-5", "max_cost_usd": None}
    )
    assert config.model == "claude-sonnet-5-5" and config.sources["model"] == "flag"
    assert (
        config.max_cost_usd == 1.5 and config.sources["max_cost_usd"] == "env LEGION_LLM_MAX_COST"
    )
    assert (
        config.max_tokens == 1000
        and config.sources["max_tokens"] == "settings.json memory.llm.max_tokens"
    )
    assert config.deadline_s == 180 and config.sources["deadline_s"] == "default"


def test_every_field_has_an_environment_variable() -> None:
    env = {"LEGION_LLM_ENGINE": "Offline", "LEGION_LLM_MAX_TOKENS": "10", "LEGION_LLM_TIMEOUT": "1.5",
           "LEGION_LLM_DEADLINE": "9", "LEGION_LLM_MAX_RETRY_SLEEP": "0", "LEGION_LLM_MAX_ATTEMPTS": "2",
           "LEGION_LLM_MAX_INPUT_TOKENS": "100", "ANTHROPIC_BASE_URL": "http://proxy/x",
           "LEGION_LLM_FALLBACK": "no", "LEGION_LLM_STRUCTURED": "json_schema", "LEGION_LLM_MODEL": "m",
           "LEGION_LLM_MAX_COST": "0", "LEGION_LLM_CLAUDE": "/opt/claude", "LEGION_LLM_PRICE": "3/15",
           "LEGION_LLM_STALL_TIMEOUT": "7", "LEGION_LLM_EFFORT": "Medium",
           "LEGION_LLM_COUNT_TOKENS": "off"}  # fmt: skip
    assert {variable for variable, _ in FIELDS.values()} == set(env)
    config = resolve_llm_config({}, env=env)
    assert (config.engine, config.max_tokens, config.timeout_s, config.deadline_s) == (
        "offline",
        10,
        1.5,
        9,
    )
    assert (config.max_retry_sleep_s, config.max_attempts, config.max_input_tokens) == (0, 2, 100)
    assert (config.base_url, config.fallback_offline, config.structured_output) == (
        "http://proxy/x",
        False,
        "json_schema",
    )
    assert config.max_cost_usd == 0 and config.claude_cli == "/opt/claude"
    assert (config.price, config.stall_timeout_s, config.effort, config.count_tokens) == (
        (3.0, 15.0), 7, "medium", False)  # fmt: skip


@pytest.mark.parametrize(
    ("env", "message"),
    [({"LEGION_LLM_MAX_COST": "ten"}, "LEGION_LLM_MAX_COST must be a number >= 0"),
     ({"LEGION_LLM_MAX_TOKENS": "0"}, "LEGION_LLM_MAX_TOKENS must be an integer >= 1"),
     ({"LEGION_LLM_ENGINE": "gpt"}, "must be one of auto, anthropic, claude-code, sampling, offline"),
     ({"LEGION_LLM_TIMEOUT": "0"}, "must be a number > 0"),
     ({"LEGION_LLM_PRICE": "3"}, "LEGION_LLM_PRICE must be IN/OUT"),
     ({"LEGION_LLM_EFFORT": "extreme"}, "must be one of auto, low, medium, high, xhigh, max")],
)  # fmt: skip
def test_bad_environment_values_are_usage_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_llm_config({}, env=env)


def test_bad_flags_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="--engine must be one of"):
        resolve_llm_config({}, env={}, flags={"engine": "claude"})


def test_bad_settings_warn_and_use_the_default() -> None:
    config = resolve_llm_config(
        {"max_tokens": "lots", "max_cost": 3, "fallback_offline": "yes"}, env={}
    )
    assert config.max_tokens == 4096 and config.fallback_offline is True
    assert config.warnings == (
        "Warning: settings.json memory.llm.max_cost is not a known setting; ignored.",
        "Warning: settings.json memory.llm.max_tokens must be an integer >= 1; using the default.",
    )


def test_price_in_settings_takes_three_shapes() -> None:
    for price in ("2/8", [2, 8], {"input": 2, "output": 8}):
        assert resolve_llm_config({"price": price}, env={}).price == (2.0, 8.0)
    bad = resolve_llm_config({"price": "free"}, env={})
    assert bad.price is None and "memory.llm.price must be IN/OUT" in bad.warnings[0]


def test_settings_booleans_are_json_booleans_only_where_given_as_json() -> None:
    assert resolve_llm_config({"fallback_offline": False}, env={}).fallback_offline is False
    assert resolve_llm_config({"max_cost_usd": None}, env={}).max_cost_usd is None


def test_credentials() -> None:
    assert find_credential({}) is None
    assert find_credential({"ANTHROPIC_API_KEY": "  "}) is None
    both = find_credential({"ANTHROPIC_API_KEY": "k1", "ANTHROPIC_AUTH_TOKEN": "t1"})
    assert both is not None and both.variable == "ANTHROPIC_API_KEY" and both.kind == "api_key"
    token = find_credential({"ANTHROPIC_AUTH_TOKEN": "t1"})
    assert token is not None and token.kind == "auth_token" and token.secret.reveal() == "t1"


def test_secrets_never_print() -> None:
    credential = Credential("ANTHROPIC_API_KEY", Secret("sk-ant-very-secret"))
    for text in (
        repr(credential),
        str(credential),
        repr(credential.secret),
        f"{credential.secret}",
    ):
        assert "very-secret" not in text
