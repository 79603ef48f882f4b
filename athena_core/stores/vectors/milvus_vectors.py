"""Milvus adapter of the vector index: a Milvus server in production, Milvus Lite when embedded.

One collection holds every tenant's chain vectors. `pk` = "tenant:user:chain" (scope and chain ids can
never contain ':'), `tenant_id` is the partition key, and every search and delete is filtered on
tenant_id AND user_id (SPEC S1); a read of named rows (`similarities`, `vectors_of`) is by the pks it
builds from the scope. COSINE metric: the returned distance *is* the cosine similarity (1 for the same
direction, -1 for the opposite one).

Filters use Milvus expression templates (`filter_params`, bound values) when the engine supports them
(Milvus server 2.5+). Milvus Lite 3.x does not parse templates, so there the values are rendered as
string literals; they are first checked against the scope id alphabet (`[A-Za-z0-9_.@-]`, which has
no quote, backslash or space) and escaped as well, so an id can never change the expression.

Milvus server facts this adapter handles (found on a real Milvus 2.3.5 standalone server, issue 17):
- `upsert` on a collection with a partition key routes the row to the wrong partition before 2.4: the
  row exists (a query by pk finds it) but every tenant-filtered search and count misses it. On such
  servers a replace is `delete` by pk then `insert`, under the writer lock (what 2.3's upsert does
  inside the server anyway: it was never atomic there);
- no expression templates before 2.5 (literals, as for Lite);
- consistency is chosen per call, not per collection (the default, Bounded, missed a row inserted just
  before; Strong waits for the next time tick, ~200 ms on 2.3, p50 195 ms a search at 10k rows):
  * Strong for reads that must see every write already made, by any process: the pipeline's merge
    candidates (`search` inside `reading_own_writes()`, which chain formation opens), `vectors_of`
    (a vector stored by arrival indexing in another worker), `count` and the purge's `delete` checks;
  * `search_consistency` (Bounded by default) for SearchMemory's `search` and `similarities`. Bounded
    on Milvus 2.3 guarantees rows older than `common.gracefulTime` (5000 ms in 2.3's milvus.yaml) and
    in practice serves whatever the query node has consumed (a time tick, 200 ms, behind). SPEC S2's
    "searchable within 2 s" does not rest on it: a fresh event is found through the lexical index
    (written at arrival) and the STM window, and its vector joins within a tick. Set the server's
    `common.gracefulTime` to 1000 (docs/deploy.md) to make the vector part's bound 1 s as well.
  Session is not used for the pipeline: pymilvus keeps the session timestamp per process, and the
  pipeline's writes come from other worker processes;
- after a server restart a read may answer "collection not loaded" (code 101): every read loads the
  collection again and retries once (`_loaded`), instead of failing until this process restarts.

Milvus Lite facts this adapter handles (see ENV-NOTES):
- a released collection after reopen: `load_collection` at start;
- data in the memtable is searched by brute force: `flush` after writes (Lite only by default: a server
  rate-limits flush, and its growing segments are searchable anyway);
- `delete` returns every id it was given, existing or not: the count comes from a `get` first, and the
  returned ids are never logged;
- one process per data directory: `close()` stops this process's embedded server so the directory is
  free again. Writers from several processes must go through one writer (ENV-NOTES: concurrent writers
  through `milvus-lite server` lost data).
"""
from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np

from athena_core.models.scope import UserScope
from athena_core.models.errors import EmbeddingDimensionMismatch
from athena_core.stores.vectors.port import VectorHit, own_writes_required
from athena_core.stores.vectors.vector_checks import as_unit_vector, check_id

_SERVER_SCHEMES = ("http://", "https://", "tcp://", "unix:")
STRONG = "Strong"  # read-your-writes across processes: waits for the server's next time tick
SEARCH_LEVELS = ("Strong", "Bounded", "Session", "Eventually")
T = TypeVar("T")

# Milvus Lite embedded servers of this process, by data directory, with how many adapters use each.
_LITE_USERS: dict[str, int] = {}
_LITE_LOCK = threading.Lock()


def _literal(value: str) -> str:
    """A Milvus string literal of an id already checked against the id alphabet (escaped anyway)."""
    check_id(value, "filter value")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@contextmanager
def _quiet_pymilvus() -> Iterator[None]:
    """pymilvus logs every failed RPC at ERROR with a traceback; silence it for expected failures."""
    logger = logging.getLogger("pymilvus")
    previous = logger.disabled
    logger.disabled = True
    decorators = logging.getLogger("pymilvus.decorators")
    previous_decorators = decorators.disabled
    decorators.disabled = True
    try:
        yield
    finally:
        logger.disabled = previous
        decorators.disabled = previous_decorators


def lite_data_dir(uri: str) -> str:
    """The Milvus Lite data directory for a local path (pymilvus needs it to end in `.db`)."""
    path = Path(uri).expanduser()
    if path.suffix != ".db":
        path = path / "milvus.db"
    return str(path.resolve())


class MilvusVectors:
    """Implements `VectorIndex` with `pymilvus.MilvusClient` (Milvus server or Milvus Lite)."""

    engine = "milvus"

    def __init__(
        self,
        uri: str,
        dimension: int,
        collection: str = "athena_chains",
        token: str | None = None,
        *,
        model_name: str = "configured",
        index_type: str = "AUTOINDEX",
        flush_after_write: bool | None = None,
        timeout: float | None = 30.0,
        search_consistency: str = "Bounded",
    ) -> None:
        from pymilvus import MilvusClient

        if int(dimension) <= 0:
            raise ValueError(f"dimension must be positive, got {dimension}")
        if search_consistency not in SEARCH_LEVELS:
            raise ValueError(f"search_consistency must be one of {SEARCH_LEVELS}, got {search_consistency!r}")
        self.search_consistency = search_consistency
        self.dimension = int(dimension)
        self.collection = collection
        self.model_name = model_name
        self.index_type = index_type
        self.timeout = timeout
        self.is_lite = not uri.startswith(_SERVER_SCHEMES)
        self.flush_after_write = self.is_lite if flush_after_write is None else flush_after_write
        self._lite_dir: str | None = None
        if self.is_lite:
            self._lite_dir = lite_data_dir(uri)
            Path(self._lite_dir).parent.mkdir(parents=True, exist_ok=True)
            self.uri = self._lite_dir
        else:
            self.uri = uri
        self._write_lock = threading.Lock()  # Milvus wants writes to one collection serialised
        kwargs = {"uri": self.uri}
        if token:
            kwargs["token"] = token
        self.client = MilvusClient(**kwargs)
        if self._lite_dir is not None:
            with _LITE_LOCK:
                _LITE_USERS[self._lite_dir] = _LITE_USERS.get(self._lite_dir, 0) + 1
        try:
            self._ensure_collection()
            self.client.load_collection(self.collection, timeout=self.timeout)
            self.bound_filters = self._templates_supported()
            self.native_upsert = self.is_lite or self._server_version() >= (2, 4)
        except BaseException:
            self.close()
            raise

    # -- setup -------------------------------------------------------------------------------------
    def _ensure_collection(self) -> None:
        from pymilvus import DataType, MilvusClient

        if self.client.has_collection(self.collection, timeout=self.timeout):
            stored = self._stored_dimension()
            if stored != self.dimension:
                raise EmbeddingDimensionMismatch(self.model_name, self.dimension, stored)
            return
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=400)
        schema.add_field("tenant_id", DataType.VARCHAR, max_length=128, is_partition_key=True)
        schema.add_field("user_id", DataType.VARCHAR, max_length=128)
        schema.add_field("chain_id", DataType.VARCHAR, max_length=128)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dimension)
        index_params = self.client.prepare_index_params()
        index_params.add_index(field_name="vector", index_type=self.index_type, metric_type="COSINE")
        # The collection's default level only serves callers that name none; every read here names one.
        self.client.create_collection(
            self.collection, schema=schema, index_params=index_params,
            consistency_level=STRONG, timeout=self.timeout,
        )

    def _stored_dimension(self) -> int:
        description = self.client.describe_collection(self.collection, timeout=self.timeout)
        for field in description.get("fields", []):
            if field.get("name") == "vector":
                return int(field.get("params", {}).get("dim"))
        raise RuntimeError(f"collection {self.collection!r} has no 'vector' field; not an Athena collection")

    def _server_version(self) -> tuple[int, int]:
        """(major, minor) of the server, from e.g. "v2.3.5"; an unreadable answer counts as current."""
        try:
            text = str(self.client.get_server_version(timeout=self.timeout)).lstrip("v")
            major, minor = text.split(".")[:2]
            return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)
        except Exception:  # noqa: BLE001 - a server that cannot say is treated as a current one
            return (99, 0)

    def _templates_supported(self) -> bool:
        """Does this engine bind `filter_params`? (Milvus 2.5+ servers do; Milvus Lite 3.x does not.)"""
        if self.is_lite:
            return False
        try:
            with _quiet_pymilvus():
                self.client.query(
                    self.collection, filter="tenant_id == {t} and user_id == {u}",
                    filter_params={"t": "_probe", "u": "_probe"}, output_fields=["pk"], limit=1,
                    timeout=self.timeout,
                )
            return True
        except Exception:
            return False

    def _scope_filter(self, scope: UserScope) -> tuple[str, dict[str, str]]:
        tenant_id = check_id(scope.tenant_id, "tenant_id")
        user_id = check_id(scope.user_id, "user_id")
        if self.bound_filters:
            return "tenant_id == {t} and user_id == {u}", {"t": tenant_id, "u": user_id}
        return f"tenant_id == {_literal(tenant_id)} and user_id == {_literal(user_id)}", {}

    @staticmethod
    def _pk(scope: UserScope, chain_id: str) -> str:
        return f"{check_id(scope.tenant_id, 'tenant_id')}:{check_id(scope.user_id, 'user_id')}:" \
               f"{check_id(chain_id, 'chain_id')}"

    def _filter_kwargs(self, scope: UserScope) -> dict:
        expression, params = self._scope_filter(scope)
        return {"filter": expression, "filter_params": params} if params else {"filter": expression}

    def _loaded(self, call: Callable[[], T]) -> T:
        """Run a read; a restarted server answers "collection not loaded" (code 101) until the collection is
        loaded again (issue 17: after a Milvus 2.3.5 restart the pipeline dead-lettered its scopes on it):
        load it and try once more."""
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - only the not-loaded answer is handled here
            if getattr(exc, "code", None) != 101 and "not loaded" not in str(exc):
                raise
        self.client.load_collection(self.collection, timeout=self.timeout)
        return call()

    def _search_level(self) -> str:
        """Strong inside `reading_own_writes()` (the pipeline's merge candidates), else `search_consistency`."""
        return STRONG if own_writes_required() else self.search_consistency

    def _after_write(self) -> None:
        if self.flush_after_write:
            self.client.flush(self.collection, timeout=self.timeout)

    # -- lifecycle ---------------------------------------------------------------------------------
    def ping(self) -> None:
        self.client.has_collection(self.collection, timeout=self.timeout)

    def close(self) -> None:
        client, self.client = getattr(self, "client", None), None
        if client is not None:
            client.close()
        if self._lite_dir is not None and client is not None:
            # MilvusClient.close() leaves Lite's in-process server (and its directory lock) running;
            # stop it when the last adapter of this process on that directory closes.
            with _LITE_LOCK:
                users = _LITE_USERS.get(self._lite_dir, 1) - 1
                if users <= 0:
                    _LITE_USERS.pop(self._lite_dir, None)
                else:
                    _LITE_USERS[self._lite_dir] = users
            if users <= 0:
                try:
                    from milvus_lite.server_manager import server_manager_instance
                except ImportError:  # pragma: no cover - Lite is what opened it
                    return
                server_manager_instance.release_server(self._lite_dir)

    # -- the port ----------------------------------------------------------------------------------
    def upsert(self, scope: UserScope, chain_id: str, vector: np.ndarray) -> None:
        self.upsert_many(scope, [chain_id], [vector])

    def upsert_many(self, scope: UserScope, chain_ids: list[str], vectors: object, batch: int = 1000) -> None:
        """Insert or replace several of the user's chain vectors, then flush once (bulk re-index)."""
        if len(chain_ids) != len(vectors):  # type: ignore[arg-type]
            raise ValueError("chain_ids and vectors differ in length")
        rows = {}
        for chain_id, vector in zip(chain_ids, vectors):  # type: ignore[call-overload]
            rows[self._pk(scope, chain_id)] = {
                "pk": self._pk(scope, chain_id), "tenant_id": scope.tenant_id, "user_id": scope.user_id,
                "chain_id": chain_id, "vector": as_unit_vector(vector, self.dimension).tolist(),
            }
        if not rows:
            return
        data = list(rows.values())
        with self._write_lock:
            for start in range(0, len(data), batch):
                part = data[start:start + batch]
                if self.native_upsert:
                    self.client.upsert(self.collection, part, timeout=self.timeout)
                else:  # Milvus < 2.4: upsert misroutes partition-key rows (module docstring)
                    self.client.delete(self.collection, ids=[row["pk"] for row in part], timeout=self.timeout)
                    self.client.insert(self.collection, part, timeout=self.timeout)
            self._after_write()

    def delete(self, scope: UserScope, chain_ids: list[str]) -> int:
        pks = list(dict.fromkeys(self._pk(scope, c) for c in chain_ids))
        if not pks:
            return 0
        with self._write_lock:
            # delete() reports every id it was given, existing or not: count what exists first.
            existing = self._loaded(lambda: self.client.get(self.collection, ids=pks, output_fields=["pk"],
                                                            consistency_level=STRONG, timeout=self.timeout))
            found = [row["pk"] for row in existing]
            if not found:
                return 0
            self.client.delete(self.collection, ids=found, timeout=self.timeout)
            self._after_write()
        return len(found)

    def delete_user(self, scope: UserScope) -> int:
        with self._write_lock:
            removed = self.count(scope)
            if removed == 0:
                return 0
            # The result lists every deleted id: never log or return it.
            self.client.delete(self.collection, timeout=self.timeout, **self._filter_kwargs(scope))
            self._after_write()
        return removed

    def search(self, scope: UserScope, vector: np.ndarray, limit: int) -> list[VectorHit]:
        query = as_unit_vector(vector, self.dimension)
        if limit <= 0:
            return []
        level = self._search_level()
        result = self._loaded(lambda: self.client.search(
            self.collection, data=[query.tolist()], limit=int(limit), output_fields=["chain_id"],
            search_params={"metric_type": "COSINE"}, consistency_level=level, timeout=self.timeout,
            **self._filter_kwargs(scope),
        ))
        hits = [
            VectorHit(hit["entity"]["chain_id"], _clamp(float(hit["distance"])))
            for hit in (result[0] if result else [])
        ]
        hits.sort(key=lambda h: -h.similarity)
        return hits

    def similarities(self, scope: UserScope, vector: np.ndarray, chain_ids: list[str]) -> dict[str, float]:
        """The named rows fetched by primary key (which carries the scope: another user's row has another
        pk), scored here: stored vectors are unit length, so the cosine is a dot product. A search filtered
        on `chain_id in [...]` gave the same scores but evaluated the filter over the user's rows: on a
        2.3.5 server, p50 8.5 ms against 4 ms at 300k rows; SearchMemory's similarities stage at a 1M-event
        user p50 54 ms before, 17 ms after (docs/retrieval.md, twelfth round)."""
        query = as_unit_vector(vector, self.dimension)
        stored = self._stored_vectors(scope, chain_ids, self._search_level())
        if not stored:
            return {}
        scores = np.stack(list(stored.values())) @ query
        return {chain_id: _clamp(float(score)) for chain_id, score in zip(stored, scores)}

    def vectors_of(self, scope: UserScope, chain_ids: list[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id. Strong: they were stored by another task, perhaps in another worker
        process, just before."""
        return self._stored_vectors(scope, chain_ids, STRONG)

    def _stored_vectors(self, scope: UserScope, chain_ids: list[str], level: str) -> dict[str, np.ndarray]:
        """The named rows of this scope, fetched by pk (no filter evaluated over the user's rows)."""
        pks = [self._pk(scope, c) for c in dict.fromkeys(chain_ids)]
        if not pks:
            return {}
        rows = self._loaded(lambda: self.client.get(self.collection, ids=pks, output_fields=["chain_id", "vector"],
                                                    consistency_level=level, timeout=self.timeout))
        return {row["chain_id"]: np.asarray(row["vector"], dtype=np.float32) for row in rows}

    def count(self, scope: UserScope) -> int:
        rows = self._loaded(lambda: self.client.query(
            self.collection, output_fields=["count(*)"], consistency_level=STRONG, timeout=self.timeout,
            **self._filter_kwargs(scope),
        ))
        return int(rows[0]["count(*)"]) if rows else 0


def _clamp(similarity: float) -> float:
    """COSINE distance of a self-match comes back as 1.0000001; the port promises [-1, 1]."""
    if math.isnan(similarity):
        return 0.0
    return max(-1.0, min(1.0, similarity))
