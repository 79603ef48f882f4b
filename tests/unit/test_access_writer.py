"""Recall on access written beside the read (`athena_core/mtm/access_writer.py`): the reader does not
wait for the write, nothing submitted is dropped, a failing write never reaches the reader, and a clean
close writes what is queued."""
from __future__ import annotations

import threading
from datetime import datetime, timezone

from athena_core.mtm.access_writer import AccessWriter
from athena_core.models.scope import UserScope

SCOPE = UserScope(tenant_id="t1", user_id="u1")
AT = datetime(2026, 12, 4, tzinfo=timezone.utc)


def test_the_reader_returns_before_the_write_and_flush_waits_for_it() -> None:
    release, written = threading.Event(), []

    def slow_touch(scope: UserScope, accesses: list) -> None:  # a write stuck behind another writer's lock
        release.wait(5)
        written.append((scope, accesses))

    writer = AccessWriter(slow_touch)
    writer.submit(SCOPE, [("chn_1", AT, 1.5)])  # returns at once
    assert written == [] and writer.flush(timeout_s=0.05) is False
    release.set()
    assert writer.flush() and written == [(SCOPE, [("chn_1", AT, 1.5)])]
    writer.close()


def test_a_full_queue_makes_the_reader_write_its_own_and_order_is_kept_per_thread() -> None:
    release, written = threading.Event(), []

    def touch(scope: UserScope, accesses: list) -> None:
        if threading.current_thread().name == "athena-access":
            release.wait(5)
        written.append(accesses[0][0])

    writer = AccessWriter(touch, capacity=2)
    for i in range(5):  # the thread holds the first; two wait in the queue; the last two are the reader's
        writer.submit(SCOPE, [(f"chn_{i}", AT, 1.0)])
    assert sorted(written) == ["chn_3", "chn_4"] or sorted(written) == ["chn_2", "chn_3", "chn_4"]
    release.set()
    assert writer.flush() and sorted(written) == [f"chn_{i}" for i in range(5)]
    writer.close()


def test_a_failing_write_is_logged_and_the_next_one_still_runs(caplog) -> None:
    calls = []

    def touch(scope: UserScope, accesses: list) -> None:
        calls.append(accesses[0][0])
        if accesses[0][0] == "chn_bad":
            raise RuntimeError("database is locked")

    writer = AccessWriter(touch)
    writer.submit(SCOPE, [("chn_bad", AT, 1.0)])
    writer.submit(SCOPE, [("chn_good", AT, 1.0)])
    writer.submit(SCOPE, [])  # nothing to record: no job
    assert writer.flush() and calls == ["chn_bad", "chn_good"]
    assert "recording 1 chain accesses failed" in caplog.text
    writer.close()


def test_close_writes_what_is_queued() -> None:
    written = []
    writer = AccessWriter(lambda scope, accesses: written.append(accesses[0][0]))
    for i in range(50):
        writer.submit(SCOPE, [(f"chn_{i}", AT, 1.0)])
    writer.close()
    assert written == [f"chn_{i}" for i in range(50)]
