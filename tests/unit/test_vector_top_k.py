"""The float16-first scan (`stores/vectors/top_k.py`) returns what the plain float32 scan returns."""
from __future__ import annotations

import numpy as np
import pytest

from athena_core.stores.vectors import top_k as top_k_module
from athena_core.stores.vectors.top_k import COARSE_MIN_ROWS, coarse_index, exact_scores, top_k


def unit_rows(rng: np.random.Generator, n: int, d: int = 384) -> np.ndarray:
    m = rng.normal(size=(n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def plain_top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    scores = exact_scores(matrix, query)
    order = np.argsort(-scores, kind="stable")[:k]
    return order.tolist(), scores[order]


def clustered(rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
    """Near-duplicates: 50 noisy copies of each centre (as the reads benchmark seeds), many close scores."""
    centres = unit_rows(rng, n // 50)
    m = np.repeat(centres, 50, axis=0) + rng.normal(0.0, sigma, (n, 384)).astype(np.float32)
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("sigma", [0.01, 0.0002])
def test_same_rows_order_and_scores_as_the_float32_scan(sigma: float, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(7)
    matrix = clustered(rng, COARSE_MIN_ROWS + 1000, sigma)
    coarse = coarse_index(matrix)
    assert coarse is not None
    rescored: list[int] = []  # rows each exact pass of top_k scored: fewer than all = the prefilter was used
    monkeypatch.setattr(top_k_module, "exact_scores", lambda m, q: rescored.append(len(m)) or exact_scores(m, q))
    for _ in range(3):
        query = matrix[rng.integers(len(matrix))] + rng.normal(0.0, 0.05, 384).astype(np.float32)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        for k in (1, 10, 600):
            rows, scores = top_k(matrix, coarse, query, k)
            want_rows, want_scores = plain_top_k(matrix, query, k)
            assert scores.tolist() == want_scores.tolist()  # the float32 values, rank by rank
            if np.unique(want_scores).size == k:  # no exact ties: the very same rows
                assert rows.tolist() == want_rows
    assert min(rescored) < len(matrix)


def test_small_matrices_or_no_index_scan_the_float32_rows() -> None:
    rng = np.random.default_rng(3)
    matrix = unit_rows(rng, 100)
    assert coarse_index(matrix) is None
    rows, scores = top_k(matrix, None, matrix[42], 3)
    assert rows[0] == 42 and scores[0] == pytest.approx(1.0, abs=1e-6)
    assert top_k(matrix, None, matrix[0], 0)[0].size == 0
    assert top_k(matrix, None, matrix[0], 500)[0].size == 100


@pytest.mark.parametrize("ann_min_rows", [0, COARSE_MIN_ROWS])
def test_a_large_users_search_answers_alike_before_and_after_its_index_is_built(tmp_path, ann_min_rows) -> None:
    """Exact float16 index (ann_min_rows 0) or approximate one (the user has ann_min_rows rows): the same
    answer for a query among near-duplicates, before the index exists (plain scan) and after."""
    pytest.importorskip("faiss")
    import time

    from athena_core.models.scope import UserScope
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    rng = np.random.default_rng(5)
    matrix = clustered(rng, COARSE_MIN_ROWS + 500, 0.01)
    store = SqliteVectors(tmp_path / "v.sqlite3", 384, ann_min_rows=ann_min_rows)
    scope = UserScope(tenant_id="t", user_id="u")
    store.upsert_many(scope, [f"c{i}" for i in range(len(matrix))], matrix)
    try:
        first = store.search(scope, matrix[7], 50)  # the index is not there yet: the plain scan answers
        deadline = time.monotonic() + 30.0
        while store._load(scope).coarse(store._build_index) is None and time.monotonic() < deadline:
            time.sleep(0.05)  # waits for the background build; not a timing assertion
        index = store._load(scope).coarse(store._build_index)
        assert index is not None and index.approximate == bool(ann_min_rows)
        assert store.search(scope, matrix[7], 50) == first
    finally:
        store.close()


def test_an_index_of_the_first_rows_plus_an_exact_scan_of_the_rest_is_the_plain_scan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # rows appended since the index was built are scanned exactly and merged with the index's answer
    pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    matrix = clustered(rng, COARSE_MIN_ROWS + 2000, 0.01)
    covered = COARSE_MIN_ROWS + 500
    coarse = coarse_index(matrix[:covered])
    assert coarse is not None and coarse.ntotal == covered
    rescored: list[int] = []
    monkeypatch.setattr(top_k_module, "exact_scores", lambda m, q: rescored.append(len(m)) or exact_scores(m, q))
    for target in (3, covered + 700):  # the best match in the indexed rows, then among the appended ones
        query = matrix[target] + rng.normal(0.0, 0.02, 384).astype(np.float32)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        for k in (1, 10, 300):
            rows, scores = top_k(matrix, coarse, query, k)
            want_rows, want_scores = plain_top_k(matrix, query, k)
            assert scores.tolist() == want_scores.tolist()
            if np.unique(want_scores).size == k:
                assert rows.tolist() == want_rows
    assert len(matrix) - covered in rescored  # the appended rows had their own exact scan


def test_a_version_that_only_appends_shares_its_rows_and_older_versions_keep_theirs(tmp_path) -> None:
    from athena_core.models.scope import UserScope
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    rng = np.random.default_rng(13)
    scope = UserScope(tenant_id="t", user_id="u")
    reader = SqliteVectors(tmp_path / "v.sqlite3", 384)
    writer = SqliteVectors(tmp_path / "v.sqlite3", 384)  # another process: its own cache
    first = unit_rows(rng, 50)
    writer.upsert_many(scope, [f"c{i}" for i in range(50)], first)
    loaded = reader._load(scope)  # loaded into rows with spare room: the first append after a load goes in place
    writer.upsert(scope, "m0", first[0])
    old = reader._load(scope)
    assert old.shared is loaded.shared and old.n == 51 and loaded.n == 50
    assert np.allclose(loaded.matrix, first, atol=1e-6)  # the loaded version still sees its 50 rows only
    more = unit_rows(rng, 5)
    writer.upsert_many(scope, [f"n{i}" for i in range(5)], more)
    new = reader._load(scope)
    assert reader.cache_refreshes == 2 and new.n == 56 and old.n == 51 and loaded.n == 50
    assert new.shared is old.shared  # appended in place, no copy of the rows before
    assert reader.cache_loads == 1
    assert np.allclose(new.matrix[51:], more, atol=1e-6) and np.allclose(old.matrix[:50], first, atol=1e-6)
    assert reader.search(scope, more[2], 1)[0].chain_id == "n2"
    assert reader.similarities(scope, more[4], ["n4", "c0"])["n4"] == pytest.approx(1.0, abs=1e-6)
    assert old.position("n4") is None and new.position("n4") == 55
    writer.upsert_many(scope, ["c5", "n0"], [first[5], more[0]])  # re-indexed, same vectors: nothing copied
    assert reader._load(scope).shared is new.shared
    replacement = unit_rows(rng, 1)[0]
    writer.upsert(scope, "c3", replacement)  # a replaced row: a new copy, the older versions unchanged
    newest = reader._load(scope)
    assert newest.shared is not new.shared and newest.n == 56
    assert np.allclose(newest.matrix[3], replacement, atol=1e-6) and np.allclose(new.matrix[3], first[3], atol=1e-6)
    assert np.allclose(reader.vectors_of(scope, ["c3"])["c3"], replacement, atol=1e-6)
    writer.delete(scope, ["c0", "n1"])  # deletes: a new copy without them
    after = reader._load(scope)
    assert after.n == 54 and after.position("c0") is None and after.position("n1") is None
    assert reader.search(scope, more[1], 1)[0].chain_id != "n1"
    reader.close()
    writer.close()


def test_a_large_users_search_may_lag_by_the_refresh_interval_but_own_write_reads_never_do(tmp_path) -> None:
    from athena_core.models.scope import UserScope
    from athena_core.stores.vectors.port import reading_own_writes
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    rng = np.random.default_rng(17)
    scope = UserScope(tenant_id="t", user_id="u")
    rows = unit_rows(rng, COARSE_MIN_ROWS, d=16)
    writer = SqliteVectors(tmp_path / "v.sqlite3", 16)
    writer.upsert_many(scope, [f"c{i}" for i in range(len(rows))], rows)
    lagging = SqliteVectors(tmp_path / "v.sqlite3", 16, refresh_interval_s=3600.0)  # an API process
    exact = SqliteVectors(tmp_path / "v.sqlite3", 16, refresh_interval_s=0.0)
    for reader in (lagging, exact):
        reader.search(scope, rows[0], 1)  # cached
    new = unit_rows(rng, 1, d=16)[0]
    writer.upsert(scope, "fresh", new)
    assert lagging.search(scope, new, 1)[0].chain_id != "fresh"  # the cached matrix, younger than the interval
    assert exact.search(scope, new, 1)[0].chain_id == "fresh"
    with reading_own_writes():  # chain formation's merge-candidate search: always the stored version
        assert lagging.search(scope, new, 1)[0].chain_id == "fresh"
    assert "fresh" in lagging.vectors_of(scope, ["fresh"])
    for store in (writer, lagging, exact):
        store.close()


def test_an_approximate_index_for_a_large_user_finds_nearly_what_the_full_scan_finds() -> None:
    """From `ann_min_rows` rows the index is an IVF one: it scans the clusters nearest the query only, so
    it may miss a row; its scores are the float32 ones. On clustered rows (topics of 50 near-duplicates)
    with queries between two topics, its top 100 holds at least 95 % of the full scan's (the two topics'
    rows; past them the full scan's list is rows at cosine ~0, which no index finds by neighbourhood)."""
    pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    matrix = clustered(rng, COARSE_MIN_ROWS + 5000, 0.04)
    ann = coarse_index(matrix, ann_min_rows=COARSE_MIN_ROWS, nprobe=24)
    assert ann is not None and ann.approximate and ann.ntotal == len(matrix)
    assert coarse_index(matrix, ann_min_rows=0) is not None and not coarse_index(matrix, ann_min_rows=0).approximate
    recalls = []
    for _ in range(10):
        a, b = matrix[rng.integers(len(matrix), size=2)]
        query = (a + b + rng.normal(0.0, 0.05, 384)).astype(np.float32)
        query /= np.linalg.norm(query)
        rows, scores = top_k(matrix, ann, query, 100)
        want_rows, _ = plain_top_k(matrix, query, 100)
        assert scores.tolist() == exact_scores(matrix[rows], query).tolist()  # exact scores of what it found
        assert list(scores) == sorted(scores, reverse=True)
        recalls.append(len(set(rows.tolist()) & set(want_rows)) / 100)
    assert np.mean(recalls) >= 0.95, recalls
    one = coarse_index(matrix, ann_min_rows=COARSE_MIN_ROWS, nprobe=1)
    narrow = [len(set(top_k(matrix, one, q, 200)[0].tolist()) & set(plain_top_k(matrix, q, 200)[0])) / 200
              for q in matrix[rng.integers(len(matrix), size=5)]]
    assert min(narrow) > 0  # one cluster still finds the query's own neighbourhood


def test_rows_appended_after_an_approximate_index_are_searched_exactly() -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(12)
    matrix = clustered(rng, COARSE_MIN_ROWS + 2000, 0.04)
    covered = COARSE_MIN_ROWS + 1000
    ann = coarse_index(matrix[:covered], ann_min_rows=COARSE_MIN_ROWS)
    assert ann is not None and ann.ntotal == covered
    target = covered + 500  # a row the index has never seen: its own vector must come back first
    rows, scores = top_k(matrix, ann, matrix[target], 10)
    assert rows[0] == target and scores[0] == pytest.approx(1.0, abs=1e-5)
