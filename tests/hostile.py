"""Helpers for tests with hostile files: a FIFO that would block a careless reader forever."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def unblocking(action: Callable[[], Any], fifos: list[Path]) -> Any:
    """Run `action`; if it is still blocked on a FIFO after a while, open the FIFOs' write ends
    so that it returns, and fail. (A guard so a regression cannot hang the suite; a correct
    reader never opens a FIFO for a blocking read, so it does not depend on timing to pass.)"""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = action()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=10)
    if thread.is_alive():
        for fifo in fifos:
            fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
            os.close(fd)
        thread.join(timeout=30)
        pytest.fail(f"a reader blocked on a FIFO: {fifos}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
