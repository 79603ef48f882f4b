"""Scope locks are leases (SPEC S7, issue 12 item 9): a real Redis, real processes, a real SIGKILL.

A killed holder's lock used to block the scope for `lock_timeout_s` (120 s). Now a lock carries its owner's
token and a short lease its holder renews while it works: a dead holder frees it within about one lease,
a live holder keeps it however long it works.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
import redis

from athena_core.wiring.scope_lock import ScopeBusy, scope_lock

LEASE_S = 2.0

HOLDER = """
import sys, time, redis
from athena_core.wiring.scope_lock import scope_lock
client = redis.Redis.from_url(sys.argv[1])
with scope_lock(client, sys.argv[2], float(sys.argv[3])):
    print("locked", flush=True)
    time.sleep(float(sys.argv[4]))
print("released", flush=True)
"""


def _holder(redis_url: str, name: str, hold_s: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, redis_url, name, str(LEASE_S), str(hold_s)],
                            stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    assert proc.stdout.readline().strip() == "locked"
    return proc


def _acquire_within(client: redis.Redis, name: str, timeout_s: float) -> float | None:
    """Seconds until this process got the lock (trying as a task would: short waits), or None."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        try:
            with scope_lock(client, name, LEASE_S):
                return time.monotonic() - start
        except ScopeBusy:
            time.sleep(0.05)  # a task's lock try does not wait: re-try as its countdown would, not in a hot loop
    return None


@pytest.fixture
def client(redis_url: str):
    c = redis.Redis.from_url(redis_url)
    yield c
    c.close()


def test_a_sigkilled_holders_lock_frees_within_its_lease(client: redis.Redis, redis_url: str) -> None:
    name = f"test:{uuid.uuid4().hex}"
    proc = _holder(redis_url, name, hold_s=600)
    try:
        owner = client.get(f"lock:{name}").decode()
        assert owner.split(":")[1] == str(proc.pid)  # the lock names its owner
        with pytest.raises(ScopeBusy):
            with scope_lock(client, name, LEASE_S):
                pass
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        waited = _acquire_within(client, name, timeout_s=LEASE_S * 4)
        assert waited is not None and waited <= LEASE_S + 1.5, waited
    finally:
        proc.kill()
        proc.wait(10)


def test_a_live_holder_working_longer_than_the_lease_keeps_the_lock(client: redis.Redis, redis_url: str) -> None:
    name = f"test:{uuid.uuid4().hex}"
    hold_s = LEASE_S * 3
    started = time.monotonic()
    proc = _holder(redis_url, name, hold_s=hold_s)
    try:
        # Nobody else gets in while the holder works, well past one lease ...
        while time.monotonic() - started < hold_s - 0.5:
            with pytest.raises(ScopeBusy):
                with scope_lock(client, name, LEASE_S, wait_s=0.1):
                    pass
        # ... and the holder releases its own lock when it is done.
        assert proc.stdout.readline().strip() == "released"
        assert proc.wait(10) == 0
        assert client.get(f"lock:{name}") is None
    finally:
        proc.kill()
        proc.wait(10)


def test_a_busy_lock_is_waited_for_briefly(client: redis.Redis) -> None:
    name = f"test:{uuid.uuid4().hex}"
    with scope_lock(client, name, LEASE_S) as lease:
        start = time.monotonic()
        with pytest.raises(ScopeBusy):
            with scope_lock(client, name, LEASE_S):
                pass
        assert time.monotonic() - start < 1.0  # ≤ 0.5 s wait: a task does not hold its worker slot
        assert not lease.lost.is_set()
        start = time.monotonic()
        with pytest.raises(ScopeBusy):
            with scope_lock(client, name, LEASE_S):
                pass
        assert time.monotonic() - start < 0.1  # issue 13: a task's try does not wait at all (re-queued instead)
        start = time.monotonic()
        with pytest.raises(ScopeBusy):
            with scope_lock(client, name, LEASE_S, wait_s=0.3):  # a caller that must get in (a purge) waits
                pass
        assert 0.25 <= time.monotonic() - start < 1.0
    assert client.get(f"lock:{name}") is None
