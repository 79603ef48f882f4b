"""Turns for searches, handed out in arrival order (`search_max_concurrent`, issue 16 item 6).

`threading.Semaphore` lets a search that arrives just as a turn is given back take it before the search
that has waited longest: the waiter is woken, finds no turn left and queues again at the back. Under the
GIL the woken thread often needs milliseconds to run, so under load some searches are overtaken again and
again, and their wait sets the tail latency. Here a released turn passes straight to the longest waiter
(each waiter parks on a lock of its own), and a newcomer queues behind everyone already waiting.
"""
from __future__ import annotations

import threading
from collections import deque


class SearchTurns:
    """At most `limit` holders at once; the others wait, first come first served."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self._lock = threading.Lock()
        self._free = limit
        self._waiting: deque[threading.Lock] = deque()

    @property
    def waiting(self) -> int:
        """Searches waiting for a turn now."""
        return len(self._waiting)

    def acquire(self, blocking: bool = True) -> bool:
        """Take a turn: at once when one is free and nobody waits, else (blocking) after everyone who came
        before. False only when not blocking and no turn could be taken at once."""
        with self._lock:
            if self._free > 0 and not self._waiting:
                self._free -= 1
                return True
            if not blocking:
                return False
            parked = threading.Lock()
            parked.acquire()
            self._waiting.append(parked)
        parked.acquire()  # released by `release`, which hands this waiter its turn
        return True

    def release(self) -> None:
        """Give the turn back: to the longest waiter if there is one (the count of free turns does not
        change), else to the pool."""
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()
            else:
                self._free += 1
