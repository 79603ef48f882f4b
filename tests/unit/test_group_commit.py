"""The group commit (SPEC S3, S9): requests share one durable write, and none is answered before the
commit that holds its events; a full queue refuses at once; one request's failure is its own."""
from __future__ import annotations

import asyncio
import threading

import pytest

from athena_core.models.events import EventRole, EventType
from athena_core.models.sessions import Session
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


def test_a_failing_request_fails_alone_when_the_shared_commit_fails() -> None:
    log = FakeGatedEventLog()
    log.refuse_content = "poison 3"
    writer = GroupCommitWriter(Ingest(log, FakeWindow(log), lambda scope: None), max_group_events=100)
    writer.start()

    async def scenario() -> list:
        tasks = [asyncio.create_task(writer.store(_request(n, "poison" if n == 3 else "fine"))) for n in range(6)]
        await asyncio.sleep(0.05)
        log.gate.set()
        return await asyncio.gather(*tasks, return_exceptions=True)

    try:
        outcomes = asyncio.run(scenario())
    finally:
        writer.close()
    assert isinstance(outcomes[3], DurableWriteError)
    assert all(isinstance(o, list) and len(o) == 1 for i, o in enumerate(outcomes) if i != 3)
    assert len(log.committed()) == 5
