"""Issue 16 item 6: what a search loads, and the dense branch beside the lexical one, do not change what
it finds where they must not (real worker, real stores, the local embedder).

- `search_parallel` only moves the query's embedding and the vector scans to a thread: same hits, same
  scores, in the same order as one after the other;
- `search_load_candidates` loads the best candidates by a first fusion of ranks; a query naming a time
  window loads them all (its bonus can lift any), so there it returns what loading everything returns;
- a small budget finds fewer events, and none that loading everything would not.
"""
from __future__ import annotations

from datetime import datetime, timezone

from fastapi.testclient import TestClient

from athena_core.retrieval.hybrid_search import HybridSearch
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import DINNER, REPLICATION, RETURN, TRAVEL, _flush_and_wait, _post, _session

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)


def searcher(runtime: Runtime, **settings: object) -> HybridSearch:
    """The API's search over the runtime's stores, with some settings changed (no recall on access: the
    compared searches must see the same heat)."""
    return HybridSearch(documents=runtime.documents, chain_vectors=runtime.vectors,
                        event_vectors=runtime.event_vectors, lexical=runtime.lexical, graph=runtime.graph,
                        embedder=runtime.embedder, on_access=lambda *args: None,
                        settings=runtime.settings.model_copy(update=settings))


def found(search: HybridSearch, scope, query: str) -> list[tuple[str, str, float]]:
    return [(h.source_type, h.source_id, h.score) for h in search.search(scope, query, NOW, limit=50, max_tokens=4000)]


def test_loading_budget_and_parallel_dense_keep_what_search_finds(worker_api: TestClient,
                                                                  worker_runtime: Runtime) -> None:
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, REPLICATION, datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc))
    _post(worker_api, session_id, DINNER, datetime(2024, 5, 3, 19, 0, tzinfo=timezone.utc))
    _post(worker_api, session_id, TRAVEL, datetime(2024, 5, 20, 10, 0, tzinfo=timezone.utc))
    _post(worker_api, session_id, RETURN, datetime(2024, 5, 21, 10, 0, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    user = scope.user_scope

    serial = searcher(worker_runtime, search_parallel=False, search_load_candidates=0)
    parallel = searcher(worker_runtime, search_parallel=True, search_load_candidates=0)
    for query in ("Postgres standby replica lag", "how long does the salmon roast", "temples in Kyoto"):
        assert found(parallel, user, query) == found(serial, user, query), query

    small = searcher(worker_runtime, search_load_candidates=3)
    plain = "Postgres standby replica lag"
    everything, budgeted = found(serial, user, plain), found(small, user, plain)
    # the budget loaded fewer events, so fewer reach a result, and none that loading all would not find
    # (limit and max_tokens fit every candidate of this small user: all of them are returned)
    events = lambda hits: {i for kind, i, _ in hits if kind == "event"}  # noqa: E731
    assert events(budgeted) < events(everything)

    windowed = "what did I cook for dinner in May 2024"
    assert found(small, user, windowed) == found(serial, user, windowed)  # a window cue loads every candidate
