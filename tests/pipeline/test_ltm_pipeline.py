"""LTM end to end (SPEC S5–S7): promotion into the graph, retrieval, archival, analytics, purge."""
from __future__ import annotations

import base64
import uuid
from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient

from athena_core.ltm.promotion import Promoter
from athena_core.models.chains import ChainStatus
from athena_core.models.events import utc_now
from athena_core.models.scope import AgentScope
from athena_core.wiring.runtime import Runtime
from athena_core.stm.stm_window import stm_key
from athena_tasks.app import app
from athena_tasks.promote.archiver import awaiting_promotion
from tests.contract.test_document_store import _chain
from tests.pipeline.test_mtm_pipeline import _flush_and_wait, _post, _session
from tests.pipeline.waiting import promote_and_wait, wait_until

GO_SERVICE = [
    ("I'm rewriting the payments service in Go for Prescott Data; the old Python version is too slow.",
     "Go with a small worker pool should bring the payments service latency down."),
    ("I use Go and PostgreSQL for the payments service, with pgx instead of an ORM.",
     "pgx gives the Go payments service prepared statements and batching."),
    ("I'm struggling with pgxpool settings in the Go payments service under burst load.",
     "Set MaxConns near twice the database CPU count and add an acquire timeout to the pgxpool."),
]


def test_ten_observations_in_ten_chains_make_one_edge_of_weight_ten(worker_runtime: Runtime) -> None:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    promoter = Promoter(worker_runtime.documents, worker_runtime.graph, worker_runtime.extractor)
    now = utc_now()
    chains = [_chain(scope, f"chn_go{i}", now, summary=f"I use Go for the billing job number {i}.", entities=["Go"])
              for i in range(10)]
    for chain in chains:
        worker_runtime.documents.upsert_chain(chain)
        promoter.promote(chain, 0.5, now)
    facts = [f for f in worker_runtime.graph.facts_about(scope.user_scope, "user", "USES") if f.object.id == "go"]
    assert len(facts) == 1 and facts[0].weight == 10
    confidences = [0.85] * 10  # the offline extractor's band for an explicit first-person gazetteer use
    assert abs(facts[0].confidence - sum(confidences) / 10) < 1e-9
    # Promoting the same chain content again changes nothing.
    before = worker_runtime.graph.edges(scope.user_scope)
    [stored] = worker_runtime.documents.get_chains(scope.user_scope, ["chn_go0"])
    assert not promoter.needs_promotion(stored)
    promoter.promote(stored, 0.5, now)
    after = worker_runtime.graph.edges(scope.user_scope)
    assert [(f.edge_id, f.weight, f.confidence) for f in after] == [(f.edge_id, f.weight, f.confidence) for f in before]


def test_a_go_service_conversation_is_promoted_and_retrieved(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, GO_SERVICE, utc_now() - timedelta(hours=1))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    assert promote_and_wait(worker_runtime, scope.user_scope, timeout_s=120) >= 1  # chains_promoted ≥ 1, as state
    facts = worker_runtime.graph.edges(scope.user_scope)
    assert any(f.relation == "USES" and f.object.id == "go" and f.subject.id == "user" for f in facts)

    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "what language is the payments service written in?", "limit": 20}).json()
    kinds = [r["source_type"] for r in results]
    assert kinds[0] in ("chain", "event") and "fact" in kinds
    assert all("graph" in r["retrievers"] and set(r["retrievers"]) <= {"graph", "lexical"}
               for r in results if r["source_type"] == "fact")
    assert any("go" in r["content"].lower() for r in results if r["source_type"] == "fact")
    context = worker_api.get(f"/api/v1/sessions/{session_id}/context", params={"query": "Go payments"}).json()
    assert context["facts"] and all(f["confidence"] >= 0.5 for f in context["facts"])
    assert any("uses go" in line.lower() for line in context["user_persona"])
    graph = worker_api.get(f"/api/v1/sessions/{session_id}/graph", params={"depth": 2}).json()
    assert {"nodes", "edges"} <= set(graph) and graph["edges"]
    heat = worker_api.get(f"/api/v1/sessions/{session_id}/analysis/heat").json()
    assert heat["chains"] and 0 < heat["overall_heat"] <= 1 and sum(heat["breakdown"].values()) == len(heat["chains"])


def test_a_chain_formed_from_imported_2023_history_is_promoted_on_the_next_pass(
        worker_api: TestClient, worker_runtime: Runtime) -> None:
    """Issue 14 / SPEC S5: the heat clock runs from consolidation, so history imported with its 2023
    timestamps is hot when memory first holds it and is promoted by the next pass (on the old clock,
    ΔT from the last event in 2023, its heat was ~0 and it never was)."""
    session_id, scope = _session(worker_api)
    history = datetime(2023, 3, 14, 9, 30, tzinfo=timezone.utc)
    _post(worker_api, session_id, GO_SERVICE, history)
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    chains = worker_runtime.documents.recent_chains(scope.user_scope)
    assert chains and all(c.last_event_at.year == 2023 and c.started_at >= history for c in chains)  # stamps honoured
    assert all(c.consolidated_at.year > 2023 for c in chains)
    assert promote_and_wait(worker_runtime, scope.user_scope, timeout_s=60) >= 1
    promoted = [c for c in worker_runtime.documents.recent_chains(scope.user_scope) if c.promoted_evidence]
    assert promoted and all(c.heat_factors.hours_since_access < 1 for c in promoted)
    facts = worker_runtime.graph.edges(scope.user_scope)
    assert any(f.subject.id == "user" and f.relation == "USES" and f.object.id == "go" for f in facts)


def test_cold_chains_are_archived_with_their_vectors_and_blobs(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    old = datetime(2024, 1, 10, tzinfo=timezone.utc)
    [event_id] = [worker_api.post(f"/api/v1/sessions/{session_id}/events", json={
        "role": "system", "type": "observation", "content": "attached build log",
        "payload": base64.b64encode(b"log bytes").decode(), "timestamp": old.isoformat()}).json()["event_id"]]
    _post(worker_api, session_id, GO_SERVICE, old)
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    chains = worker_runtime.documents.recent_chains(scope.user_scope, status=None)
    assert chains and worker_runtime.vectors.count(scope.user_scope) == len(chains)
    assert worker_runtime.event_vectors.count(scope.user_scope) > 0 and worker_runtime.lexical.count(scope.user_scope) > 0
    [blob_event] = worker_runtime.documents.get_events(scope.user_scope, [event_id])
    # Freshly consolidated history is hot (S5) and waits for its promotion before archival may take it.
    app.send_task("athena.beat.archive").get(timeout=120)  # the pass is global: look at this user's chains
    assert all(c.status == ChainStatus.active
               for c in worker_runtime.documents.get_chains(scope.user_scope, [c.chain_id for c in chains]))
    promote_and_wait(worker_runtime, scope.user_scope, timeout_s=120)
    wait_until(lambda: not any(awaiting_promotion(c, utc_now(), worker_runtime.settings)
                               for c in worker_runtime.documents.recent_chains(scope.user_scope)), 120)
    assert app.send_task("athena.beat.archive").get(timeout=120)["chains_archived"] >= len(chains)
    archived = worker_runtime.documents.get_chains(scope.user_scope, [c.chain_id for c in chains])
    assert all(c.status == ChainStatus.archived and c.archived_at for c in archived)
    assert worker_runtime.vectors.count(scope.user_scope) == 0
    assert worker_runtime.event_vectors.count(scope.user_scope) == 0 and worker_runtime.lexical.count(scope.user_scope) == 0
    blob_path = worker_runtime.blobs.root / blob_event.blob_uri.removeprefix("local://")
    assert not blob_path.exists()


def test_analytics_trigger_needs_admin_and_writes_communities(worker_api: TestClient, worker_runtime: Runtime) -> None:
    scope = AgentScope(tenant_id=f"t-{uuid.uuid4().hex[:8]}", user_id="u1", agent_id="a1")
    now = utc_now()
    promoter = Promoter(worker_runtime.documents, worker_runtime.graph, worker_runtime.extractor)
    for i, text in enumerate(["I use Go and Docker for the billing service.", "I use Python and Pandas for analytics."]):
        chain = _chain(scope, f"chn_c{i}", now, summary=text, entities=[])
        worker_runtime.documents.upsert_chain(chain)
        promoter.promote(chain, 0.5, now)
    response = worker_api.post("/api/v1/admin/analytics/trigger")  # auth off: the anonymous caller is admin
    assert response.status_code == 202
    assert app.AsyncResult(response.json()["task_id"]).get(timeout=120)["started"] is True

    def written() -> bool:
        return all(n.community_id is not None for n in worker_runtime.graph.nodes(scope.user_scope))

    wait_until(written)
    assert worker_runtime.graph.communities(scope.tenant_id)


def test_purge_leaves_nothing_of_the_user_in_any_store(worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    other_id, other = _session(worker_api)
    worker_api.post(f"/api/v1/sessions/{session_id}/events", json={
        "type": "observation", "content": "screenshot", "payload": base64.b64encode(b"png").decode()})
    _post(worker_api, session_id, GO_SERVICE, utc_now() - timedelta(hours=1))
    _post(worker_api, other_id, GO_SERVICE, utc_now() - timedelta(hours=1))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    _flush_and_wait(worker_api, worker_runtime, other_id, other)
    promote_and_wait(worker_runtime, scope.user_scope, timeout_s=120)
    user = scope.user_scope
    assert worker_runtime.graph.count(user)[1] > 0 and worker_runtime.vectors.count(user) > 0
    assert worker_runtime.event_vectors.count(user) > 0 and worker_runtime.lexical.count(user) > 0

    report = worker_api.delete(f"/api/v1/sessions/{session_id}", params={"purge": "user"}).json()
    assert report["deleted"] and report["purge"]["documents"]["events"] > 0

    documents = worker_runtime.documents
    assert documents.get_session(session_id) is None
    assert documents.count_events(scope) == 0
    assert documents.recent_chains(user, status=None) == []
    assert worker_runtime.vectors.count(user) == 0
    assert worker_runtime.event_vectors.count(user) == 0 and worker_runtime.lexical.count(user) == 0
    assert worker_runtime.graph.count(user) == (0, 0)
    assert not list(worker_runtime.redis.scan_iter(match=f"stm:{scope.tenant_id}:{scope.user_id}:*"))
    assert not (worker_runtime.blobs.root / scope.tenant_id / scope.user_id).exists()
    # The other tenant's copy of the same conversation is untouched.
    assert documents.count_events(other) > 0 and worker_runtime.graph.count(other.user_scope)[1] > 0
    assert worker_runtime.lexical.count(other.user_scope) > 0 and worker_runtime.event_vectors.count(other.user_scope) > 0
    assert worker_runtime.redis.exists(stm_key(other))
