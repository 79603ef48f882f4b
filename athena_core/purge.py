"""User purge (SPEC S7.4): erase a user's memory from every store, and say what was removed where."""
from __future__ import annotations

from pydantic import BaseModel

from athena_core.models.scope import UserScope
from athena_core.runtime import Runtime


class PurgeReport(BaseModel):
    tenant_id: str
    user_id: str
    documents: dict[str, int]
    vectors: int
    event_vectors: int
    lexical: int
    graph: int
    stm_keys: int
    blobs: bool


def purge_user(runtime: Runtime, scope: UserScope) -> PurgeReport:
    """Vectors and graph first, then the documents that point at them: a purge interrupted half-way
    can be re-run and finishes the job (every step is idempotent)."""
    indexes = runtime.evidence.delete_user(scope)
    graph = runtime.graph.delete_user(scope)
    pattern = f"stm:{scope.tenant_id}:{scope.user_id}:*"
    keys = list(runtime.redis.scan_iter(match=pattern, count=500))
    keys += list(runtime.redis.scan_iter(match=f"pipeline:requested:{scope.tenant_id}:{scope.user_id}:*", count=500))
    if keys:
        runtime.redis.delete(*keys)
    if runtime.blobs is not None:
        runtime.blobs.delete_user(scope)
    documents = runtime.documents.delete_user(scope)
    return PurgeReport(
        tenant_id=scope.tenant_id, user_id=scope.user_id, documents=documents, vectors=indexes["chain_vectors"],
        event_vectors=indexes["event_vectors"], lexical=indexes["lexical"], graph=graph,
        stm_keys=len(keys), blobs=runtime.blobs is not None,
    )
