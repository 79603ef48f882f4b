"""Per-scope serialization (SPEC S4: "per scope, checks run one at a time") with a Redis lock.

A task that finds the lock taken does not wait (`wait_s` 0): ScopeBusy goes up to `AthenaTask`, which
re-queues the task with a short countdown, so it never blocks a worker slot. A caller that must get in,
like a purge, passes a longer `wait_s`. A lock is a lease: it carries its owner's token
(`host:pid:random`, readable with `GET lock:<name>`) and a short TTL (`ATHENA_LOCK_LEASE_S`) that a daemon
thread renews every lease/3 while the holder works. A live holder keeps the lock as long as it works;
a SIGKILLed one stops renewing and its lock frees itself within one lease.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.exceptions import LockError

from athena_core.wiring.redis_keys import lock_key

log = logging.getLogger(__name__)

MAX_WAIT_S = 0.0  # tasks: one try, then re-queue (Celery countdown); never block a worker


class ScopeBusy(Exception):
    """Another run holds the scope's lock; the task retries."""


class Lease:
    """A held lock and the thread renewing it. `lost` is set when a renewal found the lock gone."""

    def __init__(self, lock: redis.lock.Lock, name: str, lease_s: float) -> None:
        self.lock = lock
        self.name = name
        self.lease_s = lease_s
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renew, name=f"lease:{name}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _renew(self) -> None:
        interval = max(self.lease_s / 3, 0.05)
        while not self._stop.wait(interval):
            try:
                self.lock.reacquire()  # TTL back to a full lease; fails if the token is no longer ours
            except LockError as exc:
                self.lost.set()
                log.error("lock %s lost while its holder works (%s): another run may enter", self.name, exc)
                return
            except redis.RedisError as exc:  # Redis briefly away: keep trying until the lease runs out
                log.warning("lock %s: lease renewal failed (%r), retrying", self.name, exc)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def owner_token() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"


@contextmanager
def scope_lock(client: redis.Redis, name: str, lease_s: float, wait_s: float = MAX_WAIT_S) -> Iterator[Lease]:
    """Hold `lock:{name}` as a renewed lease; raise ScopeBusy after waiting `wait_s` (tasks keep the
    default 0: one try, no wait; a caller that must get in, like a purge, may wait longer)."""
    lock = client.lock(lock_key(name), timeout=lease_s, blocking=wait_s > 0, blocking_timeout=wait_s,
                       sleep=0.05, thread_local=False)  # the renewal thread needs the token
    if not lock.acquire(token=owner_token()):
        raise ScopeBusy(name)
    lease = Lease(lock, name, lease_s)
    lease.start()
    try:
        yield lease
    finally:
        lease.stop()
        try:
            lock.release()
        except LockError:
            log.warning("lock %s expired before its release (lease lost)", name)  # writes are idempotent
