"""The group commit (SPEC S3, S9): requests share one durable write, and none is answered before the
commit that holds its events; a full queue refuses at once; one request's failure is its own."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from athena_core.models.events import EventRole, EventType
from athena_core.models.sessions import Session
from athena_core.usecases import group_commit
from athena_core.usecases.group_commit import GroupCommitWriter, Overloaded, _Waiting, take_group
from athena_core.usecases.ingest import DurableWriteError, EventDraft, Ingest, IngestRequest
from athena_core.models.events import utc_now


class FakeGatedEventLog:
    """A fake event log: `append_events` waits for `gate`, then records the commit (ids, in order)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.commits: list[list[str]] = []
        self.refuse_content: str | None = None

    def committed(self) -> set[str]:
        return {i for commit in self.commits for i in commit}

    def append_events(self, events) -> None:  # noqa: ANN001
        self.entered.set()
        self.gate.wait(10)
        if self.refuse_content and any(e.content == self.refuse_content for e in events):
            raise OSError("fake disk refused the write")
        self.commits.append([e.event_id for e in events])

    def get_events(self, scope, event_ids):  # noqa: ANN001, ANN201
        return []


class FakeWindow:
    """A fake STM window that records pushes (and whether their events were committed first)."""

    def __init__(self, log: FakeGatedEventLog) -> None:
        self.log = log
        self.pushed_after_commit: list[bool] = []

    def push_many(self, pushes):  # noqa: ANN001, ANN201
        self.pushed_after_commit += [e.event_id in self.log.committed() for _, e in pushes]
        return [1] * len(pushes)


def _session(n: int) -> Session:
    return Session(session_id=f"ses_{n}", tenant_id="t", user_id=f"u{n}", agent_id="a", metadata={},
                   created_at=utc_now())


def _request(n: int, content: str = "hello") -> IngestRequest:
    return IngestRequest(_session(n), [EventDraft(EventRole.user, EventType.message, f"{content} {n}", {})])


def test_take_group_fills_up_to_the_limit_and_always_takes_one() -> None:
    def waiting(*sizes: int) -> list[_Waiting]:
        return [_Waiting(IngestRequest(_session(0), [None] * size), None) for size in sizes]  # type: ignore[list-item]

    assert take_group(waiting(3, 3, 3), 7) == 2
    assert take_group(waiting(9, 1), 5) == 1  # larger than the limit: alone
    assert take_group(waiting(1, 1, 1), 500) == 3


def test_no_request_is_answered_before_the_commit_that_holds_its_events() -> None:
    log = FakeGatedEventLog()
    window = FakeWindow(log)
    requested: list[str] = []
    writer = GroupCommitWriter(Ingest(log, window, lambda scope: requested.append(scope.user_id)),
                               max_group_events=100, max_queued_events=1000)
    writer.start()

    async def scenario() -> None:
        answered: list[tuple[list[str], set[str]]] = []  # (the request's ids, what was committed when answered)

        async def one(n: int) -> None:
            events = await writer.store(_request(n))
            answered.append(([e.event_id for e in events], log.committed()))

        first = asyncio.create_task(one(0))
        await asyncio.get_running_loop().run_in_executor(None, log.entered.wait, 5)  # group 1 is in its commit
        rest = [asyncio.create_task(one(n)) for n in range(1, 10)]
        await asyncio.sleep(0.05)
        assert answered == [] and not first.done()  # the commit has not returned: nobody is answered
        log.gate.set()
        await asyncio.gather(first, *rest)
        assert len(answered) == 10
        for ids, committed_then in answered:
            assert set(ids) <= committed_then  # every answer came after the commit holding its event
        assert len(log.commits) == 2 and [len(c) for c in log.commits] == [1, 9]  # the nine queued shared one

    try:
        asyncio.run(scenario())
    finally:
        writer.close()
    assert all(window.pushed_after_commit) and len(window.pushed_after_commit) == 10
    assert sorted(requested) == sorted(f"u{n}" for n in range(10))  # each scope's run requested once


def test_a_full_queue_refuses_at_once_and_stores_nothing_of_the_refused() -> None:
    log = FakeGatedEventLog()
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), lambda scope: None), max_group_events=1,
                               max_queued_events=2)
    writer.start()

    async def scenario() -> None:
        held = [asyncio.create_task(writer.store(_request(n))) for n in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(Overloaded):
            await writer.store(_request(9, "refused"))
        log.gate.set()
        await asyncio.gather(*held)

    try:
        asyncio.run(scenario())
    finally:
        writer.close()
    assert len(log.committed()) == 2


def _store_behind_the_gate(writer: GroupCommitWriter, log: "FakeGatedEventLog", requests: list[IngestRequest],
                           while_held=lambda: None) -> list:  # noqa: ANN001
    """Every request stored at once while the log's gate holds the commit, `while_held` run, then the gate
    opened: each request's outcome (its ids, or the exception it got). Closes the writer."""
    async def scenario() -> list:
        tasks = [asyncio.create_task(writer.store(r)) for r in requests]
        await asyncio.sleep(0.05)
        while_held()
        log.gate.set()
        return await asyncio.gather(*tasks, return_exceptions=True)

    try:
        return asyncio.run(scenario())
    finally:
        writer.close()


def test_a_failing_request_fails_alone_when_the_shared_commit_fails() -> None:
    log = FakeGatedEventLog()
    log.refuse_content = "poison 3"
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), lambda scope: None), max_group_events=100)
    writer.start()
    outcomes = _store_behind_the_gate(writer, log, [_request(n, "poison" if n == 3 else "fine") for n in range(6)])
    assert isinstance(outcomes[3], DurableWriteError)
    assert all(isinstance(o, list) and len(o) == 1 for i, o in enumerate(outcomes) if i != 3)
    assert len(log.committed()) == 5


# --- the window pushes of a group (only those that can still show), and the session recheck -------------
def _event(n: int, scope_n: int, kind: str) -> tuple:
    """(scope, event): a message, or an observation of execution `x` (those may coalesce)."""
    from athena_core.models.events import Event
    from athena_core.models.scope import AgentScope

    now = utc_now()
    observation = kind == "obs"
    event = Event(event_id=f"evt_{n}", tenant_id="t", user_id=f"u{scope_n}", agent_id="a", session_id="s",
                  role=EventRole.agent if observation else EventRole.user,
                  type=EventType.observation if observation else EventType.message, content=f"c{n}",
                  metadata={"execution_id": "x"} if observation else {}, timestamp=now, received_at=now)
    return AgentScope(tenant_id="t", user_id=f"u{scope_n}", agent_id="a"), event


def _windows(pushes: list, window: int) -> dict:
    from athena_core.models.events import WindowEvent
    from athena_core.stm.stm_window import apply_to_window

    slots: dict = {}
    for scope, event in pushes:
        slots[scope] = apply_to_window(slots.get(scope, []), WindowEvent.from_event(event), window)
    return {scope: [(s.event_id, s.coalesced_count, s.last_event_id) for s in v] for scope, v in slots.items()}


def test_the_pruned_pushes_leave_every_window_as_pushing_every_event_would() -> None:
    import random

    from athena_core.usecases.ingest import window_pushes

    rng = random.Random(16)
    for _ in range(200):
        window = rng.choice([1, 3, 10])
        pushes = [_event(n, rng.randrange(2), rng.choice(["msg", "msg", "obs"])) for n in range(rng.randrange(40))]
        kept = window_pushes(pushes, window)
        assert _windows(kept, window) == _windows(pushes, window)
        ids = [e.event_id for _, e in kept]
        assert ids == sorted(ids, key=lambda i: int(i[4:]))  # in order
    hundred = [_event(n, 0, "msg") for n in range(100)]  # a batch of 100 messages to one scope
    assert [e.event_id for _, e in window_pushes(hundred, 10)] == [f"evt_{n}" for n in range(90, 100)]


class FakeSessions:
    """A fake session store that knows only the sessions in `existing`."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing
        self.reads: list[str] = []

    def get_session(self, session_id: str):  # noqa: ANN201
        self.reads.append(session_id)
        return _session(0) if session_id in self.existing else None


def test_a_request_whose_cached_session_is_gone_stores_nothing_and_others_are_written() -> None:
    from athena_core.usecases.ingest import SessionGone

    log = FakeGatedEventLog()
    log.gate.set()
    sessions = FakeSessions({"ses_1", "ses_2"})
    ingest = Ingest(log, FakeWindow(log), lambda scope: None, sessions=sessions)
    requests = [IngestRequest(_session(n), [EventDraft(EventRole.user, EventType.message, f"m{n}", {})],
                              recheck_session=True) for n in (1, 0, 2, 1)]
    outcomes = ingest.store_group(requests)
    assert isinstance(outcomes[1], SessionGone)  # ses_0 was deleted after the route read it
    assert all(isinstance(outcomes[i], list) and len(outcomes[i]) == 1 for i in (0, 2, 3))
    assert log.committed() == {outcomes[i][0].event_id for i in (0, 2, 3)}
    assert sorted(sessions.reads) == ["ses_0", "ses_1", "ses_2"]  # one read per distinct session
    unchecked = ingest.store_group([IngestRequest(_session(0), requests[1].drafts)])  # not from the cache
    assert isinstance(unchecked[0], list) and len(sessions.reads) == 3


def test_a_queue_sized_for_batches_takes_32_batches_of_100_while_a_commit_is_held() -> None:
    from athena_core.wiring.settings import Settings

    log = FakeGatedEventLog()
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), lambda scope: None), max_group_events=500,
                               max_queued_events=Settings().ingest_queue_max_events)
    writer.start()

    def batch(n: int) -> IngestRequest:
        return IngestRequest(_session(n), [EventDraft(EventRole.user, EventType.message, f"{n}.{i}", {})
                                           for i in range(100)])

    def not_full() -> None:
        assert not writer.is_full()

    outcomes = _store_behind_the_gate(writer, log, [batch(n) for n in range(32)], while_held=not_full)
    assert all(isinstance(o, list) and len(o) == 100 for o in outcomes)
    assert len(log.committed()) == 3200


def test_the_queue_bound_follows_the_writers_measured_rate() -> None:
    log = FakeGatedEventLog()
    log.gate.set()
    slow_append = log.append_events

    def fake_slow_disk(events) -> None:  # noqa: ANN001 - a fake disk: every commit takes at least 50 ms
        threading.Event().wait(0.05)
        slow_append(events)

    log.append_events = fake_slow_disk  # type: ignore[method-assign]
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), lambda scope: None), max_group_events=5,
                               max_queued_events=20_000)
    assert writer.admission_limit() == 20_000  # nothing measured yet: the configured bound
    writer.start()

    async def scenario() -> None:
        await asyncio.gather(*(writer.store(_request(n)) for n in range(20)))

    try:
        asyncio.run(scenario())
    finally:
        writer.close()
    # at most 5 events per 50 ms (100 events/s): about a second of that, never below one full group
    assert 5 <= writer.admission_limit() <= 100


class FakeBrokerDownFor:
    """A fake pipeline requester (Ingest's `request_pipeline`): refuses the first `refusals` calls, as a
    restarting Redis does, then records each scope it publishes."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.attempts: list[str] = []
        self.published: list[str] = []

    def __call__(self, scope) -> None:  # noqa: ANN001
        self.attempts.append(scope.user_id)
        if len(self.attempts) <= self.refusals:
            raise ConnectionError("fake broker: connection refused")
        self.published.append(scope.user_id)


def test_runs_the_broker_refused_are_requested_again_once_it_answers(monkeypatch) -> None:
    monkeypatch.setattr(group_commit, "REQUEST_RETRY_S", 0.02)
    log = FakeGatedEventLog()
    log.gate.set()
    broker = FakeBrokerDownFor(refusals=3)
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), broker), max_group_events=100, max_queued_events=1000)
    writer.start()

    async def scenario() -> None:
        await asyncio.gather(*(writer.store(_request(n)) for n in range(3)))

    try:
        asyncio.run(scenario())
        deadline = time.monotonic() + 5
        while sorted(broker.published) != ["u0", "u1", "u2"] and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        writer.close()
    assert sorted(broker.published) == ["u0", "u1", "u2"]  # every scope's run, once the broker answered
    assert len(broker.attempts) == 6  # a refusal ends its pass: one attempt per refusal, then one per scope


def test_a_pass_stops_at_the_first_refusal_and_gives_up_after_the_retry_window(monkeypatch) -> None:
    writer = GroupCommitWriter(Ingest(FakeGatedEventLog(), None, FakeBrokerDownFor(refusals=1)))
    scopes = [_session(n).scope for n in range(4)]
    failing_since: dict = {}
    assert writer._request_pass(scopes, failing_since) == scopes  # refused first: all four again, none tried after
    assert writer._request_pass(scopes, failing_since) == []  # the broker answers: all four requested
    assert failing_since == {}

    writer = GroupCommitWriter(Ingest(FakeGatedEventLog(), None, FakeBrokerDownFor(refusals=100)))
    clock = [1000.0]
    monkeypatch.setattr(group_commit.time, "monotonic", lambda: clock[0])
    assert writer._request_pass(scopes[:2], failing_since) == scopes[:2]
    clock[0] += group_commit.REQUEST_RETRY_FOR_S - 1
    assert writer._request_pass(scopes[:2], failing_since) == scopes[:2]
    clock[0] += 1  # refused for the whole window: left to the pending and index sweeps
    assert writer._request_pass(scopes[:2], failing_since) == [] and failing_since == {}
