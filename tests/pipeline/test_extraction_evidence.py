"""Extraction from the evidence, end to end through a real worker (SPEC S6.1, issue 14 item 2): facts
carry the ids of the turns they came from, those ids exist in the event log, the agent's first person is
never the user's fact and a third party's statement stays the third party's."""
from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from athena_core.models.events import utc_now
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import _flush_and_wait, _post, _session
from tests.pipeline.waiting import promote_and_wait

CONVERSATION = [
    ("I use Go and PostgreSQL for the payments service, with pgx instead of an ORM.",
     "I recommend Redpanda for the payment events. I use Python for this kind of glue code."),
    ("I'm struggling with pgxpool settings in the Go payments service under burst load.",
     "Set MaxConns near twice the database CPU count and add an acquire timeout to the pgxpool."),
    ("My colleague Priya uses Java for the payments service's reporting job.",
     "Java is a fine fit for that reporting job next to the Go payments service."),
]


def test_facts_cite_event_log_turns_and_the_agents_first_person_is_not_the_users(
        worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    posted = _post(worker_api, session_id, CONVERSATION, utc_now() - timedelta(hours=1))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    assert promote_and_wait(worker_runtime, scope.user_scope, timeout_s=120) >= 1

    facts = worker_runtime.graph.edges(scope.user_scope)
    cited = {event_id for f in facts for event_id in f.evidence_event_ids}
    assert cited, "no fact carries evidence event ids"
    logged = {e.event_id: e for e in worker_runtime.documents.get_events(scope.user_scope, sorted(cited))}
    assert set(logged) == cited and cited <= {i for pair in posted for i in pair}
    (go,) = [f for f in facts if (f.subject.id, f.relation, f.object.id) == ("user", "USES", "go")]
    user_turn_ids = {pair[0] for pair in posted}
    assert go.evidence_event_ids and set(go.evidence_event_ids) <= user_turn_ids
    assert go.valid_at in {logged[i].timestamp for i in go.evidence_event_ids}  # the source turn's time

    user_objects = {f.object.id for f in facts if f.subject.id == "user"}
    assert not user_objects & {"redpanda", "python"}  # only the agent said "I recommend" / "I use Python"
    assert "java" not in user_objects  # Priya's, not the user's
    assert any(f.subject.id == "priya" and f.object.id == "java" for f in facts)

    results = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "what does the payments service use? Go", "limit": 30}).json()
    fact_hits = [r for r in results if r["source_type"] == "fact"]
    assert fact_hits and any(r["evidence_event_ids"] for r in fact_hits)
    assert {i for r in fact_hits for i in r["evidence_event_ids"] or []} <= cited
    graph = worker_api.get(f"/api/v1/sessions/{session_id}/graph").json()
    assert any(e["evidence_event_ids"] for e in graph["edges"])
