"""MTM end to end (SPEC S4, S5.2): a real worker, real Redis, the offline LLM and the local embedder."""
from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient

from athena_core.models.events import EventStatus
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime
from athena_tasks.app import app
from tests.pipeline.waiting import run_pipeline_and_wait, wait_indexed, wait_until

REPLICATION = [
    ("I'm setting up Postgres streaming replication for our orders database.",
     "Use a hot standby with wal_level set to replica and a replication slot on the primary."),
    ("How many Postgres standby replicas should the orders database have?",
     "Two standby replicas in different zones give you failover capacity."),
    ("Should the Postgres replication be synchronous or asynchronous?",
     "Asynchronous replication keeps the primary fast; synchronous avoids data loss on failover."),
]
DINNER = [
    ("What should I cook for dinner tonight? I have fresh salmon.",
     "Roast the salmon with lemon, garlic and dill, and serve it with asparagus."),
    ("How long should the salmon roast in the oven?", "About 12 to 15 minutes at 200 C, until the salmon flakes."),
    ("What side dish goes well with the roasted salmon?", "A quinoa salad or roasted potatoes go well with salmon."),
]
TRAVEL = [
    ("Help me plan my trip to Japan in April: Tokyo and Kyoto.",
     "Spend four days in Tokyo and three in Kyoto, and buy a Japan Rail pass for the trip."),
    ("Which temples should I visit in Kyoto on the Japan trip?",
     "Kinkaku-ji, Fushimi Inari and Kiyomizu-dera are the classic Kyoto temples."),
    ("Where should I stay in Tokyo during the Japan trip?",
     "Shinjuku or Asakusa are convenient bases in Tokyo with good train links."),
]
RETURN = [
    ("Back to the Postgres streaming replication: the standby replica of the orders database lags behind.",
     "Replication lag on a Postgres standby usually comes from slow disks or network; check the replication slot."),
]




def _session(api: TestClient) -> tuple[str, AgentScope]:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    return api.post("/api/v1/sessions", json=scope.model_dump()).json()["session_id"], scope


def _post(api: TestClient, session_id: str, turns, start: datetime) -> list[list[str]]:
    ids = []
    for i, (user, agent) in enumerate(turns):
        ids.append(api.post(f"/api/v1/sessions/{session_id}/interactions", json={
            "user_message": user, "agent_response": agent,
            "timestamp": (start + timedelta(minutes=2 * i)).isoformat()}).json()["event_ids"])
    return ids


def _flush_and_wait(api: TestClient, runtime: Runtime, session_id: str, scope: AgentScope) -> None:
    """Run flush pipelines until nothing is pending, then wait until everything consolidated is indexed.
    One run is not always enough: a run still working off a backlog (more than `pipeline_batch_events`)
    may hold the scope's run request when the flush run asks for its follow-up, which then runs without
    the flush; in production the idle-flush beat covers that."""
    wait_until(lambda: not runtime.redis.exists(f"pipeline:requested:{scope.key}"))

    def drained() -> bool:
        if api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0:
            return True
        run_pipeline_and_wait(scope, flush=True, timeout_s=120)
        return api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0

    wait_until(drained)
    wait_indexed(runtime.documents, scope.user_scope)


def test_three_topics_make_three_chains_and_a_return_merges(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    t0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    replication = _post(worker_api, session_id, REPLICATION, t0)
    dinner = _post(worker_api, session_id, DINNER, t0 + timedelta(hours=1))
    travel = _post(worker_api, session_id, TRAVEL, t0 + timedelta(hours=2))
    returned = _post(worker_api, session_id, RETURN, t0 + timedelta(hours=2, minutes=30))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)

    chains = worker_api.get(f"/api/v1/sessions/{session_id}/segments").json()
    by_events = {frozenset(c["event_ids"]): c for c in chains}
    flat = lambda groups: frozenset(i for g in groups for i in g)  # noqa: E731
    assert set(by_events) == {flat(replication + returned), flat(dinner), flat(travel)}, [
        (c["topic"], c["event_count"]) for c in chains]
    merged = by_events[flat(replication + returned)]
    assert "replication" in merged["summary"].lower() or "postgres" in merged["summary"].lower()
    documents = worker_runtime.documents
    for chain in chains:
        events = documents.get_events(scope.user_scope, chain["event_ids"])
        assert {e.status for e in events} == {EventStatus.consolidated}
        assert {e.chain_id for e in events} == {chain["chain_id"]}
        assert chain["quality"]["passed"] and chain["heat_factors"]["i_base"] > 0

    # A paraphrased question finds the replication chain first (its summary or one of its events).
    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "how do I keep a read-only copy of my database in sync?"}).json()
    assert results[0]["chain_id"] == merged["chain_id"]
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert all(r["retrievers"] and r["time_span"]["start"] <= r["time_span"]["end"] for r in results)
    # Returned chains are accessed (S5.2), recorded beside the read (athena_core/mtm/access_writer.py).
    assert worker_api.app.state.access_writer.flush()
    [accessed] = documents.get_chains(scope.user_scope, [merged["chain_id"]])
    assert accessed.last_accessed_at is not None

    topics = worker_api.get(f"/api/v1/sessions/{session_id}/analysis/topics").json()
    assert len(topics) >= 3 and all(t["frequency"] >= 1 for t in topics)

    context = worker_api.get(f"/api/v1/sessions/{session_id}/context",
                             params={"query": "salmon recipe", "pages": 1}).json()
    assert [p["chain_id"] for p in context["relevant_pages"]] == [by_events[flat(dinner)]["chain_id"]]


def test_a_long_single_topic_is_force_flushed_with_nothing_left_behind(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    from athena_core.observability import metrics

    forced_before = metrics.BREAK_DECISIONS.labels("force")._value.get()
    session_id, scope = _session(worker_api)
    t0 = datetime(2024, 6, 1, 9, 0, tzinfo=timezone.utc)
    turns = [(f"Kubernetes deployment step {i}: roll out the payments service to the cluster, pod batch {i}.",
              f"Rolled out pod batch {i} of the payments service; the Kubernetes deployment is healthy.")
             for i in range(25)]
    ids = [i for pair in _post(worker_api, session_id, turns, t0) for i in pair]
    assert len(ids) == 50
    wait_until(lambda: metrics.BREAK_DECISIONS.labels("force")._value.get() >= forced_before + 2)
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    events = worker_runtime.documents.get_events(scope.user_scope, ids)
    assert len(events) == 50 and {e.status for e in events} == {EventStatus.consolidated}
    chain_ids = {e.chain_id for e in events}
    chains = worker_runtime.documents.get_chains(scope.user_scope, sorted(chain_ids))
    assert sum(c.event_count for c in chains) == 50 and len(chains) <= 3


def test_the_idle_flush_beat_task_consolidates_a_quiet_scope(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, DINNER[:2], datetime(2024, 7, 1, 18, 0, tzinfo=timezone.utc))
    wait_until(lambda: not worker_runtime.redis.exists(f"pipeline:requested:{scope.key}"))
    time.sleep(1.2)  # the worker's ATHENA_SEGMENT_IDLE_S is 1
    assert app.send_task("athena.beat.idle_flush").get(timeout=120)["scopes_flushed"] >= 1
    wait_until(lambda: worker_api.get(f"/api/v1/sessions/{session_id}").json()["pending_events"] == 0)
    [chain] = worker_api.get(f"/api/v1/sessions/{session_id}/segments").json()
    assert chain["event_count"] == 4 and "salmon" in chain["summary"].lower()


def test_search_never_crosses_the_tenant_wall(worker_api: TestClient, worker_runtime: Runtime) -> None:
    mine, my_scope = _session(worker_api)
    theirs, their_scope = _session(worker_api)
    _post(worker_api, theirs, TRAVEL, datetime(2024, 8, 1, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, theirs, their_scope)
    assert worker_api.post(f"/api/v1/sessions/{theirs}/context/search", json={"query": "Kyoto temples"}).json()
    assert worker_api.post(f"/api/v1/sessions/{mine}/context/search", json={"query": "Kyoto temples"}).json() == []
    context = worker_api.get(f"/api/v1/sessions/{mine}/context", params={"query": "Kyoto"}).json()
    assert context["relevant_pages"] == []
