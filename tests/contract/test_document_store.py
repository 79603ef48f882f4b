"""One contract suite for every DocumentStore adapter (SPEC S0).

Runs on SQLite, on mongomock (a pymongo-API double: `MongoDocuments` over `mongomock_double`), and on a
MongoDB-wire server: a private SecantusDB 0.7.0b3 (not MongoDB) that tests/contract/conftest.py starts, or
the server ATHENA_TEST_MONGO_URL names (a real MongoDB). That run never skips: a server that cannot start
fails it with the reason.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventStatus, EventType
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.stores.documents.mongo_documents import MongoDocuments
from athena_core.stores.documents.port import DocumentStore
from athena_core.stores.documents.sqlite_documents import SqliteDocuments

T0 = datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


def _mongomock_double() -> MongoDocuments:
    import mongomock

    return MongoDocuments(mongomock.MongoClient(tz_aware=True)[f"athena_{uuid.uuid4().hex[:8]}"])


def _mongo_wire(url: str) -> MongoDocuments:
    return MongoDocuments.connect(url, f"athena_test_{uuid.uuid4().hex[:8]}")


ADAPTERS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mongomock_double", id="mongomock-double"),
    pytest.param("mongo", id="mongo-wire"),
]


@pytest.fixture(params=ADAPTERS)
def store(request, tmp_path) -> Iterator[DocumentStore]:
    if request.param == "sqlite":
        adapter: DocumentStore = SqliteDocuments(tmp_path / "docs.sqlite3")
    elif request.param == "mongomock_double":
        adapter = _mongomock_double()
    else:
        adapter = _mongo_wire(request.getfixturevalue("mongo_wire_url"))
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


def _chain(scope: AgentScope, chain_id: str, at: datetime, **kw) -> "Chain":
    from athena_core.mtm.heat import compute_heat
    from athena_core.models.chains import Chain
    from athena_core.models.chains import QualityScores

    quality = QualityScores(coherence=0.5, completeness=0.5, relevance=0.5, engagement=0.5, cognitive_depth=0.5,
                            overall=0.5, passed=True, mode="balanced")
    heat = compute_heat(intrinsic_importance=0.5, density=0.2, hours_since_access=1.0)
    values = dict(
        chain_id=chain_id, tenant_id=scope.tenant_id, user_id=scope.user_id, agent_ids=[scope.agent_id],
        topic="topic " + chain_id, subtopics=[], summary="summary of " + chain_id, entities=["Go"],
        quality=quality, intrinsic_importance=0.5, density=0.2, heat_score=heat.heat, heat_factors=heat,
        started_at=at, last_event_at=at, event_count=2, event_ids=["evt_1", "evt_2"], metadata={"k": "v"},
        created_at=at, updated_at=at,
    )
    values.update(kw)
    return Chain(**values)


def test_chain_round_trip_and_scoping(store: DocumentStore) -> None:
    mine = _chain(A, "chn_1", T0)
    theirs = _chain(B, "chn_2", T0)
    store.upsert_chain(mine)
    store.upsert_chain(theirs)
    assert store.get_chains(A.user_scope, ["chn_1", "chn_2", "chn_missing"]) == [mine]
    assert store.get_chains(B.user_scope, ["chn_1"]) == []
    updated = mine.model_copy(update={"summary": "new summary", "event_count": 3})
    store.upsert_chain(updated)
    assert store.get_chains(A.user_scope, ["chn_1"]) == [updated]


def test_recent_chains_window_and_order(store: DocumentStore) -> None:
    from athena_core.models.chains import ChainStatus

    for i in range(5):
        store.upsert_chain(_chain(A, f"chn_{i}", T0 + timedelta(hours=i)))
    store.upsert_chain(_chain(A, "chn_old", T0 - timedelta(days=10)))
    store.upsert_chain(_chain(A, "chn_arch", T0 + timedelta(hours=9), status=ChainStatus.archived))
    assert [c.chain_id for c in store.recent_chains(A.user_scope, limit=3)] == ["chn_4", "chn_3", "chn_2"]
    since = [c.chain_id for c in store.recent_chains(A.user_scope, since=T0 - timedelta(hours=1))]
    assert since == ["chn_4", "chn_3", "chn_2", "chn_1", "chn_0"]
    assert store.recent_chains(A.user_scope, status=None, limit=1)[0].chain_id == "chn_arch"
    assert store.recent_chains(B.user_scope) == []


def test_may_fall_in_reads_the_time_columns_of_the_users_own_ids(store: DocumentStore) -> None:
    events = [_event(A, f"e{h}", T0 + timedelta(hours=h)) for h in range(4)]
    other = _event(B, "same time, other tenant", T0 + timedelta(hours=1))
    store.append_events([*events, other])
    ids = [e.event_id for e in reversed(events)] + [other.event_id, "evt_missing"]
    window = (T0 + timedelta(hours=1), T0 + timedelta(hours=3))  # [start, end): hours 1 and 2
    assert store.may_fall_in(A.user_scope, "event", ids, *window) == [events[2].event_id, events[1].event_id]
    for i in range(4):
        store.upsert_chain(_chain(A, f"chn_w{i}", T0 + timedelta(hours=i)))
    store.upsert_chain(_chain(B, "chn_wb", T0 + timedelta(hours=2)))
    chains = ["chn_w0", "chn_w1", "chn_w2", "chn_w3", "chn_wb"]
    # a chain may hold evidence of the window when its last event is at or after its start (a superset)
    assert store.may_fall_in(A.user_scope, "chain", chains, *window) == ["chn_w1", "chn_w2", "chn_w3"]
    assert store.may_fall_in(A.user_scope, "chain", [], *window) == []
    with pytest.raises(ValueError, match="kind"):
        store.may_fall_in(A.user_scope, "session", ["x"], *window)


def test_touch_and_heat_updates(store: DocumentStore) -> None:
    store.upsert_chain(_chain(A, "chn_1", T0))
    at = T0 + timedelta(days=1)
    store.touch_chains(A.user_scope, [("chn_1", at, 1.5)])
    store.touch_chains(B.user_scope, [("chn_1", at + timedelta(days=1), 9.0)])  # other tenant: no effect
    [chain] = store.get_chains(A.user_scope, ["chn_1"])
    assert chain.last_accessed_at == at and chain.recall_strength == 1.5
    factors = chain.heat_factors.model_dump()
    factors["heat"] = 0.123
    store.set_chain_heat(A.user_scope, [("chn_1", 0.123, factors)])
    [chain] = store.get_chains(A.user_scope, ["chn_1"])
    assert chain.heat_score == 0.123 and chain.heat_factors.heat == 0.123


def test_active_chains_page_walks_every_tenant(store: DocumentStore) -> None:
    from athena_core.models.chains import ChainStatus

    for scope, chain_id in [(A, "chn_a1"), (A, "chn_a2"), (B, "chn_b1"), (A2, "chn_a3")]:
        store.upsert_chain(_chain(scope, chain_id, T0))
    store.upsert_chain(_chain(B, "chn_b2", T0, status=ChainStatus.archived))
    seen, after = [], None
    while page := store.active_chains_page(after, 2):
        seen += [c.chain_id for c in page]
        last = page[-1]
        after = (last.tenant_id, last.user_id, last.chain_id)
    assert sorted(seen) == ["chn_a1", "chn_a2", "chn_a3", "chn_b1"] and len(seen) == 4


def test_active_chain_users_walks_every_user_with_an_active_chain(store: DocumentStore) -> None:
    """Issue 13: the promotion beat fans out per user; each user once, in (tenant, user) order, paged."""
    from athena_core.models.chains import ChainStatus

    C = AgentScope(tenant_id="ta", user_id="u3", agent_id="a1")  # archived chains only: not listed
    D = AgentScope(tenant_id="ta", user_id="u2", agent_id="a9")
    for scope, chain_id in [(A, "chn_a1"), (A, "chn_a2"), (B, "chn_b1"), (A2, "chn_a3"), (D, "chn_d1")]:
        store.upsert_chain(_chain(scope, chain_id, T0))
    store.upsert_chain(_chain(C, "chn_c1", T0, status=ChainStatus.archived))
    seen, after = [], None
    while page := store.active_chain_users(after, 2):
        assert len(page) <= 2
        seen += page
        after = (page[-1].tenant_id, page[-1].user_id)
    expected = [A.user_scope, D.user_scope, B.user_scope]  # A2 is A's user (another agent): listed once
    assert seen == expected
    assert store.active_chain_users(None, 10) == expected
    assert store.active_chain_users((expected[-1].tenant_id, expected[-1].user_id), 10) == []


def test_previous_user_message_and_idle_scopes(store: DocumentStore) -> None:
    events = [
        _event(A, "u1", T0),
        _event(A, "a1", T0 + timedelta(seconds=1), role=EventRole.agent),
        _event(A, "u2", T0 + timedelta(seconds=2)),
        _event(B, "other tenant", T0 + timedelta(seconds=1)),
    ]
    store.append_events(events)
    assert store.previous_user_message(A, events[2]).content == "u1"
    assert store.previous_user_message(A, events[0]) is None
    fresh = _event(A2, "fresh", T0, received_at=T0 + timedelta(hours=1))
    store.append_events([fresh])
    assert set(store.idle_pending_scopes(T0 + timedelta(minutes=30))) == {A, B}
    store.mark_events(B, [events[3].event_id], EventStatus.consolidated, "chn")
    assert store.idle_pending_scopes(T0 + timedelta(minutes=30)) == [A]


def test_delete_user_removes_only_that_user(store: DocumentStore) -> None:
    store.create_session(Session(session_id="ses_a", tenant_id="ta", user_id="u1", agent_id="a1", metadata={},
                                 created_at=T0))
    store.create_session(Session(session_id="ses_b", tenant_id="tb", user_id="u1", agent_id="a1", metadata={},
                                 created_at=T0))
    store.append_events([_event(A, "a", T0), _event(A2, "a2", T0), _event(B, "b", T0)])
    store.upsert_chain(_chain(A, "chn_a", T0))
    store.upsert_chain(_chain(B, "chn_b", T0))
    store.record_dead_letter("athena.pipeline.summarize", "task-a", {"args": []}, "quotes a's text", scope=A.user_scope)
    store.record_dead_letter("athena.pipeline.summarize", "task-b", {"args": []}, "quotes b's text", scope=B.user_scope)
    store.record_dead_letter("athena.beat.promote", "task-none", {"args": []}, "no scope")
    assert store.delete_user(A.user_scope) == {"sessions": 1, "events": 2, "chains": 1, "idempotency_keys": 0,
                                               "dead_letters": 1}
    assert {d["task_id"] for d in store.dead_letters()} == {"task-b", "task-none"}
    assert store.get_session("ses_a") is None and store.get_session("ses_b") is not None
    assert store.count_events(A) == 0 and store.count_events(A2) == 0 and store.count_events(B) == 1
    assert store.get_chains(B.user_scope, ["chn_b"]) != []


def test_promotion_mark_and_archive(store: DocumentStore) -> None:
    from athena_core.models.chains import ChainStatus

    store.upsert_chain(_chain(A, "chn_1", T0))
    store.mark_promoted(A.user_scope, "chn_1", "hash-1")
    store.mark_promoted(B.user_scope, "chn_1", "hash-b")  # other tenant: no effect
    assert store.get_chains(A.user_scope, ["chn_1"])[0].promoted_evidence == "hash-1"
    at = T0 + timedelta(days=8)
    assert store.archive_chain(B.user_scope, "chn_1", at) is False
    assert store.archive_chain(A.user_scope, "chn_1", at) is True
    assert store.archive_chain(A.user_scope, "chn_1", at) is False  # already archived
    [chain] = store.get_chains(A.user_scope, ["chn_1"])
    assert chain.status == ChainStatus.archived and chain.archived_at == at
    assert store.recent_chains(A.user_scope) == [] and store.active_chains_page(None, 10) == []


# -- indexing is state (SPEC S7, issue 12 item 3) ----------------------------------------------------------
def test_unindexed_events_are_the_users_events_of_any_status_until_marked(store: DocumentStore) -> None:
    events = [_event(A, f"a{i}", T0 + timedelta(seconds=i)) for i in range(4)]
    other_agent = _event(A2, "other agent", T0 + timedelta(seconds=10))
    theirs = _event(B, "other tenant", T0)
    store.append_events([*events, other_agent, theirs])
    # pending events are to index at once (issue 15: searchable before their topic ends)
    assert [e.content for e in store.unindexed_events(A.user_scope, 10)] == ["a0", "a1", "a2", "a3", "other agent"]
    store.mark_events(A, [e.event_id for e in events[:3]], EventStatus.consolidated, "chn_a")
    store.mark_events(A, [events[3].event_id], EventStatus.rejected)
    store.mark_events(B, [theirs.event_id], EventStatus.consolidated, "chn_b")
    # every agent of the user, any status, chronological; never another tenant's; a page at a time
    assert [e.content for e in store.unindexed_events(A.user_scope, 10)] == ["a0", "a1", "a2", "a3", "other agent"]
    assert [e.content for e in store.unindexed_events(A.user_scope, 2)] == ["a0", "a1"]
    assert store.mark_indexed(B.user_scope, [events[0].event_id], T0) == 0  # other tenant: no effect
    assert store.mark_indexed(A.user_scope, [events[0].event_id, events[1].event_id], T0) == 2
    assert [e.content for e in store.unindexed_events(A.user_scope, 10)] == ["a2", "a3", "other agent"]
    assert [e.content for e in store.unindexed_events(B.user_scope, 10)] == ["other tenant"]
    assert store.mark_indexed(A.user_scope, [], T0) == 0
    # marking leaves the event itself untouched
    assert store.get_events(A.user_scope, [events[0].event_id]) == [
        events[0].model_copy(update={"status": EventStatus.consolidated, "chain_id": "chn_a"})]


def test_a_chain_is_unindexed_after_every_write_until_marked(store: DocumentStore) -> None:
    first, second = _chain(A, "chn_one", T0), _chain(A, "chn_two", T0 + timedelta(minutes=1))
    theirs = _chain(B, "chn_theirs", T0)
    for chain in (first, second, theirs):
        store.upsert_chain(chain)
    assert {c.chain_id for c in store.unindexed_chains(A.user_scope, 10)} == {"chn_one", "chn_two"}
    assert len(store.unindexed_chains(A.user_scope, 1)) == 1
    assert store.mark_chains_indexed(B.user_scope, ["chn_one"], T0) == 0  # other tenant: no effect
    assert store.mark_chains_indexed(A.user_scope, ["chn_one", "chn_two"], T0) == 2
    assert store.unindexed_chains(A.user_scope, 10) == []
    assert [c.chain_id for c in store.unindexed_chains(B.user_scope, 10)] == ["chn_theirs"]
    store.upsert_chain(first.model_copy(update={"summary": "merged: a longer summary"}))  # a merge rewrites it
    assert [c.summary for c in store.unindexed_chains(A.user_scope, 10)] == ["merged: a longer summary"]
    store.mark_chains_indexed(A.user_scope, ["chn_one"], T0)
    store.upsert_chain(second)
    store.archive_chain(A.user_scope, "chn_two", T0)  # an archived chain is not to index
    assert store.unindexed_chains(A.user_scope, 10) == []


def test_unindexed_scopes_finds_users_with_old_unindexed_events(store: DocumentStore) -> None:
    old = _event(A, "old", T0, received_at=T0)
    fresh = _event(B, "fresh", T0, received_at=T0 + timedelta(minutes=10))
    pending = _event(A2, "pending", T0, received_at=T0)
    store.append_events([old, fresh, pending])
    store.mark_events(A, [old.event_id], EventStatus.consolidated, "chn_a")
    store.mark_events(B, [fresh.event_id], EventStatus.consolidated, "chn_b")
    assert store.unindexed_scopes(T0 + timedelta(minutes=5)) == [A.user_scope]
    assert set(store.unindexed_scopes(T0 + timedelta(minutes=20))) == {A.user_scope, B.user_scope}
    store.mark_indexed(A.user_scope, [old.event_id], T0 + timedelta(minutes=1))
    # the pending one is to index too (issue 15)
    assert set(store.unindexed_scopes(T0 + timedelta(minutes=20))) == {A.user_scope, B.user_scope}
    store.mark_indexed(A.user_scope, [pending.event_id], T0 + timedelta(minutes=1))
    assert store.unindexed_scopes(T0 + timedelta(minutes=20)) == [B.user_scope]


def test_unindexed_scopes_finds_users_with_unindexed_chains(store: DocumentStore) -> None:
    store.upsert_chain(_chain(A, "chn_lost", T0))  # written, its index step lost
    assert store.unindexed_scopes(datetime.now(timezone.utc) - timedelta(minutes=5)) == []  # too fresh
    assert store.unindexed_scopes(datetime.now(timezone.utc) + timedelta(seconds=1)) == [A.user_scope]
    store.mark_chains_indexed(A.user_scope, ["chn_lost"], T0)
    assert store.unindexed_scopes(datetime.now(timezone.utc) + timedelta(seconds=1)) == []


def _insert_bad_row(store: DocumentStore, status: str, user_id: str = "auth0|5f7c") -> None:
    """A row stored around the API (or before the door checked ids): its user id forms no scope."""
    at = T0.timestamp()
    if isinstance(store, SqliteDocuments):
        with store._write() as conn:
            conn.execute(
                "INSERT INTO events (event_id, tenant_id, user_id, agent_id, session_id, role, type, content, "
                "metadata, timestamp, received_at, status, chain_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (new_id("evt"), "ta", user_id, "a1", "ses_bad", "user", "message", "bad", "{}", at, at, status,
                 "chn_bad" if status == "consolidated" else None))
    else:
        store.events.insert_one({
            "_id": new_id("evt"), "tenant_id": "ta", "user_id": user_id, "agent_id": "a1", "session_id": "ses_bad",
            "role": "user", "type": "message", "content": "bad", "metadata": {}, "timestamp": T0,
            "timestamp_us": int(at * 1e6), "received_at_us": int(at * 1e6), "status": status,
            "chain_id": "chn_bad" if status == "consolidated" else None, "seen_at_us": None})


def test_a_row_that_forms_no_scope_never_stops_a_sweep(store: DocumentStore) -> None:
    store.append_events([_event(A, "good", T0, received_at=T0)])
    _insert_bad_row(store, "pending")
    consolidated = _event(B, "good, consolidated", T0, received_at=T0)
    store.append_events([consolidated])
    store.mark_events(B, [consolidated.event_id], EventStatus.consolidated, "chn_b")
    _insert_bad_row(store, "consolidated", user_id="u\n1")
    later = T0 + timedelta(hours=1)
    bad: list[tuple] = []
    assert store.idle_pending_scopes(later, on_invalid=lambda ids, exc: bad.append(ids)) == [A]
    assert store.unseen_pending_scopes(later, on_invalid=lambda ids, exc: bad.append(ids)) == [A]
    assert set(store.unindexed_scopes(later, on_invalid=lambda ids, exc: bad.append(ids))) == {
        A.user_scope, B.user_scope}  # pending events are to index too (issue 15)
    assert bad[:2] == [("ta", "auth0|5f7c", "a1"), ("ta", "auth0|5f7c", "a1")]
    assert sorted(bad[2:]) == [("ta", "auth0|5f7c"), ("ta", "u\n1")]
    assert store.idle_pending_scopes(later) == [A]  # without a callback: logged and skipped


def test_an_event_log_from_before_indexed_at_is_migrated(tmp_path) -> None:
    """SQLite: a database created without the column gets it on open; its consolidated events read as
    not indexed (the sweep then indexes them once, repairing any gap)."""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    old_schema = SqliteDocuments.schema.replace("    blob_uri TEXT, mime_type TEXT,\n    indexed_at REAL\n",
                                                "    blob_uri TEXT, mime_type TEXT\n")
    assert "indexed_at" not in old_schema
    conn = sqlite3.connect(path)
    conn.executescript(old_schema)
    conn.execute(
        "INSERT INTO events (event_id, tenant_id, user_id, agent_id, session_id, role, type, content, metadata, "
        "timestamp, received_at, status, chain_id) VALUES ('evt_old','ta','u1','a1','s','user','message','x','{}',"
        "?,?,'consolidated','chn_old')", (T0.timestamp(), T0.timestamp()))
    conn.commit()
    conn.close()
    store = SqliteDocuments(path)
    try:
        assert [e.event_id for e in store.unindexed_events(A.user_scope, 10)] == ["evt_old"]
        assert store.mark_indexed(A.user_scope, ["evt_old"], T0) == 1
        assert store.unindexed_events(A.user_scope, 10) == []
        SqliteDocuments(path).close()  # opening again is a no-op
    finally:
        store.close()



def _without_rowid_chains(schema: str) -> str:
    """The schema with `chains` in its layout before the fourteenth reads round (a WITHOUT ROWID table)."""
    rowid = "    last_event_at REAL NOT NULL, doc TEXT NOT NULL\n);\n"
    assert rowid in schema
    return schema.replace(rowid, "    last_event_at REAL NOT NULL, doc TEXT NOT NULL\n) WITHOUT ROWID;\n")


@pytest.mark.parametrize("with_indexed_at", [True, False], ids=["chains-with-indexed-at", "oldest-chains"])
def test_chains_of_the_without_rowid_layout_are_moved_to_a_rowid_table(tmp_path, with_indexed_at: bool) -> None:
    """SQLite: a file whose `chains` is a WITHOUT ROWID table (every 1.2 KB chain document on an overflow
    page) is moved to a rowid table on open, with every chain, its columns and its indexes; again a no-op."""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(_without_rowid_chains(SqliteDocuments.schema))
    if with_indexed_at:
        conn.execute("ALTER TABLE chains ADD COLUMN indexed_at REAL")
        conn.execute("ALTER TABLE chains ADD COLUMN updated_at REAL")
    chains = [_chain(A, f"chn_{i}", T0 + timedelta(minutes=i)) for i in range(3)] + [_chain(B, "chn_b", T0)]
    for chain in chains:
        conn.execute("INSERT INTO chains (chain_id, tenant_id, user_id, status, last_event_at, doc) "
                     "VALUES (?, ?, ?, 'active', ?, ?)", (chain.chain_id, chain.tenant_id, chain.user_id,
                                                          chain.last_event_at.timestamp(), chain.model_dump_json()))
    if with_indexed_at:  # one indexed, the others not: the state survives the move
        conn.execute("UPDATE chains SET indexed_at = 1, updated_at = 1 WHERE chain_id = 'chn_0'")
        conn.execute("UPDATE chains SET updated_at = 2 WHERE chain_id != 'chn_0'")
    conn.commit()
    conn.close()

    store = SqliteDocuments(path)
    try:
        table = store._conn().execute("SELECT sql FROM sqlite_master WHERE name = 'chains'").fetchone()[0]
        assert "WITHOUT ROWID" not in table.upper()
        indexes = {r[0] for r in store._conn().execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'chains' AND sql IS NOT NULL")}
        assert indexes == {"chains_by_user_recency", "chains_not_indexed"}
        assert store.get_chains(A.user_scope, ["chn_2", "chn_0", "chn_b"]) == [chains[2], chains[0]]
        assert [c.chain_id for c in store.recent_chains(A.user_scope)] == ["chn_2", "chn_1", "chn_0"]
        unindexed = [c.chain_id for c in store.unindexed_chains(A.user_scope, 10)]
        assert sorted(unindexed) == (["chn_1", "chn_2"] if with_indexed_at else ["chn_0", "chn_1", "chn_2"])
        store.upsert_chain(_chain(A, "chn_new", T0))  # the moved table takes writes
        assert [c.chain_id for c in store.get_chains(A.user_scope, ["chn_new"])] == ["chn_new"]
        again = SqliteDocuments(path)  # opening again is a no-op
        assert [c.chain_id for c in again.recent_chains(A.user_scope)] == ["chn_2", "chn_1", "chn_new", "chn_0"]  # a tie: chain id, descending
        again.close()
    finally:
        store.close()


def test_the_supervisor_moves_an_old_layout_before_its_processes_open_the_file(tmp_path) -> None:
    """`Stack.start` opens the embedded default's files first (`open_files_once`), so the API and the
    workers never wait on one of them moving the chains table."""
    import sqlite3

    from athena_core.wiring.settings import Settings
    from athena_devtools.stack import Stack

    settings = Settings(data_dir=tmp_path, document_store="sqlite")
    conn = sqlite3.connect(settings.sqlite_path)
    conn.executescript(_without_rowid_chains(SqliteDocuments.schema))
    conn.close()
    Stack(settings=settings).open_files_once()
    table = sqlite3.connect(settings.sqlite_path).execute("SELECT sql FROM sqlite_master WHERE name = 'chains'")
    assert "WITHOUT ROWID" not in table.fetchone()[0].upper()
    assert (tmp_path / "lexical.sqlite3").exists()

# -- batch atomicity (SPEC S2: the batch route is all-or-nothing; issue 17) -------------------------------
def test_a_failing_batch_stores_none_of_its_events_on_the_mongo_wire_server(mongo_wire_url) -> None:
    """The third event of a batch breaks a unique index after the first two were inserted: the transaction
    is aborted and none of the batch is stored. A re-append of stored ids inside a batch stays a no-op."""
    from pymongo.errors import BulkWriteError

    store = _mongo_wire(mongo_wire_url)
    try:
        assert store.atomic_batches, "this MongoDB-wire server reports no replica set: no transactions"
        stored = _event(A, "the one and only", T0)
        store.append_events([stored])
        store.events.create_index([("content", 1)], unique=True, name="test_unique_content")
        batch = [_event(A, "first of the batch", T0 + timedelta(seconds=1)),
                 _event(A, "second of the batch", T0 + timedelta(seconds=2)),
                 _event(A, "the one and only", T0 + timedelta(seconds=3))]
        with pytest.raises(BulkWriteError):
            store.append_events(batch)
        assert store.get_events(A.user_scope, [e.event_id for e in batch]) == []
        assert store.count_events(A) == 1

        retried = [stored, _event(A, "after the failure", T0 + timedelta(seconds=4))]
        store.append_events(retried)
        assert store.get_events(A.user_scope, [e.event_id for e in retried]) == retried
    finally:
        store.db.client.drop_database(store.db.name)
        store.close()


def test_a_store_without_transactions_says_its_batches_are_not_atomic() -> None:
    store = _mongomock_double()  # mongomock has no sessions, as a standalone server has no transactions
    assert store.atomic_batches is False
    event = _event(A, "still idempotent", T0)
    store.append_events([event, event])
    store.append_events([event])
    assert store.count_events(A) == 1
