"""The vector cache's copies and index builds are counted on /metrics (`athena_vector_cache_copies_total`,
`athena_vector_index_builds_total`): an operator sees when a large user's index is rebuilt, and why."""
from __future__ import annotations

import time

import numpy as np
import pytest
from prometheus_client import REGISTRY

from athena_core.models.scope import UserScope
from athena_core.stores.vectors.sqlite_vectors import SqliteVectors
from athena_core.stores.vectors.top_k import COARSE_MIN_ROWS
from tests.unit.test_vector_top_k import unit_rows


def counted(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_copies_of_a_users_rows_are_counted_by_reason(tmp_path) -> None:
    rng = np.random.default_rng(1)
    store = SqliteVectors(tmp_path / "v.sqlite3", 384)
    scope = UserScope(tenant_id="t", user_id="u")
    store.upsert_many(scope, [f"c{i}" for i in range(10)], unit_rows(rng, 10))
    store.search(scope, unit_rows(rng, 1)[0], 3)  # cached from here: later writes are merged into the cache
    before = {r: counted("athena_vector_cache_copies_total", reason=r) for r in ("replaced", "removed", "grown")}
    try:
        store.upsert(scope, "c3", unit_rows(rng, 1)[0])  # a new vector for a cached row
        store.delete(scope, ["c4"])
        store.upsert_many(scope, [f"n{i}" for i in range(1100)], unit_rows(rng, 1100))  # past the spare room
        store.upsert(scope, "m0", unit_rows(rng, 1)[0])  # appended in the room: no copy
        after = {r: counted("athena_vector_cache_copies_total", reason=r) for r in before}
        assert {r: after[r] - before[r] for r in before} == {"replaced": 1, "removed": 1, "grown": 1}
    finally:
        store.close()


def test_an_index_build_is_counted_with_its_thread_time(tmp_path) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(2)
    store = SqliteVectors(tmp_path / "v.sqlite3", 384, ann_min_rows=0)
    scope = UserScope(tenant_id="t", user_id="u")
    store.upsert_many(scope, [f"c{i}" for i in range(COARSE_MIN_ROWS)], unit_rows(rng, COARSE_MIN_ROWS))
    builds = counted("athena_vector_index_builds_total", kind="exact")
    seconds = counted("athena_vector_index_build_seconds_total", kind="exact")
    try:
        store.search(scope, unit_rows(rng, 1)[0], 5)  # starts the background build
        deadline = time.monotonic() + 30.0
        while counted("athena_vector_index_builds_total", kind="exact") == builds and time.monotonic() < deadline:
            time.sleep(0.05)  # waits for the build; not a timing assertion
        assert counted("athena_vector_index_builds_total", kind="exact") == builds + 1
        assert counted("athena_vector_index_build_seconds_total", kind="exact") > seconds
    finally:
        store.close()
