"""Exact top-k by cosine over a user's cached matrix, at half the memory traffic (issue 16 item 6).

A scan of a user's float32 matrix is bound by memory bandwidth (200k event vectors × 384 = 307 MB read per
query). When faiss is importable (it comes with the `milvus` extra's milvus-lite), a large user's search
first scans a float16 copy in faiss's SIMD scalar-quantizer index (half the bytes; numpy has no fast
float16 arithmetic: its float16 scan was 30x slower than float32 here), takes the `prefilter` best,
and rescores from the float32 rows. The result is the plain float32 scan's: same rows, order and scores.
The prefilter provably holds the true top k unless the float16 scores are too close to tell apart
(`coarse_error_bound`), and then the plain scan runs instead. Without faiss, the plain scan always runs.

A user with at least `ann_min_rows` rows (`ATHENA_VECTOR_ANN_MIN_ROWS`, 100k) gets an approximate index
instead: an inverted file (IVF, about √n clusters, float16 rows) that scans only the `nprobe` clusters
nearest the query (about 5 % of the rows at 200k), then rescores what it found from the float32 rows. The
scores are exact, the list may miss a row the full scan would rank (recall measured in bench/reads.py and
docs/retrieval.md). A scan that reads every row of a 200k-row user (150 MB a query) is what made the dense
stage grow with the user; this one grows with √n.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# Below this many rows the plain scan is cheap; the float16 copy would only cost memory.
COARSE_MIN_ROWS = 20_000
ANN_MIN_ROWS = 100_000
ANN_NPROBE = 24
# k-means of the IVF: trained on this many rows per cluster, a few iterations (a build at 200k rows takes
# seconds in a background thread, on one core; the clusters only route the scan, the scores are exact)
ANN_TRAIN_PER_CLUSTER = 40
ANN_TRAIN_ITERATIONS = 10


@dataclass(frozen=True)
class CoarseIndex:
    """A faiss index over the first `ntotal` rows of a cached matrix: exact (float16 flat, proven by
    `coarse_error_bound`) or approximate (IVF: the rows of the `nprobe` nearest clusters)."""

    index: object
    approximate: bool
    keep: tuple = field(default=(), repr=False)  # faiss objects the index points to (its quantizer)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)  # type: ignore[attr-defined]


def coarse_index(matrix: np.ndarray, ann_min_rows: int = ANN_MIN_ROWS, nprobe: int = ANN_NPROBE) -> CoarseIndex | None:
    """A float16 faiss index of the rows (None: too few rows, or faiss missing); an IVF one from
    `ann_min_rows` rows (0: never). Built per cached matrix version (about 2 bytes per dimension per row
    more memory)."""
    n, dimension = matrix.shape
    if n < COARSE_MIN_ROWS:
        return None
    try:
        import faiss
    except ImportError:
        return None
    faiss.omp_set_num_threads(1)  # API and workers share the cores (see `exact_scores`)
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    fp16, ip = faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
    if not ann_min_rows or n < ann_min_rows:
        index = faiss.IndexScalarQuantizer(dimension, fp16, ip)
        index.add(rows)
        return CoarseIndex(index, approximate=False)
    clusters = max(16, int(math.sqrt(n)))
    quantizer = faiss.IndexFlatIP(dimension)
    ivf = faiss.IndexIVFScalarQuantizer(quantizer, dimension, clusters, fp16, ip)
    ivf.cp.niter = ANN_TRAIN_ITERATIONS
    sample = np.random.default_rng(0).choice(n, size=min(n, ANN_TRAIN_PER_CLUSTER * clusters), replace=False)
    ivf.train(rows[np.sort(sample)])
    ivf.add(rows)
    ivf.nprobe = max(1, min(int(nprobe), clusters))
    return CoarseIndex(ivf, approximate=True, keep=(quantizer,))


def coarse_error_bound(dimension: int) -> float:
    """How far a float16 row's score can be from its float32 score, for unit vectors: rounding (or
    truncating) to float16 changes each component by at most 2^-10 of itself (2^-24 when subnormal), so
    the dot product by at most 2^-10 · Σ|x_i q_i| + 2^-24 · Σ|q_i| ≤ 2^-10 + 2^-24 √d; plus float32
    summation error of both scans (d · 2^-24 each). Doubled for safety: it only decides what is rescored."""
    return 2.0 * (2.0 ** -10 + 2.0 ** -24 * dimension ** 0.5 + 2.0 * dimension * 2.0 ** -24)


def exact_scores(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    # einsum, not `matrix @ query`: OpenBLAS splits a gemv over threads, and when the cores are busy
    # (API + workers on one machine) waiting for them took 20 ms instead of 0.6 ms at 10k x 384.
    return np.einsum("ij,j->i", matrix, query)


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first."""
    n = scores.shape[0]
    top = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    return top[np.argsort(-scores[top], kind="stable")]


def prefilter_size(k: int) -> int:
    """How many float16 best rows are rescored for a top k: enough that near-ties rarely force a full scan."""
    return max(4 * k, k + 256)


def _coarse_top_k(matrix: np.ndarray, coarse: CoarseIndex, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact top k of `matrix` through its float16 index, or None when the index cannot prove it; through
    an IVF index, the best k of the rows it finds, rescored from float32 (None when it finds fewer than k)."""
    n = matrix.shape[0]
    m = prefilter_size(k)
    if m >= n:
        return None
    one = np.ascontiguousarray(query, dtype=np.float32)[None, :]
    approx, rows = coarse.index.search(one, m)  # type: ignore[attr-defined]
    approx, rows = approx[0], rows[0]
    if coarse.approximate:
        found = rows[rows >= 0]
        if found.size < k:
            return None
        scores = exact_scores(matrix[found], query)
        best = _best(scores, k)
        return found[best], scores[best]
    floor = approx[k - 1] - 2.0 * coarse_error_bound(matrix.shape[1])
    # every row that can be in the true top k scores ≥ floor in float16; all of them are among the m
    # returned when the m-th is below it (rows past m score no higher than the m-th)
    if rows[-1] < 0 or approx[-1] >= floor:
        return None
    candidates = rows[approx >= floor]
    scores = exact_scores(matrix[candidates], query)
    best = _best(scores, k)
    return candidates[best], scores[best]


def top_k(matrix: np.ndarray, coarse: CoarseIndex | None, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(row indices best first, their float32 scores) of the k rows of `matrix` nearest `query` (unit
    vectors). `coarse` is `coarse_index` of the first `coarse.ntotal` rows (None: the plain float32 scan);
    rows past it (appended since it was built) are scanned exactly and merged, which stays exact (a row of
    the prefix in the overall top k is in the prefix's top k), or as approximate as the index."""
    n = matrix.shape[0]
    k = min(int(k), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    covered = 0 if coarse is None else min(coarse.ntotal, n)
    head = _coarse_top_k(matrix[:covered], coarse, query, min(k, covered)) if covered else None
    if head is None:
        scores = exact_scores(matrix, query)
        top = _best(scores, k)
        return top, scores[top]
    rows, scores = head
    if covered < n:
        rows = np.concatenate([rows, np.arange(covered, n)])
        scores = np.concatenate([scores, exact_scores(matrix[covered:], query)])
        best = _best(scores, k)
        rows, scores = rows[best], scores[best]
    return rows, scores
