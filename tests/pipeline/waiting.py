"""Bounded waits for asynchronous outcomes (the worker runs beside the test)."""
from __future__ import annotations

import time
from collections.abc import Callable

# Upper bounds, not expectations: CI machines are small and a loaded one runs the worker slowly.
DEFAULT_TIMEOUT_S = 180.0


def wait_until(predicate: Callable[[], object], timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)
