"""Facts in every answer (issue 14 item 5), through a real worker: promoted facts are ranked with the
chains and events of SearchMemory, inside its token budget, each citing evidence events that exist in
the event log; GetContext's persona reads as sentences."""
from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient

from athena_core.models.events import utc_now
from athena_core.retrieval.budget import approx_tokens
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import _flush_and_wait, _post, _session
from tests.pipeline.waiting import promote_and_wait

CONVERSATION = [
    ("I'm rewriting the payments service in Go this quarter.",
     "Go suits a latency-bound service. Will you keep the current database?"),
    ("Yes, PostgreSQL stays, and I use pgx instead of an ORM.",
     "pgx gives you batch queries and prepared statements."),
    ("I'm struggling with pgxpool settings under burst load.",
     "Set MaxConns near twice the database CPU count and add an acquire timeout."),
]


def test_search_results_fuse_facts_that_cite_logged_events_and_the_persona_reads_as_sentences(
        worker_api: TestClient, worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    posted = _post(worker_api, session_id, CONVERSATION, utc_now() - timedelta(hours=2))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    assert promote_and_wait(worker_runtime, scope.user_scope, timeout_s=120) >= 1

    url = f"/api/v1/sessions/{session_id}/context/search"
    results = worker_api.post(url, json={"query": "Which pgxpool settings am I struggling with?", "max_tokens": 400}).json()
    facts = [r for r in results if r["source_type"] == "fact"]
    assert facts, results
    assert sum(approx_tokens(r["content"]) for r in results) <= 400  # facts spend the same budget
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)  # one ranking
    kinds = [r["source_type"] for r in results]
    assert kinds.index("fact") < max(i for i, k in enumerate(kinds) if k != "fact")  # ranked among, not after
    cited = {e for r in facts for e in r["evidence_event_ids"]}
    assert all(r["evidence_event_ids"] for r in facts)
    logged = worker_runtime.documents.get_events(scope.user_scope, sorted(cited))
    assert {e.event_id for e in logged} == cited and cited <= {i for pair in posted for i in pair}
    for r in facts:
        assert r["valid_at"] and r["first_valid_at"] and r["first_valid_at"] <= r["valid_at"]
        assert isinstance(r["is_current"], bool) and isinstance(r["is_initial"], bool)
    assert all(r["evidence_event_ids"] is None and r["is_current"] is None for r in results if r["source_type"] != "fact")

    without = worker_api.post(url, json={"query": "Which pgxpool settings am I struggling with?", "max_tokens": 400,
                                         "include_facts": False}).json()
    assert without and all(r["source_type"] != "fact" for r in without)

    # no word of this query is in a fact's statement: the kind of tool matches it ("Go" is a language), so
    # the Go fact is in the facts' lexical list, not only reached through the entities of the top chains
    kind = worker_api.post(url, json={"query": "Which programming language do I use?", "max_tokens": 400}).json()
    assert any(r["source_type"] == "fact" and "Go" in r["content"].split() and "lexical" in r["retrievers"]
               for r in kind), kind

    persona = worker_api.get(f"/api/v1/sessions/{session_id}/context").json()["user_persona"]
    assert "Uses Go." in persona and "Struggles with pgxpool settings." in persona, persona
    assert all(line[0].isupper() and line.endswith(".") for line in persona)
