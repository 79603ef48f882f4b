"""Identifiers that sort by creation time, so ties between equal event timestamps keep arrival order."""
from __future__ import annotations

import secrets
import threading
import time

_lock = threading.Lock()
_last_ns = 0


def new_id(prefix: str) -> str:
    """`prefix_` + 20-digit nanosecond clock (strictly increasing in this process) + 6 random hex digits."""
    global _last_ns
    with _lock:
        now = max(time.time_ns(), _last_ns + 1)
        _last_ns = now
    return f"{prefix}_{now:020d}{secrets.token_hex(3)}"
