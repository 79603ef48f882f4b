"""SQLite adapter of the vector index: the embedded default's chain vectors, cosine search.

Vectors are stored as float32 BLOBs keyed (tenant_id, user_id, chain_id). A search reads only the
user's rows (SPEC S1) and scores them with one matrix-vector product of L2-normalised vectors, which is
the exact cosine similarity; a user with `ann_min_rows` rows or more is searched through an approximate
index that scans only the clusters near the query (`top_k.py`; the scores stay exact).

Several processes may use the same file at once (the API and every Celery worker): SQLite WAL gives
them consistent snapshots and BEGIN IMMEDIATE serialises writers. To keep reads fast, each process
caches a user's matrix (ids + stacked float32 array) together with the user's version. Every write bumps
that version in the same transaction, so a search checks its cache with one tiny primary-key lookup and
touches the user's rows only when some process (this one or another) changed them:
- this process's own writes patch its cached matrix;
- another process's upserts are fetched incrementally: every row carries the version that wrote it, so
  only rows newer than the cached version are read (one index range scan);
- another process's deletes (archival) force a full reload of that user: the version row records the
  version of the user's last delete.
A patch that only adds rows writes them into the spare capacity of the rows the cached version already
uses (`_Rows`), so a large user under ingest costs a search the new rows, not a copy of the whole matrix
and a new float16 index (before: 0.3–1.7 s per search after each write at 200k+ rows). A replaced or
deleted row copies the matrix, as every patch used to.

Versions come from one global counter that only grows, so deleting a user's version row on purge can
never make a stale cached matrix look current again.
"""
from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from athena_core.models.scope import UserScope
from athena_core.models.errors import EmbeddingDimensionMismatch
from athena_core.observability import metrics
from athena_core.stores.vectors.port import VectorHit, own_writes_required
from athena_core.stores.sqlite_file import SqliteFile
from athena_core.stores.sqlite_one_step import rows_in_one_step
from athena_core.stores.vectors.top_k import (
    ANN_MIN_ROWS, ANN_NPROBE, COARSE_MIN_ROWS, CoarseIndex, coarse_index, exact_scores, top_k,
)
from athena_core.stores.vectors.vector_checks import as_unit_vector, check_id

SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_meta (
    key TEXT PRIMARY KEY,
    value
) WITHOUT ROWID;
-- A rowid table: 1.5 KB vectors would spill to overflow pages in a WITHOUT ROWID table (measured: the
-- file was 2.3x larger and a user's load no faster).
CREATE TABLE IF NOT EXISTS chain_vectors (
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL, chain_id TEXT NOT NULL,
    vector BLOB NOT NULL,
    version INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS chain_vectors_by_scope ON chain_vectors (tenant_id, user_id, chain_id);
CREATE INDEX IF NOT EXISTS chain_vectors_by_version ON chain_vectors (tenant_id, user_id, version);
CREATE TABLE IF NOT EXISTS vector_versions (
    tenant_id TEXT NOT NULL, user_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    deleted_version INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, user_id)
) WITHOUT ROWID;
"""

ID_BATCH = 500  # ids per keyed read (`vectors_of` without the user's matrix), under SQLite's variable limit

# A coarse (float16) index is rebuilt once the rows it does not cover, scanned exactly meanwhile, exceed
# this share of the rows it covers.
COARSE_REBUILD_SHARE = 0.25


class _Rows:
    """The float32 rows of one user's cached matrices, shared by every version that only appended to it.

    Under ingest a large user's cache changes several times a second, almost always by new rows. Copying
    the whole matrix for each (307 MB at 200k event vectors) and rebuilding its float16 index made a search
    after each write take 0.3–1.7 s and the API hold gigabytes. So a version that only adds rows writes
    them into spare capacity here and shares everything before them: rows below `used` never change, a
    version sees the first `n` of them, and the float16 index built over a prefix serves every version at
    least that long (the rows past it are scanned exactly). A replaced or deleted row starts a new `_Rows`.
    """

    __slots__ = ("array", "used", "positions", "coarse", "building", "lock")

    def __init__(self, array: np.ndarray, used: int) -> None:
        self.array = array  # `used` rows, then spare room for rows appended later
        self.used = used
        self.positions: dict[str, int] | None = None  # id -> row, for rows below `used`, built on first use
        self.coarse: CoarseIndex | None = None  # float16 index over the first `coarse.ntotal` rows
        self.building = False
        self.lock = threading.Lock()

    @classmethod
    def copied(cls, head: np.ndarray, tail: np.ndarray, dimension: int) -> "_Rows":
        """New rows: `head` then `tail`, with room for about an eighth more."""
        n = head.shape[0] + tail.shape[0]
        array = np.empty((n + max(1024, n // 8), dimension), dtype=np.float32)
        array[: head.shape[0]] = head
        array[head.shape[0]: n] = tail
        return cls(array, n)

    def append(self, n: int, tail: np.ndarray) -> bool:
        """Write `tail` after the first `n` rows when they are the last written and there is room."""
        with self.lock:
            end = n + tail.shape[0]
            if self.used != n or end > self.array.shape[0]:
                return False
            self.array[n:end] = tail
            self.used = end
            return True


class _Matrix:
    """A user's cached vectors at one version: the first `n` rows of a `_Rows`."""

    __slots__ = ("version", "ids", "n", "shared", "loaded_at")

    def __init__(self, version: int | None, ids: list[str], shared: _Rows) -> None:
        self.version = version
        self.ids = ids
        self.n = len(ids)
        self.shared = shared
        self.loaded_at = time.monotonic()  # when it was last known to be the stored version

    @property
    def matrix(self) -> np.ndarray:
        return self.shared.array[: self.n]

    def coarse(self, build: Callable[[np.ndarray], CoarseIndex | None]) -> CoarseIndex | None:
        """The float16 index over a prefix of these rows (`top_k.py`), or None while there is none. Built
        by `build` in a background thread (about 0.35 s at 200k rows, seconds for an IVF one), one at a time
        per `_Rows`, when there is none or it leaves more than `COARSE_REBUILD_SHARE` of the rows uncovered;
        a search never waits for it."""
        shared = self.shared
        index = shared.coarse
        covered = 0 if index is None else index.ntotal
        if covered > self.n:  # built for a later version of these rows: not ours
            return None
        wants = self.n >= COARSE_MIN_ROWS and (index is None or self.n - covered > COARSE_REBUILD_SHARE * covered)
        if wants and not shared.building:
            shared.building = True
            threading.Thread(target=self._build_coarse, args=(build,), name="vector-coarse-index",
                             daemon=True).start()
        return index

    def _build_coarse(self, build: Callable[[np.ndarray], CoarseIndex | None]) -> None:
        try:
            started = time.thread_time()
            index = build(self.matrix)
            if index is not None:
                kind = "approximate" if index.approximate else "exact"
                metrics.VECTOR_INDEX_BUILDS.labels(kind).inc()
                metrics.VECTOR_INDEX_BUILD_SECONDS.labels(kind).inc(time.thread_time() - started)
            current = self.shared.coarse
            if index is not None and (current is None or index.ntotal > current.ntotal):
                self.shared.coarse = index
        finally:
            self.shared.building = False

    def position(self, chain_id: str) -> int | None:
        """The row of `chain_id` in this version, or None."""
        shared = self.shared
        with shared.lock:
            if shared.positions is None:
                shared.positions = {c: i for i, c in enumerate(self.ids)}
            elif len(shared.positions) < self.n:  # rows appended since the map was built
                shared.positions.update((self.ids[i], i) for i in range(len(shared.positions), self.n))
            row = shared.positions.get(chain_id)
        return row if row is not None and row < self.n else None


class SqliteVectors:
    """Implements `VectorIndex` on one SQLite file (exact search below `ann_min_rows` rows, multi-process safe)."""

    engine = "sqlite"

    def __init__(
        self,
        path: Path | str,
        dimension: int,
        *,
        model_name: str = "configured",
        synchronous: str = "NORMAL",
        cache_max_rows: int = 500_000,
        refresh_interval_s: float = 0.5,
        ann_min_rows: int = ANN_MIN_ROWS,
        ann_nprobe: int = ANN_NPROBE,
    ) -> None:
        if int(dimension) <= 0:
            raise ValueError(f"dimension must be positive, got {dimension}")
        self._db = SqliteFile(path, synchronous)
        self._conn = self._db.conn
        self._write = self._db.write
        self._read = self._db.snapshot
        self.ping = self._db.ping
        self.dimension = int(dimension)
        self.model_name = model_name
        self.cache_max_rows = cache_max_rows
        self._cache: OrderedDict[tuple[str, str], _Matrix] = OrderedDict()
        self._cache_rows = 0
        self._cache_lock = threading.Lock()
        self._user_locks: dict[tuple[str, str], threading.Lock] = {}
        self.refresh_interval_s = refresh_interval_s
        # a user's index: exact float16 below `ann_min_rows` rows, approximate (IVF) from there (0: never)
        self._build_index = partial(coarse_index, ann_min_rows=ann_min_rows, nprobe=ann_nprobe)
        self.cache_hits = 0
        self.cache_loads = 0
        self.cache_refreshes = 0
        self._conn().executescript(SCHEMA)
        self._check_dimension()

    def scrub(self, *, vacuum: bool, wait_s: float) -> str:
        """After a purge: VACUUM and an emptied WAL (`SqliteFile.scrub`)."""
        return self._db.scrub(vacuum=vacuum, wait_s=wait_s)

    def close(self) -> None:
        self._db.close()
        with self._cache_lock:
            self._cache.clear()
            self._cache_rows = 0

    # -- dimension (SPEC S8) -----------------------------------------------------------------------
    def _check_dimension(self) -> None:
        with self._write() as conn:
            row = conn.execute("SELECT value FROM vector_meta WHERE key = 'dimension'").fetchone()
            if row is not None:
                stored = int(row[0])
            else:
                any_row = conn.execute("SELECT length(vector) FROM chain_vectors LIMIT 1").fetchone()
                stored = any_row[0] // 4 if any_row is not None else self.dimension
                if stored == self.dimension:
                    conn.execute("INSERT INTO vector_meta VALUES ('dimension', ?)", (self.dimension,))
                    conn.execute("INSERT OR IGNORE INTO vector_meta VALUES ('generation', 0)")
            if stored != self.dimension:
                raise EmbeddingDimensionMismatch(self.model_name, self.dimension, stored)

    # -- versions ----------------------------------------------------------------------------------
    @staticmethod
    def _bump(conn: sqlite3.Connection, scope: UserScope, deleting: bool = False) -> tuple[int | None, int]:
        """Give the user a fresh version inside the caller's write transaction: (old, new)."""
        row = conn.execute(
            "SELECT version FROM vector_versions WHERE tenant_id = ? AND user_id = ?",
            (scope.tenant_id, scope.user_id),
        ).fetchone()
        new = conn.execute(
            "INSERT INTO vector_meta VALUES ('generation', 1) "
            "ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO vector_versions (tenant_id, user_id, version, deleted_version) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET version = excluded.version, "
            "deleted_version = CASE WHEN ? THEN excluded.version ELSE deleted_version END",
            # A fresh row (first write, or the first after a purge) starts at a delete boundary: a process
            # that cached the user before the purge must reload in full, not merge newer rows into old ones.
            (scope.tenant_id, scope.user_id, new, new, deleting),
        )
        return (None if row is None else row[0]), new

    @staticmethod
    def _key(scope: UserScope) -> tuple[str, str]:
        return (check_id(scope.tenant_id, "tenant_id"), check_id(scope.user_id, "user_id"))

    # -- cache -------------------------------------------------------------------------------------
    def _cache_put(self, key: tuple[str, str], entry: _Matrix) -> None:
        with self._cache_lock:
            old = self._cache.pop(key, None)
            if old is not None:
                self._cache_rows -= len(old.ids)
            if len(entry.ids) > self.cache_max_rows:
                return
            self._cache[key] = entry
            self._cache_rows += len(entry.ids)
            while self._cache_rows > self.cache_max_rows and self._cache:
                _, evicted = self._cache.popitem(last=False)
                self._cache_rows -= len(evicted.ids)

    def _cache_get(self, key: tuple[str, str]) -> _Matrix | None:
        with self._cache_lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._cache.move_to_end(key)
            return entry

    def _cache_drop(self, key: tuple[str, str]) -> None:
        with self._cache_lock:
            old = self._cache.pop(key, None)
            if old is not None:
                self._cache_rows -= len(old.ids)

    def _merge(
        self, entry: _Matrix, version: int | None,
        upserts: dict[str, np.ndarray] | None = None, deletes: set[str] | None = None,
    ) -> _Matrix:
        """A new cache entry: `entry` with these rows replaced/added and removed (entry is not modified).
        Only new rows: appended in place when `entry` is the newest version of its rows (`_Rows`)."""
        upserts = upserts or {}
        removed = {c for c in deletes or () if entry.position(c) is not None}
        rows = {c: entry.position(c) for c in upserts}
        # re-indexing a text gives the very same vector (formation re-indexes the events of its run): no change
        replaced = {c: v for c, v in upserts.items()
                    if rows[c] is not None and not np.array_equal(entry.matrix[rows[c]], v)}
        added = [(c, v) for c, v in upserts.items() if rows[c] is None]
        tail = np.stack([v for _, v in added]).astype(np.float32, copy=False) if added else \
            np.zeros((0, self.dimension), dtype=np.float32)
        if not removed and not replaced:
            if not added:
                return _Matrix(version, entry.ids, entry.shared)
            ids = entry.ids + [c for c, _ in added]
            if entry.shared.append(entry.n, tail):
                return _Matrix(version, ids, entry.shared)
            metrics.VECTOR_ROWS_COPIED.labels("grown").inc()
            return _Matrix(version, ids, _Rows.copied(entry.matrix, tail, self.dimension))
        if removed:
            keep = [i for i, c in enumerate(entry.ids) if c not in removed]
            ids, head = [entry.ids[i] for i in keep], entry.matrix[keep]
            where: dict[str, int] | None = {c: i for i, c in enumerate(ids)} if replaced else {}
        else:
            ids, head, where = entry.ids, entry.matrix, None
        metrics.VECTOR_ROWS_COPIED.labels("removed" if removed else "replaced").inc()
        shared = _Rows.copied(head, tail, self.dimension)
        for chain_id, vector in replaced.items():
            row = entry.position(chain_id) if where is None else where.get(chain_id)
            if row is not None:
                shared.array[row] = vector
        return _Matrix(version, ids + [c for c, _ in added], shared)

    def _patch_after_write(
        self, key: tuple[str, str], old: int | None, new: int,
        upserts: dict[str, np.ndarray] | None = None, deletes: set[str] | None = None,
    ) -> None:
        """Apply this process's own write to its cached matrix when the cache was current before it."""
        entry = self._cache_get(key)
        if entry is None:
            return
        if entry.version != old:
            self._cache_drop(key)
            return
        self._cache_put(key, self._merge(entry, new, upserts, deletes))

    def _load(self, scope: UserScope, fresh: bool = True) -> _Matrix:
        """The user's cached matrix, brought up to the stored version. One thread at a time brings a user's
        matrix up to date (the others wait, then find it current), so concurrent searches never each copy
        it. A search (`fresh=False`, outside `reading_own_writes()`) of a large user may get the cached
        matrix as it was up to `refresh_interval_s` ago, or while another thread refreshes it: under
        ingest its version changes several times a second, and the new events are found meanwhile by the
        lexical index and the STM window (SPEC S2 freshness), as on Milvus's Bounded searches."""
        key = self._key(scope)
        entry = self._cache_get(key)
        lock = self._user_lock(key)
        if entry is not None and not fresh and not own_writes_required() and entry.n >= COARSE_MIN_ROWS:
            if time.monotonic() - entry.loaded_at < self.refresh_interval_s or lock.locked():
                self.cache_hits += 1
                return entry
        with lock:
            return self._bring_up_to_date(key)

    def _user_lock(self, key: tuple[str, str]) -> threading.Lock:
        with self._cache_lock:
            return self._user_locks.setdefault(key, threading.Lock())

    def _bring_up_to_date(self, key: tuple[str, str]) -> _Matrix:
        conn = self._conn()
        row = conn.execute(
            "SELECT version FROM vector_versions WHERE tenant_id = ? AND user_id = ?", key
        ).fetchone()
        version = None if row is None else row[0]
        entry = self._cache_get(key)
        if entry is not None and entry.version == version:
            self.cache_hits += 1
            entry.loaded_at = time.monotonic()
            return entry
        with self._read() as conn:
            row = conn.execute(
                "SELECT version, deleted_version FROM vector_versions WHERE tenant_id = ? AND user_id = ?", key
            ).fetchone()
            version, deleted_version = (None, None) if row is None else row
            if (
                entry is not None and entry.version is not None and version is not None
                and deleted_version <= entry.version < version
            ):
                # Only upserts happened since the cached version: read just the newer rows, in one step (a
                # search refreshes beside the API's other threads: sqlite_one_step; vectors as hex text)
                rows = rows_in_one_step(
                    conn, "SELECT chain_id, vector FROM chain_vectors WHERE tenant_id = ? AND user_id = ? "
                    "AND version > ?", (*key, entry.version), ["chain_id", "hex(vector)"],
                )
                newer = {chain_id: np.frombuffer(bytes.fromhex(vector), dtype=np.float32) for chain_id, vector in rows}
                self.cache_refreshes += 1
                entry = self._merge(entry, version, upserts=newer)
                self._cache_put(key, entry)
                return entry
            rows = conn.execute(
                "SELECT chain_id, vector FROM chain_vectors WHERE tenant_id = ? AND user_id = ?", key
            ).fetchall()
        self.cache_loads += 1
        ids = [r[0] for r in rows]
        if rows:
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), self.dimension)
        else:
            matrix = np.zeros((0, self.dimension), dtype=np.float32)
        # copied into writable rows with spare room: the first rows written after the load (a user who
        # writes while reading) are appended in place, and the float16 index built over these rows keeps
        # serving; read-only rows would be copied again and their index rebuilt (seconds of a core at 300k)
        entry = _Matrix(version, ids, _Rows.copied(matrix, matrix[:0], self.dimension))
        self._cache_put(key, entry)
        return entry

    # -- the port ----------------------------------------------------------------------------------
    def upsert(self, scope: UserScope, chain_id: str, vector: np.ndarray) -> None:
        self.upsert_many(scope, [chain_id], [vector])

    def upsert_many(self, scope: UserScope, chain_ids: list[str], vectors: object) -> None:
        """Insert or replace several of the user's chain vectors in one transaction (bulk re-index)."""
        key = self._key(scope)
        if len(chain_ids) != len(vectors):  # type: ignore[arg-type]
            raise ValueError("chain_ids and vectors differ in length")
        upserts: dict[str, np.ndarray] = {}
        for chain_id, vector in zip(chain_ids, vectors):  # type: ignore[call-overload]
            upserts[check_id(chain_id, "chain_id")] = as_unit_vector(vector, self.dimension)
        if not upserts:
            return
        with self._write() as conn:
            old, new = self._bump(conn, scope)
            conn.executemany(
                "INSERT INTO chain_vectors (tenant_id, user_id, chain_id, vector, version) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant_id, user_id, chain_id) DO UPDATE SET vector = excluded.vector, "
                "version = excluded.version",
                [(key[0], key[1], c, v.tobytes(), new) for c, v in upserts.items()],
            )
        self._patch_after_write(key, old, new, upserts=upserts)

    def delete(self, scope: UserScope, chain_ids: list[str]) -> int:
        key = self._key(scope)
        wanted = {check_id(c, "chain_id") for c in chain_ids}
        if not wanted:
            return 0
        with self._write() as conn:
            removed = 0
            for chain_id in wanted:
                removed += conn.execute(
                    "DELETE FROM chain_vectors WHERE tenant_id = ? AND user_id = ? AND chain_id = ?",
                    (key[0], key[1], chain_id),
                ).rowcount
            if removed == 0:
                return 0
            old, new = self._bump(conn, scope, deleting=True)
        self._patch_after_write(key, old, new, deletes=wanted)
        return removed

    def delete_user(self, scope: UserScope) -> int:
        key = self._key(scope)
        with self._write() as conn:
            removed = conn.execute(
                "DELETE FROM chain_vectors WHERE tenant_id = ? AND user_id = ?", key
            ).rowcount
            # The row goes (purge leaves nothing of the user); other processes see "no version", which
            # differs from any version they cached, and later writes take a newer global generation.
            conn.execute("DELETE FROM vector_versions WHERE tenant_id = ? AND user_id = ?", key)
        self._cache_drop(key)
        with self._cache_lock:
            self._user_locks.pop(key, None)
        return removed

    def search(self, scope: UserScope, vector: np.ndarray, limit: int) -> list[VectorHit]:
        query = as_unit_vector(vector, self.dimension)
        if limit <= 0:
            return []
        entry = self._load(scope, fresh=False)
        if not entry.ids:
            return []
        top, scores = top_k(entry.matrix, entry.coarse(self._build_index), query, limit)
        return [VectorHit(entry.ids[i], _clamp(float(score))) for i, score in zip(top.tolist(), scores.tolist())]

    def similarities(self, scope: UserScope, vector: np.ndarray, chain_ids: list[str]) -> dict[str, float]:
        query = as_unit_vector(vector, self.dimension)
        if not chain_ids:
            return {}
        entry = self._load(scope, fresh=False)
        found = [(c, row) for c in dict.fromkeys(chain_ids) if (row := entry.position(c)) is not None]
        if not found:
            return {}
        scores = exact_scores(entry.matrix[[i for _, i in found]], query)
        return {c: _clamp(float(score)) for (c, _), score in zip(found, scores)}

    def vectors_of(self, scope: UserScope, chain_ids: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these ids. From the user's matrix when this process holds it (brought up to
        date); else read by key: a worker's segment step looks up a few event vectors, and loading a large
        user's whole matrix for them took 15 % of its CPU at 200k event vectors and kept them in memory."""
        if not chain_ids:
            return {}
        key = self._key(scope)
        if self._cache_get(key) is None:
            return self._read_by_id(key, list(dict.fromkeys(chain_ids)))
        entry = self._load(scope)
        matrix = entry.matrix
        return {c: matrix[row] for c in dict.fromkeys(chain_ids) if (row := entry.position(c)) is not None}

    def _read_by_id(self, key: tuple[str, str], ids: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        conn = self._conn()
        for start in range(0, len(ids), ID_BATCH):
            part = ids[start:start + ID_BATCH]
            rows = conn.execute(
                "SELECT chain_id, vector FROM chain_vectors WHERE tenant_id = ? AND user_id = ? "
                f"AND chain_id IN ({','.join('?' * len(part))})", (*key, *part),
            ).fetchall()
            found.update((chain_id, np.frombuffer(vector, dtype=np.float32).copy()) for chain_id, vector in rows)
        return {c: found[c] for c in ids if c in found}

    def count(self, scope: UserScope) -> int:
        key = self._key(scope)
        return self._conn().execute(
            "SELECT COUNT(*) FROM chain_vectors WHERE tenant_id = ? AND user_id = ?", key
        ).fetchone()[0]


def _clamp(similarity: float) -> float:
    """float32 rounding can put a self-match at 1.0000001; the port promises [-1, 1]."""
    if math.isnan(similarity):
        return 0.0
    return max(-1.0, min(1.0, similarity))
