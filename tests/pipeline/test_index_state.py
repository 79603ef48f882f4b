"""Indexing is state, not a message (SPEC S7, issue 12 item 3): a real worker, real Redis.

A worker killed between summarize's commit and the index step (or an index message lost with the broker)
used to leave consolidated events unsearchable for good: the redelivered summarize found nothing pending
and passed `chain_ids: []` on. Now every consolidated event stays "not indexed" until the indexes hold it,
and the next index step of the user, or the index sweep, indexes it.
"""
from __future__ import annotations

import uuid
from datetime import timedelta

from athena_core.ids import new_id
from athena_core.models.events import Event, EventRole, EventStatus, EventType, utc_now
from athena_core.models.scope import AgentScope
from athena_core.models.sessions import Session
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.wiring.runtime import Runtime
from athena_tasks.app import app
from athena_tasks.chains.pipeline import coalesce, segment, summarize
from tests.pipeline.waiting import run_pipeline_and_wait, wait_indexed, wait_until

TURNS = [
    ("I'm planning the Zanzibar snorkelling trip for our anniversary in February.",
     "Mnemba Atoll has the clearest water; book the boat a week ahead."),
    ("Which reef shoes should I pack for the Zanzibar snorkelling trip?",
     "Closed reef shoes with thick soles; the coral near Nungwi is sharp."),
]


def _store_without_a_run(runtime: Runtime, scope: AgentScope) -> list[Event]:
    """Events as the API writes them, without the run request (the run is started by hand below)."""
    session = Session(session_id=new_id("ses"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                      agent_id=scope.agent_id, metadata={}, created_at=utc_now())
    runtime.documents.create_session(session)
    t0 = utc_now() - timedelta(hours=1)
    events = []
    for i, (user, agent) in enumerate(TURNS):
        for j, (role, text) in enumerate([(EventRole.user, user), (EventRole.agent, agent)]):
            at = t0 + timedelta(minutes=2 * i, seconds=j)
            events.append(Event(event_id=new_id("evt"), tenant_id=scope.tenant_id, user_id=scope.user_id,
                                agent_id=scope.agent_id, session_id=session.session_id, role=role,
                                type=EventType.message, content=text, metadata={}, timestamp=at, received_at=at))
    runtime.documents.append_events(events)
    return events


def _lose_the_index(runtime: Runtime, user) -> None:
    """What a worker killed right after summarize's formation commit leaves: the user's chains and events
    written, none of it in the search indexes, nothing marked indexed."""
    runtime.lexical.delete_user(user)
    runtime.vectors.delete_user(user)
    runtime.event_vectors.delete_user(user)
    with runtime.documents._write() as conn:
        conn.execute("UPDATE events SET indexed_at = NULL WHERE tenant_id = ? AND user_id = ?",
                     (user.tenant_id, user.user_id))
        conn.execute("UPDATE chains SET indexed_at = NULL WHERE tenant_id = ? AND user_id = ?",
                     (user.tenant_id, user.user_id))


def _consolidate_without_indexing(runtime: Runtime, scope: AgentScope) -> list[Event]:
    """coalesce → segment → summarize, and the indexing after the formation commit is lost."""
    events = _store_without_a_run(runtime, scope)
    run_pipeline_and_wait(scope, steps=[coalesce.s(scope.key, True), segment.s(), summarize.s()], timeout_s=120)
    stored = runtime.documents.get_events(scope.user_scope, [e.event_id for e in events])
    assert {e.status for e in stored} == {EventStatus.consolidated}
    user = scope.user_scope
    _lose_the_index(runtime, user)
    # the gap the issue found: consolidated, yet in no index
    assert runtime.lexical.count(user) == 0 and runtime.vectors.count(user) == 0
    assert runtime.event_vectors.count(user) == 0
    return stored


def test_events_whose_index_step_was_lost_are_indexed_by_the_sweep(worker_runtime: Runtime) -> None:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    user = scope.user_scope
    events = _consolidate_without_indexing(worker_runtime, scope)

    counts = app.send_task("athena.beat.index_sweep").get(timeout=120)
    assert counts["users"] >= 1 and counts["failed"] == 0
    wait_indexed(worker_runtime.documents, user, timeout_s=30)
    nungwi = next(e for e in events if "Nungwi" in e.content)
    assert worker_runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == [nungwi.event_id]
    chain_ids = {e.chain_id for e in events}
    assert worker_runtime.vectors.count(user) == len(chain_ids)
    assert worker_runtime.event_vectors.count(user) >= len(events)
    assert set(worker_runtime.lexical.search(user, search_terms("Zanzibar snorkelling"), "chain", 5)) == chain_ids
    # indexed once: a second sweep finds nothing of this user
    assert worker_runtime.documents.unindexed_scopes(utc_now() + timedelta(seconds=1)).count(user) == 0


def test_the_next_run_of_the_user_indexes_what_an_earlier_run_left(worker_runtime: Runtime) -> None:
    """The index step of any later run of the user (another agent here) indexes the leftovers too."""
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    user = scope.user_scope
    events = _consolidate_without_indexing(worker_runtime, scope)
    other_agent = AgentScope(tenant_id=scope.tenant_id, user_id=scope.user_id, agent_id="a2")
    run_pipeline_and_wait(other_agent, flush=True, timeout_s=120)  # nothing pending of its own
    assert worker_runtime.documents.unindexed_events(user, 10) == []
    nungwi = next(e for e in events if "Nungwi" in e.content)
    assert worker_runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == [nungwi.event_id]
    assert worker_runtime.vectors.count(user) == len({e.chain_id for e in events})


def test_a_pending_event_whose_arrival_indexing_was_lost_is_indexed_by_the_sweep(worker_runtime: Runtime) -> None:
    """Events are searchable before their topic ends (issue 15): a pending event no index task reached
    (the message lost with the broker) is indexed by the sweep, and stays pending."""
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    user = scope.user_scope
    events = _store_without_a_run(worker_runtime, scope)
    assert len(worker_runtime.documents.unindexed_events(user, 10)) == len(events)

    counts = app.send_task("athena.beat.index_sweep").get(timeout=120)
    assert counts["failed"] == 0
    wait_indexed(worker_runtime.documents, user, timeout_s=30)
    stored = worker_runtime.documents.get_events(user, [e.event_id for e in events])
    assert {e.status for e in stored} == {EventStatus.pending}  # indexed, not consolidated
    nungwi = next(e for e in events if "Nungwi" in e.content)
    assert worker_runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == [nungwi.event_id]
    assert worker_runtime.event_vectors.count(user) >= len(events)
    assert worker_runtime.vectors.count(user) == 0  # no chain yet


def test_a_chain_whose_index_step_was_lost_is_indexed_by_the_sweep(worker_runtime: Runtime) -> None:
    """Events indexed on arrival, then consolidated; the index step of the chain is lost: the chain is
    state too (`indexed_at` per chain), and the sweep indexes it."""
    from athena_tasks.chains.pipeline import index_events
    from athena_tasks.chains.run_requests import shard_of

    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    user = scope.user_scope
    events = _store_without_a_run(worker_runtime, scope)
    index_events.delay(shard_of(user, worker_runtime.settings.index_shards))
    wait_indexed(worker_runtime.documents, user, timeout_s=60)
    run_pipeline_and_wait(scope, steps=[coalesce.s(scope.key, True), segment.s(), summarize.s()], timeout_s=120)
    stored = worker_runtime.documents.get_events(user, [e.event_id for e in events])
    assert {e.status for e in stored} == {EventStatus.consolidated}
    chain_ids = sorted({e.chain_id for e in stored})
    worker_runtime.vectors.delete(user, chain_ids)  # the chain's index lost; its events' indexes kept
    worker_runtime.lexical.delete(user, "chain", chain_ids)
    with worker_runtime.documents._write() as conn:
        conn.execute("UPDATE chains SET indexed_at = NULL WHERE tenant_id = ? AND user_id = ?",
                     (user.tenant_id, user.user_id))
    assert worker_runtime.vectors.count(user) == 0 and worker_runtime.documents.unindexed_chains(user, 10)
    assert worker_runtime.documents.unindexed_events(user, 10) == []

    counts = app.send_task("athena.beat.index_sweep").get(timeout=120)
    assert counts["failed"] == 0
    wait_until(lambda: worker_runtime.documents.unindexed_chains(user, 10) == [], 30)
    chain_ids = {e.chain_id for e in worker_runtime.documents.get_events(user, [e.event_id for e in events])}
    assert worker_runtime.vectors.count(user) == len(chain_ids)
    assert set(worker_runtime.lexical.search(user, search_terms("Zanzibar snorkelling"), "chain", 5)) == chain_ids


def _gate_rejecting_every_segment(*args, **kwargs):
    """A fake quality gate: the real scores, with every verdict turned to `rejected`."""
    from athena_core.mtm.quality_gate import score_segment

    return score_segment(*args, **kwargs).model_copy(update={"passed": False})


def test_with_rejected_events_unindexed_a_rejected_segment_leaves_the_indexes(worker_runtime: Runtime,
                                                                               monkeypatch) -> None:
    """`ATHENA_INDEX_REJECTED_EVENTS=false`: the events of a segment the gate rejects are searchable while
    pending (arrival indexing), removed from the indexes when the gate rejects them, marked indexed (no
    sweep picks them up again), and a later index pass marks them without indexing them again."""
    from athena_core.mtm import chain_formation
    from athena_tasks.chains.indexing import index_user

    runtime = worker_runtime
    monkeypatch.setattr(runtime, "settings", runtime.settings.model_copy(update={"index_rejected_events": False}))
    monkeypatch.setattr(chain_formation, "score_segment", _gate_rejecting_every_segment)
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    user = scope.user_scope
    events = _store_without_a_run(runtime, scope)
    nungwi = next(e for e in events if "Nungwi" in e.content)

    index_user(runtime, user, path="arrival")  # what the arrival task does for the user
    assert runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == [nungwi.event_id]
    assert runtime.event_vectors.count(user) >= len(events)

    summarize.run(segment.run(coalesce.run(scope.key, True)))  # the run, in this process
    stored = runtime.documents.get_events(user, [e.event_id for e in events])
    assert {e.status for e in stored} == {EventStatus.rejected}
    assert runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == []
    assert runtime.event_vectors.count(user) == 0 and runtime.vectors.count(user) == 0
    assert runtime.documents.unindexed_events(user, 10) == []

    _lose_the_index(runtime, user)  # indexed_at cleared: the next pass must mark, not index
    result = index_user(runtime, user, path="run")
    assert result["events_indexed"] == 0 and result["events_marked"] == len(events)
    assert runtime.lexical.search(user, search_terms("Nungwi coral"), "event", 5) == []
    assert runtime.event_vectors.count(user) == 0
