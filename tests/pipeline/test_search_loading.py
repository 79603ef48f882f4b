"""Issue 16 item 6: what a search loads, and the dense branch beside the lexical one, do not change what
it finds where they must not (real worker, real stores, the local embedder).

- `search_parallel` only moves the query's embedding and the vector scans to a thread: same hits, same
  scores, in the same order as one after the other;
- `search_load_candidates` loads the best candidates by a first fusion of ranks; a query naming a time
  window also loads every candidate that may fall in it (its bonus can lift any), so there it returns
  the window's evidence as loading everything does, and loads no candidate outside it past the budget;
- a small budget finds fewer events, and none that loading everything would not;
- `search_max_concurrent` lets that many searches of a process run at once, the others wait their turn.
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from fastapi.testclient import TestClient

from athena_core.retrieval.hybrid_search import HybridSearch
from athena_core.wiring.runtime import Runtime
from tests.pipeline.test_mtm_pipeline import DINNER, REPLICATION, RETURN, TRAVEL, _flush_and_wait, _post, _session

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)
WEEK = (datetime(2024, 5, 20, tzinfo=timezone.utc), datetime(2024, 5, 27, tzinfo=timezone.utc))  # "last week"


def searcher(runtime: Runtime, **settings: object) -> HybridSearch:
    """The API's search over the runtime's stores, with some settings changed (no recall on access: the
    compared searches must see the same heat). Every item is a dense candidate unless a test sets the
    floor: what loading does is seen best on a full candidate pool."""
    settings.setdefault("search_dense_min_similarity", -1.0)
    return HybridSearch(documents=runtime.documents, chain_vectors=runtime.vectors,
                        event_vectors=runtime.event_vectors, lexical=runtime.lexical, graph=runtime.graph,
                        embedder=runtime.embedder, on_access=lambda *args: None,
                        settings=runtime.settings.model_copy(update=settings))


def found(search: HybridSearch, scope, query: str, timings: dict | None = None) -> list[tuple[str, str, float]]:
    """(kind, id, score) of each hit; `timings`, when given, receives the search's ms per stage."""
    return [(h.source_type, h.source_id, h.score)
            for h in search.search(scope, query, NOW, limit=50, max_tokens=4000, timings=timings)]


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
    assert found(small, user, windowed) == found(serial, user, windowed)  # all of them fall in May 2024

    day = "what did we say last week about temples in Kyoto"  # 20-27 May: two conversations of four
    inside = lambda search: {h.source_id for h in search.search(user, day, NOW, limit=50, max_tokens=4000)  # noqa: E731
                             if h.source_type == "event" and WEEK[0] <= h.time_span.start < WEEK[1]}
    # the week's evidence is all found (scores may differ by a neighbour's share from outside the week)
    assert inside(small) == inside(serial) and inside(serial)
    asked: list[list[str]] = []
    counting = _GetEventsRecorder(worker_runtime.documents, asked)
    budgeted_search = searcher(worker_runtime, search_load_candidates=3)
    budgeted_search.documents = counting
    budgeted_search.search(user, day, NOW, limit=50, max_tokens=4000)
    loaded_budgeted = set(asked[0])
    asked.clear()
    all_search = searcher(worker_runtime, search_load_candidates=0)
    all_search.documents = counting
    all_search.search(user, day, NOW, limit=50, max_tokens=4000)
    assert loaded_budgeted < set(asked[0])  # the first load (the candidates) left out other weeks'


class _InFrontOfStore:
    """The runtime's document store behind a test's own methods: what a subclass does not define is the
    store's."""

    def __init__(self, documents) -> None:  # noqa: ANN001
        self._documents = documents

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._documents, name)


class _GetEventsRecorder(_InFrontOfStore):
    """The runtime's document store, recording the ids each `get_events` call asks for."""

    def __init__(self, documents, asked: list[list[str]]) -> None:  # noqa: ANN001
        super().__init__(documents)
        self._asked = asked

    def get_events(self, scope, event_ids):  # noqa: ANN001, ANN201
        self._asked.append(list(event_ids))
        return self._documents.get_events(scope, event_ids)


def test_a_dense_rank_counts_only_near_the_query(worker_api: TestClient, worker_runtime: Runtime) -> None:
    """`search_dense_min_similarity`: with little in memory, the nearest item by cosine is still rank 1 of
    the dense list however far it is; below the floor it is no candidate (seen on `make run`: "what editor
    do I use now?" ranked a chain about category theory, cosine 0.07, first)."""
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, DINNER, datetime(2024, 5, 3, 19, 0, tzinfo=timezone.utc))
    _post(worker_api, session_id, REPLICATION, datetime(2024, 5, 4, 9, 0, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    user = scope.user_scope
    unrelated = "which lens should I buy for bird photography"
    everything = searcher(worker_runtime, search_dense_min_similarity=-1.0)
    floored = searcher(worker_runtime, search_dense_min_similarity=0.15)
    far = [h for h in everything.search(user, unrelated, NOW, limit=50, max_tokens=4000)
           if h.similarity_score is not None and h.similarity_score < 0.15 and "dense" in h.retrievers]
    assert far  # without a floor, items nowhere near the query are dense candidates
    assert not [h for h in floored.search(user, unrelated, NOW, limit=50, max_tokens=4000) if "dense" in h.retrievers
                and h.similarity_score is not None and h.similarity_score < 0.15]
    near = floored.search(user, "how long do I roast the salmon", NOW, limit=5, max_tokens=4000)
    assert any("salmon" in h.content and "dense" in h.retrievers for h in near)  # the near ones still count


class _GetChainsHolder(_InFrontOfStore):
    """The runtime's document store, holding each `get_chains` call (one per search) until `hold` calls
    are inside at once or `deadline_s` passes, and counting the most that were inside together."""

    def __init__(self, documents, hold: int, deadline_s: float) -> None:  # noqa: ANN001
        super().__init__(documents)
        self._hold, self._deadline_s = hold, deadline_s
        self._lock = threading.Condition()
        self.inside = 0
        self.most_inside = 0

    def get_chains(self, scope, chain_ids):  # noqa: ANN001, ANN201
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
            self._lock.notify_all()
            self._lock.wait_for(lambda: self.inside >= self._hold, timeout=self._deadline_s)
        try:
            return self._documents.get_chains(scope, chain_ids)
        finally:
            with self._lock:
                self.inside -= 1


def _searched_at_once(search: HybridSearch, scope, queries: list[str]) -> tuple[list, list[dict]]:  # noqa: ANN001
    """Each query searched on its own thread, all started together: (hits per query, stages per query)."""
    hits: list = [None] * len(queries)
    stages: list[dict] = [{} for _ in queries]

    def one(i: int) -> None:
        hits[i] = found(search, scope, queries[i], stages[i])

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(queries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30.0)
    return hits, stages


def test_searches_beyond_the_limit_wait_their_turn(worker_api: TestClient, worker_runtime: Runtime) -> None:
    """Four searches at once: with `search_max_concurrent=2` at most two are inside the store together, the
    others wait (stage ``turn``) and then find what they find alone; with no limit all four are inside."""
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, REPLICATION, datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc))
    _post(worker_api, session_id, DINNER, datetime(2024, 5, 3, 19, 0, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    user = scope.user_scope
    queries = ["Postgres standby replica lag", "how long does the salmon roast", "replication slot", "dinner"]
    alone = [found(searcher(worker_runtime), user, q) for q in queries]

    for limit, most in ((2, 2), (0, 4)):
        search = searcher(worker_runtime, search_max_concurrent=limit)
        holder = _GetChainsHolder(worker_runtime.documents, hold=4, deadline_s=0.5)
        search.documents = holder
        started = time.perf_counter()
        hits, stages = _searched_at_once(search, user, queries)
        assert time.perf_counter() - started < 20.0
        assert hits == alone, limit
        assert holder.most_inside == most, limit
        waited = [s.get("turn", 0.0) for s in stages]
        if limit:
            assert sum(w > 200.0 for w in waited) >= 2  # two waited for a turn: at least one hold (0.5 s)
        else:
            assert not any(waited)  # no limit: no turn to wait for


class _GetChainsFailingOnce(_InFrontOfStore):
    """The runtime's document store, whose first `get_chains` call raises (a store that stopped answering)."""

    def __init__(self, documents) -> None:  # noqa: ANN001
        super().__init__(documents)
        self.failed = False

    def get_chains(self, scope, chain_ids):  # noqa: ANN001, ANN201
        if not self.failed:
            self.failed = True
            raise ConnectionError("the document store does not answer")
        return self._documents.get_chains(scope, chain_ids)


def test_a_failed_search_gives_its_turn_back(worker_api: TestClient, worker_runtime: Runtime) -> None:
    """With one turn, a search whose store raises must not keep the turn: the next search runs (a kept turn
    would make every later search of the process wait for good)."""
    session_id, scope = _session(worker_api)
    _post(worker_api, session_id, REPLICATION, datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc))
    _flush_and_wait(worker_api, worker_runtime, session_id, scope)
    search = searcher(worker_runtime, search_max_concurrent=1)
    search.documents = _GetChainsFailingOnce(worker_runtime.documents)
    try:
        search.search(scope.user_scope, "Postgres standby replica lag", NOW, limit=5, max_tokens=1000)
    except ConnectionError:
        pass
    else:
        raise AssertionError("the first search should have failed")
    hits: list = []
    later = threading.Thread(target=lambda: hits.append(found(search, scope.user_scope, "replica lag")), daemon=True)
    later.start()
    later.join(10.0)
    assert hits and hits[0], "the next search did not get a turn"
