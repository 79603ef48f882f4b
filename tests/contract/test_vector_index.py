"""One contract suite for every VectorIndex adapter (SPEC S0, S1, S4, S8).

Runs on SQLite (exact search, a temporary file), on Milvus Lite (a temporary data directory; skipped when
milvus_lite is not installed) and on a Milvus standalone server: a private Milvus 2.3.5 from the `milvus`
wheel that tests/contract/conftest.py starts, or the server ATHENA_TEST_MILVUS_URI names. The server run
never skips: a server that cannot start fails these tests with the reason.

Milvus Lite costs seconds to start, so one adapter serves the whole module and each test works in its
own fresh tenant ids.
"""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from athena_core.models.scope import UserScope
from athena_core.models.errors import EmbeddingDimensionMismatch
from athena_core.stores.vectors.milvus_vectors import MilvusVectors
from athena_core.stores.vectors.port import VectorIndex, reading_own_writes
from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

DIM = 16
HAVE_LITE = importlib.util.find_spec("milvus_lite") is not None and importlib.util.find_spec("pymilvus") is not None


def _unit(rng: np.random.Generator, n: int = 1, dim: int = DIM) -> np.ndarray:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _tenant() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


class Harness:
    """One adapter under test plus how to open another instance on the same storage."""

    def __init__(self, opener: Callable[[int], VectorIndex], index: VectorIndex, shared: bool) -> None:
        self._opener = opener
        self.index = index
        self.shared = shared  # the module-wide Milvus adapter: don't close it behind the module's back

    def open_other(self, dimension: int = DIM) -> VectorIndex:
        return self._opener(dimension)

    def reopen(self) -> VectorIndex:
        """Close the adapter and construct it again on the same storage (a restart)."""
        self.index.close()
        self.index = self._opener(DIM)
        return self.index


class _ModuleMilvus:
    """The port's tests read straight after writing, as the pipeline does: they run the adapter at Strong
    for every read. The default per-call levels have tests of their own (end of the module)."""

    def __init__(self, uri: str, collection: str) -> None:
        self.uri = uri
        self.collection = collection
        self.index = self.open(DIM)

    def open(self, dimension: int) -> MilvusVectors:
        return MilvusVectors(self.uri, dimension, collection=self.collection, search_consistency="Strong")


@pytest.fixture(scope="module")
def milvus_lite() -> Iterator[_ModuleMilvus]:
    directory = Path(tempfile.mkdtemp(prefix="athena-milvus-lite-"))
    holder = _ModuleMilvus(str(directory / "m.db"), "athena_chains_test")
    yield holder
    holder.index.close()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="module")
def milvus_server(milvus_server_uri: str) -> Iterator[_ModuleMilvus]:
    holder = _ModuleMilvus(milvus_server_uri, f"athena_test_{uuid.uuid4().hex[:8]}")
    yield holder
    holder.index.client.drop_collection(holder.collection)
    holder.index.close()


ADAPTERS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "milvus_lite", id="milvus-lite",
        marks=pytest.mark.skipif(not HAVE_LITE, reason="milvus_lite / pymilvus not installed"),
    ),
    pytest.param("milvus_server", id="milvus-server"),
]


@pytest.fixture(params=ADAPTERS)
def vectors(request, tmp_path) -> Iterator[Harness]:
    if request.param == "sqlite":
        path = tmp_path / "vectors.sqlite3"
        harness = Harness(lambda dim: SqliteVectors(path, dim), SqliteVectors(path, DIM), shared=False)
        yield harness
        harness.index.close()
        return
    holder: _ModuleMilvus = request.getfixturevalue(request.param)

    def opener(dim: int) -> VectorIndex:
        index = holder.open(dim)
        if dim == DIM:
            holder.index = index  # a reopen replaces the module's adapter
        return index

    yield Harness(opener, holder.index, shared=True)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


# -- the port ---------------------------------------------------------------------------------------
def test_adapter_satisfies_the_port(vectors: Harness) -> None:
    assert isinstance(vectors.index, VectorIndex)
    assert vectors.index.dimension == DIM
    assert vectors.index.engine in {"sqlite", "milvus"}
    vectors.index.ping()


def test_upsert_then_search_finds_the_chain_first_sorted_descending(vectors: Harness, rng) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 20)
    for i, vector in enumerate(data):
        index.upsert(scope, f"chn_{i:02d}", vector)
    assert index.count(scope) == 20

    hits = index.search(scope, data[5], limit=10)
    assert len(hits) == 10
    assert hits[0].chain_id == "chn_05"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    similarities = [h.similarity for h in hits]
    assert similarities == sorted(similarities, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in similarities)
    # The similarity is the cosine itself (sign and scale), not a distance.
    expected = sorted((float(data[i] @ data[5]) for i in range(20)), reverse=True)[:10]
    assert similarities == pytest.approx(expected, abs=1e-4)

    assert len(index.search(scope, data[0], limit=100)) == 20  # limit above the user's count
    assert index.search(scope, data[0], limit=0) == []


def test_upsert_many_writes_every_vector_and_checks_lengths(vectors: Harness, rng) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 12)
    index.upsert_many(scope, [f"evt_{i:02d}" for i in range(12)], data)
    assert index.count(scope) == 12
    assert index.search(scope, data[7], limit=1)[0].chain_id == "evt_07"
    index.upsert_many(scope, ["evt_07"], data[:1])  # replaces, as upsert does
    assert index.count(scope) == 12 and index.search(scope, data[0], limit=2)[1].chain_id in {"evt_00", "evt_07"}
    with pytest.raises(ValueError, match="differ in length"):
        index.upsert_many(scope, ["a", "b"], data[:1])


def test_similarity_is_cosine_sign_and_scale(vectors: Harness) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    e0 = np.zeros(DIM, dtype=np.float32)
    e0[0] = 1.0
    e1 = np.zeros(DIM, dtype=np.float32)
    e1[1] = 1.0
    diagonal = (e0 + e1) / np.sqrt(2)
    index.upsert(scope, "same", e0)
    index.upsert(scope, "opposite", -e0)
    index.upsert(scope, "orthogonal", e1)
    index.upsert(scope, "diagonal", diagonal)
    hits = dict(index.search(scope, e0, limit=4))
    assert hits["same"] == pytest.approx(1.0, abs=1e-5)
    assert hits["diagonal"] == pytest.approx(np.sqrt(0.5), abs=1e-5)
    assert hits["orthogonal"] == pytest.approx(0.0, abs=1e-5)
    assert hits["opposite"] == pytest.approx(-1.0, abs=1e-5)
    # An unnormalised query is the same direction.
    assert index.search(scope, 3 * e0, limit=1)[0].chain_id == "same"


def test_similarities_score_exactly_the_named_ids_of_the_user(vectors: Harness) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    other_user = UserScope(tenant_id=scope.tenant_id, user_id="u2")
    other_tenant = UserScope(tenant_id=_tenant(), user_id="u1")
    e0 = np.zeros(DIM, dtype=np.float32)
    e0[0] = 1.0
    e1 = np.zeros(DIM, dtype=np.float32)
    e1[1] = 1.0
    index.upsert_many(scope, ["same", "opposite", "orthogonal"], [e0, -e0, e1])
    index.upsert(other_user, "theirs", e0)
    index.upsert(other_tenant, "foreign", e0)
    found = index.similarities(scope, 2 * e0, ["opposite", "same", "missing", "theirs", "foreign", "same"])
    assert set(found) == {"same", "opposite"}  # no vector, another user's and another tenant's: left out
    assert found["same"] == pytest.approx(1.0, abs=1e-5)
    assert found["opposite"] == pytest.approx(-1.0, abs=1e-5)
    assert index.similarities(scope, e0, ["orthogonal"])["orthogonal"] == pytest.approx(0.0, abs=1e-5)
    assert index.similarities(scope, e0, []) == {}
    assert index.similarities(other_user, e0, ["same"]) == {}


def test_vectors_of_returns_the_stored_vectors_of_the_named_ids_of_the_user(vectors: Harness, rng) -> None:
    """The pipeline reuses stored vectors instead of embedding a text twice (issue 15)."""
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    other_user = UserScope(tenant_id=scope.tenant_id, user_id="u2")
    other_tenant = UserScope(tenant_id=_tenant(), user_id="u1")
    mine = _unit(rng, 2)
    index.upsert_many(scope, ["a", "b"], mine)
    index.upsert(other_user, "theirs", _unit(rng)[0])
    index.upsert(other_tenant, "foreign", _unit(rng)[0])
    found = index.vectors_of(scope, ["b", "missing", "theirs", "foreign", "a", "b"])
    assert set(found) == {"a", "b"}
    assert np.allclose(found["a"], mine[0], atol=1e-5) and np.allclose(found["b"], mine[1], atol=1e-5)
    assert index.vectors_of(scope, []) == {}
    assert index.vectors_of(other_user, ["a"]) == {}


def test_search_of_an_empty_user_is_empty(vectors: Harness, rng) -> None:
    scope = UserScope(tenant_id=_tenant(), user_id="nobody")
    assert vectors.index.search(scope, _unit(rng)[0], limit=5) == []
    assert vectors.index.count(scope) == 0


def test_upsert_of_the_same_chain_replaces_its_vector(vectors: Harness, rng) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    old, new = _unit(rng, 2)
    index.upsert(scope, "chn_a", old)
    index.upsert(scope, "chn_a", new)
    assert index.count(scope) == 1
    hits = index.search(scope, new, limit=5)
    assert [h.chain_id for h in hits] == ["chn_a"]
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert index.search(scope, old, limit=5)[0].similarity == pytest.approx(float(old @ new), abs=1e-5)


def test_delete_removes_only_the_named_chains_and_counts_what_existed(vectors: Harness, rng) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 3)
    for name, vector in zip(["c1", "c2", "c3"], data):
        index.upsert(scope, name, vector)
    assert index.delete(scope, ["c1", "c2", "never-existed"]) == 2
    assert index.count(scope) == 1
    assert [h.chain_id for h in index.search(scope, data[0], limit=5)] == ["c3"]
    assert index.delete(scope, ["c1"]) == 0
    assert index.delete(scope, []) == 0


def test_delete_user_removes_every_vector_of_that_user_only(vectors: Harness, rng) -> None:
    index, tenant = vectors.index, _tenant()
    gone, kept = UserScope(tenant_id=tenant, user_id="gone"), UserScope(tenant_id=tenant, user_id="kept")
    data = _unit(rng, 4)
    for i in range(3):
        index.upsert(gone, f"c{i}", data[i])
    index.upsert(kept, "c0", data[3])
    assert index.delete_user(gone) == 3
    assert index.count(gone) == 0
    assert index.search(gone, data[0], limit=5) == []
    assert index.count(kept) == 1
    assert index.delete_user(gone) == 0
    # The user can start again after a purge.
    index.upsert(gone, "c9", data[1])
    assert [h.chain_id for h in index.search(gone, data[1], limit=5)] == ["c9"]


def test_tenant_is_a_hard_wall(vectors: Harness, rng) -> None:
    index = vectors.index
    a = UserScope(tenant_id=_tenant(), user_id="same-user")
    b = UserScope(tenant_id=_tenant(), user_id="same-user")
    va, vb = _unit(rng, 2)
    index.upsert(a, "same-chain", va)
    index.upsert(b, "same-chain", vb)
    index.upsert(b, "only-in-b", vb)

    hits_a = index.search(a, vb, limit=10)  # B's exact vector as the query
    assert [h.chain_id for h in hits_a] == ["same-chain"]
    assert hits_a[0].similarity == pytest.approx(float(va @ vb), abs=1e-5)
    assert index.count(a) == 1 and index.count(b) == 2

    assert index.delete(a, ["same-chain", "only-in-b"]) == 1
    assert index.count(b) == 2
    assert index.search(b, vb, limit=1)[0].similarity == pytest.approx(1.0, abs=1e-5)
    index.upsert(a, "again", va)
    assert index.delete_user(a) == 1
    assert index.count(b) == 2
    assert {h.chain_id for h in index.search(b, vb, limit=10)} == {"same-chain", "only-in-b"}


def test_another_user_of_the_same_tenant_is_invisible(vectors: Harness, rng) -> None:
    index, tenant = vectors.index, _tenant()
    u1, u2 = UserScope(tenant_id=tenant, user_id="u1"), UserScope(tenant_id=tenant, user_id="u2")
    v1, v2 = _unit(rng, 2)
    index.upsert(u1, "mine", v1)
    index.upsert(u2, "theirs", v2)
    assert [h.chain_id for h in index.search(u1, v2, limit=10)] == ["mine"]
    assert index.delete(u1, ["theirs"]) == 0
    assert index.count(u2) == 1


def test_quote_like_ids_cannot_break_filters(vectors: Harness, rng) -> None:
    index, tenant = vectors.index, _tenant()
    # Every character the scope alphabet allows that means something in a filter language.
    odd = UserScope(tenant_id=tenant, user_id="o-reilly")
    other = UserScope(tenant_id=tenant, user_id="o_reilly.@-x")
    v1, v2 = _unit(rng, 2)
    index.upsert(odd, "a-b.c@d_e", v1)
    index.upsert(other, "a-b.c@d_e", v2)
    assert [(h.chain_id) for h in index.search(odd, v2, limit=10)] == ["a-b.c@d_e"]
    assert index.search(odd, v2, limit=1)[0].similarity == pytest.approx(float(v1 @ v2), abs=1e-5)
    assert index.count(odd) == 1

    hostile = [
        'x" or tenant_id != "',
        "x' || 1==1 || '",
        "a:b",
        "x\\",
        "x) or (1 == 1",
        "",
        "x" * 129,
    ]
    for chain_id in hostile:
        with pytest.raises(ValueError):
            index.upsert(odd, chain_id, v1)
        with pytest.raises(ValueError):
            index.delete(odd, [chain_id])
    # A scope that skipped validation is refused by the adapter too, never spliced into a filter.
    forged = UserScope.model_construct(tenant_id=tenant, user_id='u" or user_id != "')
    for call in (
        lambda: index.search(forged, v1, limit=5),
        lambda: index.count(forged),
        lambda: index.delete_user(forged),
        lambda: index.upsert(forged, "c1", v1),
    ):
        with pytest.raises(ValueError):
            call()
    assert index.count(odd) == 1 and index.count(other) == 1


def test_wrong_length_vectors_are_rejected(vectors: Harness, rng) -> None:
    index, scope = vectors.index, UserScope(tenant_id=_tenant(), user_id="u1")
    with pytest.raises(ValueError):
        index.upsert(scope, "c1", np.ones(DIM + 1, dtype=np.float32))
    with pytest.raises(ValueError):
        index.upsert(scope, "c1", np.ones((2, DIM), dtype=np.float32))
    with pytest.raises(ValueError):
        index.upsert(scope, "c1", np.full(DIM, np.nan, dtype=np.float32))
    with pytest.raises(ValueError):
        index.search(scope, np.ones(DIM - 1, dtype=np.float32), limit=5)
    assert index.count(scope) == 0


def test_dimension_mismatch_names_both_dimensions(vectors: Harness, rng) -> None:
    scope = UserScope(tenant_id=_tenant(), user_id="u1")
    vectors.index.upsert(scope, "c1", _unit(rng)[0])
    with pytest.raises(EmbeddingDimensionMismatch) as caught:
        vectors.open_other(DIM * 2)
    message = str(caught.value)
    assert str(DIM) in message and str(DIM * 2) in message
    assert caught.value.model_dimension == DIM * 2 and caught.value.index_dimension == DIM
    assert vectors.index.count(scope) == 1  # nothing dropped, the adapter in use still works


def test_vectors_persist_across_reopen(vectors: Harness, rng) -> None:
    scope = UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 5)
    for i, vector in enumerate(data):
        vectors.index.upsert(scope, f"c{i}", vector)
    vectors.index.upsert(scope, "c0", data[4])  # a replaced vector persists as replaced
    index = vectors.reopen()
    assert index.count(scope) == 5
    hits = index.search(scope, data[2], limit=3)
    assert hits[0].chain_id == "c2" and hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert {h.chain_id for h in index.search(scope, data[4], limit=2)} == {"c0", "c4"}
    index.upsert(scope, "c5", data[0])  # and it still takes writes
    assert index.count(scope) == 6


# -- SQLite only -----------------------------------------------------------------------------------
def test_sqlite_second_instance_sees_writes_through_the_version_counter(tmp_path, rng) -> None:
    path = tmp_path / "v.sqlite3"
    api, worker = SqliteVectors(path, DIM), SqliteVectors(path, DIM)  # two "processes"
    scope = UserScope(tenant_id=_tenant(), user_id="u1")
    v1, v2, v3 = _unit(rng, 3)
    api.upsert(scope, "c1", v1)
    assert [h.chain_id for h in worker.search(scope, v1, limit=5)] == ["c1"]
    loads = worker.cache_loads
    worker.search(scope, v1, limit=5)
    assert worker.cache_loads == loads and worker.cache_hits >= 1  # served from the cache

    api.upsert(scope, "c1", v2)  # replace, elsewhere: fetched incrementally (only the newer row)
    assert worker.search(scope, v2, limit=1)[0].similarity == pytest.approx(1.0, abs=1e-5)
    api.upsert(scope, "c2", v3)
    assert {h.chain_id for h in worker.search(scope, v3, limit=5)} == {"c1", "c2"}
    assert worker.cache_loads == loads and worker.cache_refreshes == 2
    api.delete(scope, ["c1"])  # a delete elsewhere forces a full reload
    api.upsert(scope, "c9", v1)
    assert {h.chain_id for h in worker.search(scope, v3, limit=5)} == {"c2", "c9"}
    assert worker.cache_loads == loads + 1
    api.delete_user(scope)
    assert worker.search(scope, v3, limit=5) == []
    api.upsert(scope, "c3", v1)  # after a purge, versions still move forward
    assert [h.chain_id for h in worker.search(scope, v1, limit=5)] == ["c3"]

    # Purge then re-write elsewhere while this instance holds the pre-purge matrix: no merge of old rows.
    worker.upsert(scope, "c4", v2)
    assert {h.chain_id for h in worker.search(scope, v2, limit=5)} == {"c3", "c4"}
    api.delete_user(scope)
    api.upsert(scope, "c5", v3)
    assert [h.chain_id for h in worker.search(scope, v2, limit=5)] == ["c5"]
    worker.delete_user(scope)
    api.upsert(scope, "c3", v1)

    # Own writes patch the cache in place and stay correct.
    worker.upsert(scope, "c4", v2)
    worker.delete(scope, ["c3"])
    assert [h.chain_id for h in worker.search(scope, v2, limit=5)] == ["c4"]
    assert [h.chain_id for h in api.search(scope, v2, limit=5)] == ["c4"]
    api.close()
    worker.close()


def _child_upsert(path: str, tenant: str, vector: list[float]) -> None:
    index = SqliteVectors(path, DIM)
    index.upsert(UserScope(tenant_id=tenant, user_id="u1"), "from-child", np.asarray(vector, dtype=np.float32))
    index.close()


def test_sqlite_write_from_another_process_is_seen(tmp_path, rng) -> None:
    path = str(tmp_path / "v.sqlite3")
    index, tenant = SqliteVectors(path, DIM), _tenant()
    scope = UserScope(tenant_id=tenant, user_id="u1")
    v1, v2 = _unit(rng, 2)
    index.upsert(scope, "from-parent", v1)
    assert len(index.search(scope, v1, limit=5)) == 1  # cache warm
    child = multiprocessing.get_context("spawn").Process(target=_child_upsert, args=(path, tenant, v2.tolist()))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    hits = index.search(scope, v2, limit=5)
    assert hits[0].chain_id == "from-child" and hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    index.close()


def test_sqlite_dimension_mismatch_with_rows_but_no_meta(tmp_path, rng) -> None:
    path = tmp_path / "v.sqlite3"
    index = SqliteVectors(path, DIM)
    index.upsert(UserScope(tenant_id=_tenant(), user_id="u1"), "c1", _unit(rng)[0])
    index.close()
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM vector_meta WHERE key = 'dimension'")
    conn.commit()
    conn.close()
    with pytest.raises(EmbeddingDimensionMismatch, match=rf"\b{DIM + 8}-d\b.*\b{DIM}-d\b"):
        SqliteVectors(path, DIM + 8)
    SqliteVectors(path, DIM).close()  # the right dimension opens (and records the dimension again)


# -- Milvus server only ----------------------------------------------------------------------------
def test_milvus_server_reads_load_a_released_collection_again(milvus_server, rng) -> None:
    """After a server restart the collection answers "collection not loaded" (code 101; seen on Milvus
    2.3.5 in tests/production): every read loads it again and answers, instead of failing for good.
    Releasing the collection puts the server in that state without a restart."""
    index: MilvusVectors = milvus_server.index
    scope = UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 3)
    index.upsert_many(scope, ["c0", "c1", "c2"], data)
    for read in (lambda: index.count(scope) == 3,
                 lambda: index.search(scope, data[1], limit=1)[0].chain_id == "c1",
                 lambda: set(index.similarities(scope, data[0], ["c0", "c2"])) == {"c0", "c2"},
                 lambda: set(index.vectors_of(scope, ["c2"])) == {"c2"},
                 lambda: index.delete(scope, ["c2"]) == 1):
        index.client.release_collection(index.collection)
        assert read()
    assert index.count(scope) == 2


class RecordingMilvusClient:
    """A spy, not a fake: forwards every call to the real MilvusClient and records each read's level."""

    def __init__(self, client: object) -> None:
        self._client = client
        self.levels: list[tuple[str, str | None]] = []

    def __getattr__(self, name: str) -> object:
        attribute = getattr(self._client, name)
        if name not in ("search", "query", "get"):
            return attribute

        def recorded(*args: object, **kwargs: object) -> object:
            self.levels.append((name, kwargs.get("consistency_level")))  # type: ignore[arg-type]
            return attribute(*args, **kwargs)
        return recorded


def test_milvus_server_reads_name_their_consistency_per_call(milvus_server_uri, rng) -> None:
    """Issue 17: Strong costs a time tick (~200 ms on 2.3) per read. SearchMemory's reads use the search
    level (Bounded by default); the pipeline's merge search (inside `reading_own_writes`), `vectors_of`,
    `count` and the purge's delete checks are Strong, and each sees a write made just before."""
    collection = f"athena_test_{uuid.uuid4().hex[:8]}"
    index = MilvusVectors(milvus_server_uri, DIM, collection=collection)
    try:
        assert index.search_consistency == "Bounded"
        spy = RecordingMilvusClient(index.client)
        index.client = spy  # type: ignore[assignment]
        scope = UserScope(tenant_id=_tenant(), user_id="u1")
        data = _unit(rng, 4)
        index.upsert_many(scope, ["c0", "c1", "c2"], data[:3])
        with reading_own_writes():  # straight after the write, as chain formation reads
            assert index.search(scope, data[1], limit=1)[0].chain_id == "c1"
        assert set(index.vectors_of(scope, ["c0", "c2"])) == {"c0", "c2"}
        assert index.count(scope) == 3
        index.search(scope, data[0], limit=2)
        index.similarities(scope, data[0], ["c0", "c1"])
        assert index.delete(scope, ["c2"]) == 1
        assert spy.levels == [("search", "Strong"), ("get", "Strong"), ("query", "Strong"),
                              ("search", "Bounded"), ("get", "Bounded"), ("get", "Strong")]
        index.client = spy._client  # type: ignore[assignment]
    finally:
        index.client.drop_collection(collection)
        index.close()


def test_milvus_search_consistency_is_checked_before_connecting() -> None:
    with pytest.raises(ValueError, match="search_consistency"):
        MilvusVectors("http://127.0.0.1:9", DIM, collection="never_created", search_consistency="strong-ish")


def test_sqlite_vectors_of_without_the_users_matrix_reads_by_key(tmp_path, rng) -> None:
    """A worker's segment step looks up a few vectors: it reads them by key and never loads (or keeps) the
    user's whole matrix; a process that holds the matrix answers from it, brought up to date."""
    from athena_core.stores.vectors import sqlite_vectors

    path = tmp_path / "v.sqlite3"
    writer, worker = SqliteVectors(path, DIM), SqliteVectors(path, DIM)
    scope = UserScope(tenant_id=_tenant(), user_id="u1")
    data = _unit(rng, 7)
    writer.upsert_many(scope, [f"c{i}" for i in range(6)], data[:6])
    writer.upsert(UserScope(tenant_id=_tenant(), user_id="u1"), "c9", data[6])  # another tenant's c9
    ids = ["c4", "missing", "c1", "c4", "c9"]
    found = worker.vectors_of(scope, ids)
    assert list(found) == ["c4", "c1"] and worker.cache_loads == 0 and worker._cache_get(worker._key(scope)) is None
    assert np.allclose(found["c4"], data[4], atol=1e-6) and np.allclose(found["c1"], data[1], atol=1e-6)
    many = [f"c{i % 6}" for i in range(sqlite_vectors.ID_BATCH + 3)] + [f"none{i}" for i in range(600)]
    assert set(worker.vectors_of(scope, many)) == {f"c{i}" for i in range(6)}  # more ids than one read takes
    worker.search(scope, data[0], limit=1)  # now it holds the matrix
    writer.upsert(scope, "c1", data[5])
    assert np.allclose(worker.vectors_of(scope, ["c1"])["c1"], data[5], atol=1e-6)
    assert worker.cache_loads == 1 and worker.cache_refreshes == 1
