"""Recall on access (SPEC S5.2) written beside the read, not inside it.

A search or GetContext marks the chains it returns as accessed: one UPDATE of their documents. In the
request that write was the read's only commit, and a commit now and then runs the WAL's checkpoint: at
100k chains about one search in twenty took 18-19 ms longer for it, and with ingest running, a read also
queued behind the writers for the file's lock (docs/retrieval.md, "ninth round"). The answer does not
depend on the write, so it is handed to one writer thread and the read returns.

What it is not: accepted data. An access stamp only feeds heat (the last access and the recall strength
of a chain); the accesses still queued when a process is killed are lost, and the chain is as hot as its
previous access said. A clean shutdown writes them (`close`). A full queue makes the reader write its own
accesses (backpressure), so nothing is dropped while the process lives.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from datetime import datetime

from athena_core.models.scope import UserScope

Access = tuple[str, datetime, float]  # chain id, accessed at, recall strength after the access
Touch = Callable[[UserScope, list[Access]], None]

log = logging.getLogger(__name__)


class AccessWriter:
    """One daemon thread writing `touch(scope, accesses)` in arrival order. Made lazily, and again after a
    fork (uvicorn workers): a thread does not survive a fork."""

    def __init__(self, touch: Touch, *, capacity: int = 1024) -> None:
        self._touch = touch
        self._capacity = capacity
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[UserScope, list[Access]] | None] = queue.Queue(maxsize=capacity)
        self._pid: int | None = None

    def submit(self, scope: UserScope, accesses: list[Access]) -> None:
        if not accesses:
            return
        self._ensure_thread()
        try:
            self._queue.put_nowait((scope, accesses))
        except queue.Full:  # a backlog: this reader writes its own, nothing is dropped
            self._write(scope, accesses)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every access submitted so far is written; False on timeout."""
        with self._queue.all_tasks_done:
            return self._queue.all_tasks_done.wait_for(lambda: self._queue.unfinished_tasks == 0, timeout_s)

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued, then stop the thread (the stores close after this)."""
        if self._pid == os.getpid():
            self._queue.put(None)
            self.flush(timeout_s)
            self._pid = None

    def _ensure_thread(self) -> None:
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid != os.getpid():
                self._queue = queue.Queue(maxsize=self._capacity)  # one inherited from a parent is not ours
                threading.Thread(target=self._run, args=(self._queue,), name="athena-access", daemon=True).start()
                self._pid = os.getpid()

    def _run(self, jobs: queue.Queue) -> None:
        while True:
            job = jobs.get()
            try:
                if job is None:
                    return
                self._write(*job)
            finally:
                jobs.task_done()

    def _write(self, scope: UserScope, accesses: list[Access]) -> None:
        try:
            self._touch(scope, accesses)
        except Exception:  # noqa: BLE001 - a lost access stamp costs heat precision, never the read
            log.exception("recording %d chain accesses failed", len(accesses))
