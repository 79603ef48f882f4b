"""Search turns (issue 16 item 6, `athena_core/retrieval/search_turns.py`): at most `limit` at once, the
rest served in arrival order, and a turn given back goes to the longest waiter, never to a newcomer."""
from __future__ import annotations

import threading

import pytest

from athena_core.retrieval.search_turns import SearchTurns
from tests.pipeline.waiting import wait_until


def _waiter(turns: SearchTurns, order: list[int], index: int) -> threading.Thread:
    """A daemon thread that takes a turn, notes `index` and gives the turn back (a daemon: a turn never
    handed over fails the test instead of hanging pytest)."""
    def run() -> None:
        turns.acquire()
        order.append(index)
        turns.release()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_limit_holders_at_once_then_none() -> None:
    turns = SearchTurns(2)
    assert turns.acquire(blocking=False) and turns.acquire(blocking=False)
    assert not turns.acquire(blocking=False)
    turns.release()
    assert turns.acquire(blocking=False)


def test_waiters_get_their_turns_in_arrival_order() -> None:
    turns = SearchTurns(1)
    turns.acquire()
    order: list[int] = []
    threads = []
    for index in range(6):  # each one queued before the next arrives
        threads.append(_waiter(turns, order, index))
        wait_until(lambda: turns.waiting == index + 1, timeout_s=5.0)
    turns.release()
    for thread in threads:
        thread.join(5.0)
        assert not thread.is_alive()
    assert order == list(range(6))
    assert turns.acquire(blocking=False)  # every turn came back


def test_a_given_back_turn_goes_to_the_waiter_not_a_newcomer() -> None:
    """`threading.Semaphore` fails this: its woken waiter has not run yet, so the newcomer takes the turn."""
    turns = SearchTurns(1)
    turns.acquire()
    order: list[int] = []
    waiter = _waiter(turns, order, 1)
    wait_until(lambda: turns.waiting == 1, timeout_s=5.0)
    turns.release()
    assert not turns.acquire(blocking=False)  # handed over: the waiter holds it now
    waiter.join(5.0)
    assert order == [1]
    assert turns.acquire(blocking=False)


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        SearchTurns(0)
