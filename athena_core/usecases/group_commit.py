"""Group commit for the write routes (SPEC S3, S9): concurrent requests share one durable write.

A SQLite WAL commit, a Redis round trip and a pipeline request per event cost more than the work inside
them, and many threads committing at once queue on SQLite's lock with sleeping retries (the collapse the
sync routes showed past 8 clients). Here every request puts its events on one queue; one writer takes
whatever is queued (up to `max_group_events`), stores it with `Ingest.store_group` in a thread of its own
(one commit, one pipelined window push), and only then resolves each request's future. The pipeline
runs of the group's scopes are requested by a second thread, each scope once per pass however many
events named it. A request is answered after the commit that holds its events, never before: durable
before 201 stays absolute.

The queue is bounded in events, sized for batches: about `QUEUE_WAIT_BUDGET_S` (1 s) of the writer's
measured rate, at least one full group, at most `max_queued_events` (20,000). Once it holds that many, a
request is refused at once with `Overloaded` (the route answers 503 with Retry-After) instead of waiting
until the client gives up or resets. The number of write requests in flight is bounded at the door
(`athena_api/write_admission.py`).
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass, field

from athena_core.models.events import Event
from athena_core.models.scope import AgentScope
from athena_core.usecases.ingest import DurableWriteError, Ingest, IngestRequest

log = logging.getLogger(__name__)


QUEUE_WAIT_BUDGET_S = 1.0  # the queue admits about this much of the writer's measured work
RATE_SMOOTHING = 0.2  # weight of the newest group in the writer's events-per-second estimate
REQUEST_PASS_INTERVAL_S = 0.05  # pipeline runs are debounced per scope anyway: 50 ms later costs nothing
# A request the broker refused (Redis restarting) is tried again every `REQUEST_RETRY_S` for up to
# `REQUEST_RETRY_FOR_S`; after that the pending and index sweeps own it (they take events this old).
REQUEST_RETRY_S = 1.0
REQUEST_RETRY_FOR_S = 120.0


class Overloaded(RuntimeError):
    """The write queue is full: nothing of the request was stored; retry after `retry_after_s`."""

    def __init__(self, queued: int, limit: int, retry_after_s: int = 1) -> None:
        super().__init__(f"{queued} events are waiting to be written (limit {limit}); retry shortly")
        self.retry_after_s = retry_after_s


@dataclass
class _Waiting:
    request: IngestRequest
    future: asyncio.Future = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.request.drafts)


def take_group(waiting: list[_Waiting], max_events: int) -> int:
    """How many of the oldest waiting requests form the next group: as many as fit in `max_events`,
    and always at least one (a request larger than the limit goes alone)."""
    total, count = 0, 0
    for item in waiting:
        if count and total + item.size > max_events:
            break
        total += item.size
        count += 1
    return count


class GroupCommitWriter:
    """One per API process, started in the app's lifespan; `store` is awaited by the routes.

    The writer is a thread, not an asyncio task: a request's future is resolved on the request's own
    event loop (`call_soon_threadsafe`), so it serves callers on any loop (uvicorn's, a test client's).
    """

    def __init__(self, ingest: Ingest, *, max_group_events: int = 500, max_queued_events: int = 20_000) -> None:
        self.ingest = ingest
        self.max_group_events = max_group_events
        self.max_queued_events = max_queued_events
        self._waiting: list[_Waiting] = []
        self._queued_events = 0
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        # Scopes whose pipeline run is still to be requested, in order, each once however many groups
        # named it meanwhile: a flood of one scope costs one request per requester pass, not one per event.
        self._scopes: dict = {}
        self._scopes_cond = threading.Condition()
        self._requester: threading.Thread | None = None
        self._closing = threading.Event()  # ends the requester's pause between passes at once
        self._events_per_s: float | None = None  # the writer's measured rate while busy (None: not yet)

    @property
    def queued_events(self) -> int:
        return self._queued_events

    def admission_limit(self) -> int:
        """Events the queue takes: about `QUEUE_WAIT_BUDGET_S` of the writer's measured rate, at least one
        full group, at most `max_queued_events`. A fixed bound is a second of work on a quiet machine and
        several on a busy one; this one keeps the wait of an admitted request near the budget either way."""
        if self._events_per_s is None:
            return self.max_queued_events
        budget = int(self._events_per_s * QUEUE_WAIT_BUDGET_S)
        return min(self.max_queued_events, max(self.max_group_events, budget))

    def is_full(self) -> bool:
        """No request of any size would be taken now (the door refuses before reading a body)."""
        return self._queued_events >= self.admission_limit()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="athena-group-commit", daemon=True)
        self._thread.start()
        self._requester = threading.Thread(target=self._request_runs, name="athena-run-requests", daemon=True)
        self._requester.start()

    def close(self) -> None:
        """Write what is queued, then stop the thread (the lifespan's shutdown)."""
        self._closing.set()
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        with self._scopes_cond:
            self._scopes_cond.notify()
        if self._requester is not None:
            self._requester.join()

    async def store(self, request: IngestRequest) -> list[Event]:
        """The request's events, as the log holds them, once durable. Raises `Overloaded` (nothing stored)
        or `DurableWriteError` (nothing of this request stored)."""
        if self._thread is None or not self._thread.is_alive():
            raise RuntimeError("the group commit writer is not running (GroupCommitWriter.start)")
        size = len(request.drafts)
        future = asyncio.get_running_loop().create_future()
        with self._cond:
            # The same test as the door's (`is_full`): a request that got past it and was parsed and
            # validated is not thrown away for its size; the queue may pass the bound by what is in flight.
            limit = self.admission_limit()
            if self._queued_events >= limit:
                raise Overloaded(self._queued_events, limit)
            self._waiting.append(_Waiting(request, future))
            self._queued_events += size
            self._cond.notify()
        return await future

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._waiting and not self._stopping:
                    self._cond.wait()
                if not self._waiting:
                    return  # stopping, and nothing is left to write
                count = take_group(self._waiting, self.max_group_events)
                group, self._waiting = self._waiting[:count], self._waiting[count:]
            started = time.perf_counter()
            try:
                outcomes: list = self.ingest.store_group([w.request for w in group], self._defer)
            except Exception as exc:  # noqa: BLE001 - an unexpected failure: every request of the group sees it
                log.exception("group commit of %d requests failed", len(group))
                outcomes = [exc] * len(group)
            self._measure(sum(w.size for w in group), time.perf_counter() - started)
            with self._cond:
                self._queued_events -= sum(w.size for w in group)
            for waiting, outcome in zip(group, outcomes):
                try:
                    waiting.future.get_loop().call_soon_threadsafe(_resolve, waiting.future, outcome)
                except RuntimeError:  # the caller's loop is closed: its events are stored all the same
                    pass


    def _measure(self, events: int, seconds: float) -> None:
        rate = events / max(seconds, 1e-6)
        previous = self._events_per_s
        self._events_per_s = rate if previous is None else previous + RATE_SMOOTHING * (rate - previous)

    def _defer(self, scopes: list) -> None:
        with self._scopes_cond:
            self._scopes.update(dict.fromkeys(scopes))
            self._scopes_cond.notify()

    def _request_runs(self) -> None:
        """The pipeline requests, off the answer's path: each scope after the commit that named it, at
        most one pass per `REQUEST_PASS_INTERVAL_S`. Each request is two Redis round trips (the run and
        the index flags, almost always already set), and back-to-back passes made that several round
        trips per event under load; waiting lets a pass take every scope the commits meanwhile named.

        A refused request ends its pass (the broker is down: the other scopes would fail alike, each
        after its own connect). That scope and the rest of the pass are tried again a second later, so
        events stored while Redis restarts are indexed and searchable within seconds of its return, not
        when the sweeps next reach them (SPEC S2 freshness)."""
        failing_since: dict[AgentScope, float] = {}  # scope → when the broker first refused its run
        while True:
            with self._scopes_cond:
                while not self._scopes and not self._stopping:
                    self._scopes_cond.wait()
                if not self._scopes:  # stopping: done once the writer, the last to name a scope, is
                    if not (self._thread and self._thread.is_alive()):
                        return
                    self._scopes_cond.wait(0.05)
                    continue
                scopes, self._scopes = list(self._scopes), {}
            retry = self._request_pass(scopes, failing_since)
            if retry and not self._stopping:  # stopping: the sweeps take what the broker refused
                with self._scopes_cond:
                    self._scopes = {**dict.fromkeys(retry), **self._scopes}
            # not woken by new scopes: they gather meanwhile
            self._closing.wait(REQUEST_RETRY_S if retry else REQUEST_PASS_INTERVAL_S)

    def _request_pass(self, scopes: list[AgentScope], failing_since: dict[AgentScope, float]) -> list[AgentScope]:
        """Request each scope's run until one is refused; returns the scopes to try again (that one and
        those after it), less those refused for `REQUEST_RETRY_FOR_S` already."""
        for i, scope in enumerate(scopes):
            if self.ingest.request_pipeline_safely(scope):
                failing_since.pop(scope, None)
                continue
            now = time.monotonic()
            retry = [s for s in scopes[i:] if now - failing_since.setdefault(s, now) < REQUEST_RETRY_FOR_S]
            for given_up in set(scopes[i:]) - set(retry):
                del failing_since[given_up]
            return retry
        return []


def _resolve(future: asyncio.Future, outcome: object) -> None:
    if future.done():  # the client went away (the request was cancelled); its events are stored all the same
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


__all__ = ["DurableWriteError", "GroupCommitWriter", "Overloaded", "take_group"]
