"""Per-scope serialization (SPEC S4: "per scope, checks run one at a time") with a Redis lock.

A task that finds the lock taken does not block its worker: it retries later (Celery backoff).
The lock expires, so a worker killed while holding it cannot wedge the scope.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.exceptions import LockError


class ScopeBusy(Exception):
    """Another run holds the scope's lock; the task retries."""


@contextmanager
def scope_lock(client: redis.Redis, name: str, timeout_s: int, wait_s: float = 5.0) -> Iterator[None]:
    lock = client.lock(f"lock:{name}", timeout=timeout_s, blocking_timeout=wait_s)
    if not lock.acquire():
        raise ScopeBusy(name)
    try:
        yield
    finally:
        try:
            lock.release()
        except LockError:
            pass  # expired while we worked; our writes are idempotent anyway
