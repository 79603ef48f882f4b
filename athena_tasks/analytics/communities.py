"""Community analytics (SPEC S6.5): per tenant as a Celery chord, one run at a time (Redis lock).

The trigger task takes the lock and fans out one task per tenant; the chord's callback releases it,
so no task waits on another's result. The lock expires, so a lost callback cannot block the next run.
"""
from __future__ import annotations

import uuid

from celery import chord

from athena_core.observability import metrics
from athena_core.ltm.communities import bridge_scores, detect_communities
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.worker_runtime import get_runtime

LOCK_KEY = "lock:analytics"
LOCK_TTL_S = 3600

RELEASE_IF_OWNER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@app.task(base=AthenaTask, name="athena.beat.analytics")
def run_community_analytics() -> dict:
    runtime = get_runtime()
    token = uuid.uuid4().hex
    if not runtime.redis.set(LOCK_KEY, token, nx=True, ex=LOCK_TTL_S):
        metrics.ANALYTICS_RUNS.labels("skipped").inc()
        return {"started": False, "reason": "another analytics run holds the lock"}
    tenants = runtime.graph.tenants()
    if not tenants:
        release_analytics_lock.apply(args=[[], token])
        return {"started": True, "tenants": 0}
    chord(analyse_tenant.s(t) for t in tenants)(release_analytics_lock.s(token))
    return {"started": True, "tenants": len(tenants)}


@app.task(base=AthenaTask, name="athena.beat.analytics_tenant")
def analyse_tenant(tenant_id: str) -> dict:
    """Leiden (modularity) on the tenant's weighted graph, then bridge scores; written back in place."""
    runtime = get_runtime()
    graph = runtime.graph
    edges = graph.tenant_edges(tenant_id)
    result = detect_communities(edges, n_iterations=runtime.settings.analytics_leiden_iterations)
    bridges = bridge_scores(edges, result.membership)
    graph.write_communities(
        tenant_id, result.membership, bridges, result.documents()
    )
    return {"tenant_id": tenant_id, "communities": len(result.communities), "modularity": result.modularity}


@app.task(base=AthenaTask, name="athena.beat.analytics_done")
def release_analytics_lock(results: list[dict], token: str) -> dict:
    get_runtime().redis.eval(RELEASE_IF_OWNER, 1, LOCK_KEY, token)
    metrics.ANALYTICS_RUNS.labels("completed").inc()
    return {"tenants": len(results)}
