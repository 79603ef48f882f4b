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


def test_a_large_users_search_answers_alike_before_and_after_its_index_is_built(tmp_path) -> None:
    pytest.importorskip("faiss")
    import time

    from athena_core.models.scope import UserScope
    from athena_core.stores.vectors.sqlite_vectors import SqliteVectors

    rng = np.random.default_rng(5)
    matrix = clustered(rng, COARSE_MIN_ROWS + 500, 0.01)
    store = SqliteVectors(tmp_path / "v.sqlite3", 384)
    scope = UserScope(tenant_id="t", user_id="u")
    store.upsert_many(scope, [f"c{i}" for i in range(len(matrix))], matrix)
    try:
        first = store.search(scope, matrix[7], 50)  # the index is not there yet: the plain scan answers
        deadline = time.monotonic() + 30.0
        while store._load(scope).coarse() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # waits for the background build; not a timing assertion
        assert store._load(scope).coarse() is not None
        assert store.search(scope, matrix[7], 50) == first
    finally:
        store.close()
