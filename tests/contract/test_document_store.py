"""One contract suite for every DocumentStore adapter (SPEC S0).

Runs on SQLite, on mongomock (a pymongo-API double: `MongoDocuments` over `mongomock_double`), and on a
real MongoDB when ATHENA_TEST_MONGO_URL is set.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventStatus, EventType
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.stores.mongo_documents import MongoDocuments
from athena_core.stores.ports import DocumentStore
from athena_core.stores.sqlite_documents import SqliteDocuments

T0 = datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


def _mongomock_double() -> MongoDocuments:
    import mongomock

    return MongoDocuments(mongomock.MongoClient(tz_aware=True)[f"athena_{uuid.uuid4().hex[:8]}"])


def _real_mongo() -> MongoDocuments:
    from pymongo import MongoClient

    client = MongoClient(os.environ["ATHENA_TEST_MONGO_URL"], serverSelectionTimeoutMS=3000, tz_aware=True)
    return MongoDocuments(client[f"athena_test_{uuid.uuid4().hex[:8]}"])


ADAPTERS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mongomock_double", id="mongomock-double"),
    pytest.param(
        "mongo", id="mongo",
        marks=pytest.mark.skipif(not os.environ.get("ATHENA_TEST_MONGO_URL"), reason="ATHENA_TEST_MONGO_URL not set"),
    ),
]


@pytest.fixture(params=ADAPTERS)
def store(request, tmp_path) -> Iterator[DocumentStore]:
    if request.param == "sqlite":
        adapter: DocumentStore = SqliteDocuments(tmp_path / "docs.sqlite3")
    elif request.param == "mongomock_double":
        adapter = _mongomock_double()
    else:
        adapter = _real_mongo()
    yield adapter
    if request.param == "mongo":
        adapter.db.client.drop_database(adapter.db.name)
    adapter.close()


def _event(scope: AgentScope, content: str, at: datetime, **kw) -> Event:
    return Event(
        event_id=kw.pop("event_id", None) or new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
        agent_id=scope.agent_id, session_id="ses_x", role=kw.pop("role", EventRole.user),
        type=kw.pop("type", EventType.message), content=content, metadata=kw.pop("metadata", {}),
        timestamp=at, received_at=kw.pop("received_at", at), **kw,
    )


A = AgentScope(tenant_id="ta", user_id="u1", agent_id="a1")
A2 = AgentScope(tenant_id="ta", user_id="u1", agent_id="a2")
B = AgentScope(tenant_id="tb", user_id="u1", agent_id="a1")  # same user and agent ids, other tenant


def test_adapter_satisfies_the_port(store: DocumentStore) -> None:
    assert isinstance(store, DocumentStore)
    store.ping()


def test_session_round_trip(store: DocumentStore) -> None:
    session = Session(session_id="ses_1", tenant_id="ta", user_id="u1", agent_id="a1",
                      metadata={"project": "x"}, created_at=T0)
    store.create_session(session)
    assert store.get_session("ses_1") == session
    assert store.get_session("ses_missing") is None
    assert store.delete_session("ses_1") is True
    assert store.delete_session("ses_1") is False
    assert store.get_session("ses_1") is None


def test_events_round_trip_exactly(store: DocumentStore) -> None:
    event = _event(A, "hello", T0, metadata={"execution_id": "e1"}, blob_uri="local://ta/u1/b", mime_type="image/png")
    store.append_events([event])
    assert store.get_events(A.user_scope, [event.event_id]) == [event]


def test_append_is_idempotent_on_event_id(store: DocumentStore) -> None:
    event = _event(A, "once", T0)
    store.append_events([event])
    store.append_events([event, _event(A, "twice", T0 + timedelta(seconds=1))])
    assert store.count_events(A) == 2


def test_order_is_timestamp_then_arrival(store: DocumentStore) -> None:
    late = _event(A, "late", T0 + timedelta(hours=1))
    first = _event(A, "first", T0)
    second = _event(A, "second", T0)  # same timestamp, later id
    store.append_events([late, first, second])
    assert [e.content for e in store.pending_events(A)] == ["first", "second", "late"]
    assert [e.content for e in store.recent_events(A, 2)] == ["late", "second"]
    assert [e.content for e in store.get_events(A.user_scope, [late.event_id, second.event_id, first.event_id])] == [
        "first", "second", "late"]


def test_every_read_is_scoped(store: DocumentStore) -> None:
    mine = _event(A, "tenant a", T0)
    other_agent = _event(A2, "tenant a, other agent", T0)
    theirs = _event(B, "tenant b", T0)
    store.append_events([mine, other_agent, theirs])
    assert [e.content for e in store.recent_events(A, 10)] == ["tenant a"]
    assert [e.content for e in store.pending_events(B)] == ["tenant b"]
    # A user-scoped read sees all of the user's agents but never another tenant's event, even by id.
    got = store.get_events(A.user_scope, [mine.event_id, other_agent.event_id, theirs.event_id])
    assert {e.content for e in got} == {"tenant a", "tenant a, other agent"}
    assert store.mark_events(A, [theirs.event_id], EventStatus.consolidated, "chn_x") == 0
    assert store.mark_seen(A, [theirs.event_id], T0) == 0
    assert store.get_events(B.user_scope, [theirs.event_id])[0].status == EventStatus.pending


def test_mark_events_and_pending(store: DocumentStore) -> None:
    events = [_event(A, f"e{i}", T0 + timedelta(seconds=i)) for i in range(4)]
    store.append_events(events)
    assert store.mark_events(A, [events[0].event_id, events[1].event_id], EventStatus.consolidated, "chn_1") == 2
    assert store.mark_events(A, [events[2].event_id], EventStatus.rejected) == 1
    assert [e.content for e in store.pending_events(A)] == ["e3"]
    assert store.count_events(A, EventStatus.consolidated) == 2
    assert store.get_events(A.user_scope, [events[0].event_id])[0].chain_id == "chn_1"
    assert [e.content for e in store.pending_events(A, limit=1)] == ["e3"]


def test_mark_seen_only_once_and_the_sweep_finds_unseen_old_events(store: DocumentStore) -> None:
    old = _event(A, "old", T0, received_at=T0)
    fresh = _event(B, "fresh", T0, received_at=T0 + timedelta(minutes=10))
    seen = _event(A2, "seen", T0, received_at=T0)
    store.append_events([old, fresh, seen])
    assert store.mark_seen(A2, [seen.event_id], T0 + timedelta(minutes=1)) == 1
    assert store.mark_seen(A2, [seen.event_id], T0 + timedelta(minutes=2)) == 0  # first time only
    assert store.get_events(A2.user_scope, [seen.event_id])[0].seen_at == T0 + timedelta(minutes=1)
    assert store.unseen_pending_scopes(T0 + timedelta(minutes=5)) == [A]
    assert set(store.unseen_pending_scopes(T0 + timedelta(minutes=20))) == {A, B}


def test_dead_letters(store: DocumentStore) -> None:
    store.record_dead_letter("athena.pipeline.segment", "task-1", {"args": ["ta:u1:a1"]}, "RuntimeError('x')")
    [letter] = store.dead_letters()
    assert letter["task_name"] == "athena.pipeline.segment" and letter["args"] == {"args": ["ta:u1:a1"]}
    assert letter["error"] == "RuntimeError('x')" and letter["failed_at"].tzinfo is not None
