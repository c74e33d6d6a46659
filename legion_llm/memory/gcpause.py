"""Pause the cyclic garbage collector around bulk work that creates many small acyclic objects.

Parsing 100,000 rows otherwise triggers repeated full rescans of every object built so far.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
