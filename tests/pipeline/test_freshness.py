"""Freshness (SPEC S2, issue 15): every accepted event is searchable before its topic is consolidated.

A real worker (the session's in-process Celery worker on the tests' Redis) and the real API: the arrival
index task indexes events as they come; no idle flush runs (no beat in these tests) and the topic never
breaks, so the events stay pending while SearchMemory finds them, lexically and by meaning.
"""
from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from athena_core.models.events import EventStatus, utc_now
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import _post, _session
from tests.pipeline.waiting import wait_indexed

ONE_TOPIC = [
    ("I'm repotting my fiddle-leaf fig this weekend; which pot size should I buy?",
     "Go one size up, about five centimetres wider, with a drainage hole."),
    ("For the fiddle-leaf fig, which potting mix works best?",
     "A chunky mix: bark, perlite and a little peat keeps the roots airy."),
    ("Should I water the fiddle-leaf fig right after repotting it into the Quenby terracotta pot?",
     "Water it once thoroughly, then let the top few centimetres dry out."),
]


def test_an_event_inside_an_unfinished_topic_is_found_before_any_topic_break(
    worker_api: TestClient, worker_runtime: Runtime
) -> None:
    session_id, scope = _session(worker_api)
    ids = _post(worker_api, session_id, ONE_TOPIC, utc_now() - timedelta(minutes=30))
    wait_indexed(worker_runtime.documents, scope.user_scope, timeout_s=60)  # state, not time

    target = ids[2][0]  # the newest user message: its topic is still open
    lexical = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                              json={"query": "Quenby terracotta", "limit": 5}).json()
    dense = worker_api.post(f"/api/v1/sessions/{session_id}/context/search",
                            json={"query": "how much should a freshly transplanted plant be watered", "limit": 5}).json()
    assert lexical[0]["source_id"] == target and lexical[0]["source_type"] == "event"
    assert "lexical" in lexical[0]["retrievers"]
    assert target in [r["source_id"] for r in dense if "dense" in r["retrievers"]]
    assert all(r["chain_id"] is None for r in lexical if r["source_type"] == "event")
    # still pending after the searches: nothing was consolidated (no break, no flush, no chain)
    stored = worker_runtime.documents.get_events(scope.user_scope, [i for pair in ids for i in pair])
    assert {e.status for e in stored} == {EventStatus.pending}
    assert worker_runtime.documents.recent_chains(scope.user_scope) == []
