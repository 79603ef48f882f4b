"""User purge (SPEC S7.4): erase a user's memory from every store, verify it, and wipe what the deletion
leaves on disk; say what was removed where.

1. Fence: `fence:purged:{tenant}:{user}` records the purge time first (`ATHENA_PURGE_FENCE_TTL_S`), so
   any task that began before it writes nothing for the user (they check it under the user's write lock);
   it is moved to the end of the deletion (still under the lock), so a task that began while the purge
   waited for the lock is fenced too.
2. Lock: the user's write lock (`chains:{tenant}:{user}`, the lock every chain, index and graph writer
   holds), waited for `ATHENA_PURGE_LOCK_WAIT_S`; a run mid-write finishes first. Not had in time →
   `PurgeBusy` (503 + Retry-After): nothing was deleted yet and the purge can simply be sent again.
3. Delete under the lock, then verify: count what is left of the user in every store; anything left is
   deleted in a second pass, and anything left after that is an error (`PurgeIncomplete`).
4. Wipe (after the lock): task results naming the user, FTS5 `optimize`, VACUUM and WAL truncation of each
   SQLite file, and a Redis AOF rewrite, so no byte of the user's text stays in the data directory.
Every step is idempotent: a purge interrupted half-way can be re-run and finishes the job.
"""
from __future__ import annotations

import logging
import sqlite3
import time
from typing import Protocol, runtime_checkable

import redis
from pydantic import BaseModel

from athena_core.models.scope import UserScope
from athena_core.retrieval.evidence_index import EvidenceIndex
from athena_core.stores.blobs.contained_path import checked_segment
from athena_core.stores.blobs.port import BlobStore
from athena_core.stores.documents.port import DocumentStore
from athena_core.stores.graph.port import GraphStore
from athena_core.stores.lexical.port import LexicalIndex
from athena_core.stores.vectors.port import VectorIndex
from athena_core.usecases.purge_fence import fence_user, user_write_lock_name
from athena_core.wiring.embedded_redis import rewrite_aof
from athena_core.wiring.redis_keys import TASK_RESULT_PREFIX, user_key_patterns
# The user's write lock is the one the pipeline's writers hold; the purge must hold the same one.
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_core.wiring.settings import Settings

log = logging.getLogger(__name__)


class PurgeStores(Protocol):
    """What a purge acts on: every store of the user's memory, the Redis it coordinates through, and the
    settings (the composition root's `Runtime` is one; the purge does not import it)."""

    settings: Settings
    redis: redis.Redis
    documents: DocumentStore
    vectors: VectorIndex
    event_vectors: VectorIndex
    lexical: LexicalIndex
    graph: GraphStore
    blobs: BlobStore | None
    evidence: EvidenceIndex


class PurgeBusy(Exception):
    """The user's write lock was not free within `ATHENA_PURGE_LOCK_WAIT_S`; nothing was deleted."""

    def __init__(self, scope: UserScope, retry_after_s: int) -> None:
        super().__init__(f"user {scope.tenant_id}:{scope.user_id} is being written; retry the purge")
        self.retry_after_s = retry_after_s


class PurgeIncomplete(RuntimeError):
    """Something of the user was still there after two deletion passes."""

    def __init__(self, scope: UserScope, remaining: dict[str, int]) -> None:
        left = {k: v for k, v in remaining.items() if v}
        super().__init__(f"purge of {scope.tenant_id}:{scope.user_id} left {left} after two passes")
        self.remaining = remaining


@runtime_checkable
class Scrubbable(Protocol):
    """A store whose files live in the data directory and can be wiped after a deletion (SQLite)."""

    def scrub(self, *, vacuum: bool, wait_s: float) -> str: ...


class PurgeReport(BaseModel):
    tenant_id: str
    user_id: str
    documents: dict[str, int]
    vectors: int
    event_vectors: int
    lexical: int
    graph: int
    stm_keys: int
    blobs: bool  # a blob store is configured (its files of the user are in `remaining["blobs"]`)
    task_results: int = 0  # celery-task-meta-* keys naming the user, deleted
    passes: int = 1  # deletion passes: 2 when the first left something (a write racing the purge)
    remaining: dict[str, int] = {}  # what the final verification found of the user, per store: all 0
    scrubbed: dict[str, str] = {}  # per file or server: what was done to wipe freed bytes
    wiped: bool = True  # every wipe step completed (False: see `scrubbed`; re-running the purge retries)


def _user_keys(client: redis.Redis, scope: UserScope) -> list[str]:
    """STM windows, run requests and failure marks (which carry an error text) of the user's agents."""
    keys: list[str] = []
    for pattern in user_key_patterns(scope):
        keys += [k.decode() if isinstance(k, bytes) else k for k in client.scan_iter(match=pattern, count=500)]
    return keys


def _delete(runtime: PurgeStores, scope: UserScope) -> dict:
    """One deletion pass over every store; vectors and graph first, the documents pointing at them last."""
    indexes = runtime.evidence.delete_user(scope)
    graph = runtime.graph.delete_user(scope)
    keys = _user_keys(runtime.redis, scope)
    if keys:
        runtime.redis.delete(*keys)
    if runtime.blobs is not None:
        runtime.blobs.delete_user(scope)
    documents = runtime.documents.delete_user(scope)
    return {"documents": documents, "vectors": indexes["chain_vectors"], "event_vectors": indexes["event_vectors"],
            "lexical": indexes["lexical"], "graph": graph, "stm_keys": len(keys)}


def _remaining(runtime: PurgeStores, scope: UserScope) -> dict[str, int]:
    """What is left of the user in each store. The document store has no per-user count: a repeated
    `delete_user` answers it (its counts are what it still found, and it removes that too)."""
    left = {f"documents.{name}": n for name, n in runtime.documents.delete_user(scope).items()}
    left["vectors"] = runtime.vectors.count(scope)
    left["event_vectors"] = runtime.event_vectors.count(scope)
    left["lexical"] = runtime.lexical.count(scope)
    nodes, edges = runtime.graph.count(scope)
    left["graph_nodes"], left["graph_edges"] = nodes, edges
    left["stm_keys"] = len(_user_keys(runtime.redis, scope))
    count_blobs = getattr(runtime.blobs, "count_user", None)
    left["blobs"] = count_blobs(scope) if count_blobs is not None else 0
    return left


def _mentions(value: bytes, scope: UserScope) -> bool:
    return (f'"{scope.tenant_id}:{scope.user_id}:'.encode() in value
            or (f'"{scope.tenant_id}"'.encode() in value and f'"{scope.user_id}"'.encode() in value))


def delete_task_results(client: redis.Redis, scope: UserScope, max_keys: int) -> tuple[int, bool]:
    """Delete the Celery task results (`celery-task-meta-*`) whose value names the user's scope, inspecting
    at most `max_keys` keys. Returns (deleted, whether every result key was inspected)."""
    deleted = seen = 0
    batch: list = []

    def flush() -> int:
        values = client.mget(batch)
        doomed = [k for k, v in zip(batch, values) if v is not None and _mentions(v, scope)]
        batch.clear()
        return client.delete(*doomed) if doomed else 0

    for key in client.scan_iter(match=f"{TASK_RESULT_PREFIX}*", count=1000):
        if seen >= max_keys:
            return deleted + (flush() if batch else 0), False
        seen += 1
        batch.append(key)
        if len(batch) >= 500:
            deleted += flush()
    if batch:
        deleted += flush()
    return deleted, True


def _scrub(runtime: PurgeStores, scope: UserScope) -> tuple[dict[str, str], int, bool]:
    """Wipe what the deletion freed: no byte of the user's text may stay in the data directory."""
    settings = runtime.settings
    scrubbed: dict[str, str] = {}
    wiped = True
    try:
        task_results, complete = delete_task_results(runtime.redis, scope, settings.purge_task_result_scan)
        scrubbed["task_results"] = (
            "deleted" if complete else f"scan stopped after {settings.purge_task_result_scan} keys")
        wiped &= complete
    except redis.RedisError as exc:
        task_results, wiped = 0, False
        scrubbed["task_results"] = f"failed: {exc}"
    for name in ("documents", "vectors", "event_vectors", "lexical", "graph"):
        store = getattr(runtime, name)
        if not isinstance(store, Scrubbable):
            scrubbed[name] = "no scrub (the engine's own storage)"  # MongoDB, Milvus, ArangoDB
            continue
        try:
            scrubbed[name] = store.scrub(vacuum=settings.purge_vacuum, wait_s=settings.purge_checkpoint_wait_s)
        except sqlite3.Error as exc:
            scrubbed[name] = f"failed: {exc}"
        wiped &= not scrubbed[name].startswith("failed") and "busy" not in scrubbed[name]
    try:
        scrubbed["redis_aof"] = rewrite_aof(runtime.redis, settings.purge_aof_rewrite_wait_s)
    except (redis.RedisError, TimeoutError, RuntimeError) as exc:
        scrubbed["redis_aof"] = f"failed: {exc}"
        wiped = False
    if not wiped:
        log.error("purge of %s:%s deleted everything but could not wipe all freed bytes: %s",
                  scope.tenant_id, scope.user_id, scrubbed)
    return scrubbed, task_results, wiped


def purge_user(runtime: PurgeStores, scope: UserScope) -> PurgeReport:
    """Fence, lock, delete, verify, wipe (see the module docstring). Raises `PurgeBusy` when the user's
    write lock is not free in time (nothing deleted), `PurgeIncomplete` when two passes left something,
    `PathEscape` (nothing touched) for a scope whose ids are not plain names."""
    settings = runtime.settings
    checked_segment(scope.tenant_id, "tenant_id")  # a scope that is no plain name touches nothing at all
    checked_segment(scope.user_id, "user_id")
    fence_user(runtime.redis, scope, time.time(), settings.purge_fence_ttl_s)
    try:
        with scope_lock(runtime.redis, user_write_lock_name(scope), settings.lock_lease_s,
                        wait_s=settings.purge_lock_wait_s):
            removed = _delete(runtime, scope)
            passes = 1
            remaining = _remaining(runtime, scope)
            if any(remaining.values()):
                log.warning("purge of %s:%s: %s left after the first pass; deleting again",
                            scope.tenant_id, scope.user_id, {k: v for k, v in remaining.items() if v})
                again = _delete(runtime, scope)
                for name, n in again.items():
                    if name == "documents":
                        for kind, m in n.items():
                            removed["documents"][kind] = removed["documents"].get(kind, 0) + m
                    else:
                        removed[name] += n
                passes = 2
                remaining = _remaining(runtime, scope)
            # Again, now: a task that began while the purge waited for the lock and read the user's data
            # outside it (the promoter reads chains unlocked) would not be fenced by the first time.
            fence_user(runtime.redis, scope, time.time(), settings.purge_fence_ttl_s)
    except ScopeBusy as busy:
        raise PurgeBusy(scope, max(1, int(settings.lock_lease_s))) from busy
    if any(remaining.values()):
        raise PurgeIncomplete(scope, remaining)
    scrubbed, task_results, wiped = _scrub(runtime, scope)
    return PurgeReport(
        tenant_id=scope.tenant_id, user_id=scope.user_id, documents=removed["documents"],
        vectors=removed["vectors"], event_vectors=removed["event_vectors"], lexical=removed["lexical"],
        graph=removed["graph"], stm_keys=removed["stm_keys"], blobs=runtime.blobs is not None,
        task_results=task_results, passes=passes, remaining=remaining, scrubbed=scrubbed, wiped=wiped,
    )
