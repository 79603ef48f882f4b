"""Promotion (SPEC S6.1), fanned out per user like the analytics chord (analytics/communities.py).

The beat task walks the users with active chains and enqueues one `athena.beat.promote_user` task per
user; it waits on none of them. So one tenant whose LLM extractions are slow holds one task of the beat
worker at a time, and every other user's promotion still runs.

Each per-user task recomputes the heat of the user's active chains in batches and promotes the hot chains
whose content changed. Each chain's graph write holds the user's write lock and is skipped for a user
purged since the task began (the purge fence); the extraction (an LLM call) runs outside the lock. The
lock is tried, never waited for: a chain whose user is busy is left, the task goes on with the others and
then re-queues itself with a countdown (`ScopeBusy` → `AthenaTask`), so the busy chains are promoted
seconds later rather than a pass later. A graph write conflict still left after the promoter's retries is
treated the same way (counted, re-queued); any other failure of one chain's write is logged and counted,
the chain stays unpromoted for a later pass, and the task goes on with the others. Idempotent (late acks
redeliver): a chain is promoted once per distinct content, so a redelivered or re-queued task repeats no
graph write.
"""
from __future__ import annotations

import logging
import time

from athena_core.ltm.promotion import Promoter
from athena_core.models.events import utc_now
from athena_core.models.scope import UserScope
from athena_core.mtm.chain_heat import chain_heat
from athena_core.observability import metrics
from athena_core.providers.llm import LLMSchemaError
from athena_core.stores.graph.port import GraphWriteConflict
from athena_core.usecases.purge_fence import user_write_lock_name
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.indexing import fenced
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)


@app.task(base=AthenaTask, name="athena.beat.promote")
def promote_hot_chains() -> dict:
    """Fan out: one `promote_user` task per user with active chains (paged, `ATHENA_PROMOTE_BATCH` users a
    page). A task not started within one promotion interval expires: the next pass enqueues it again."""
    runtime = get_runtime()
    settings = runtime.settings
    users = 0
    after = None
    while page := runtime.documents.active_chain_users(after, settings.promote_batch):
        after = (page[-1].tenant_id, page[-1].user_id)
        for user in page:
            promote_user.apply_async(args=[user.tenant_id, user.user_id], expires=settings.promote_every_s)
            users += 1
    return {"users": users}


@app.task(base=AthenaTask, name="athena.beat.promote_user", ignore_result=True)
def promote_user(tenant_id: str, user_id: str) -> dict:
    """Recompute the heat of one user's active chains; promote the hot ones into the user's graph.

    Nothing waits on it, so it stores no result (one per user per pass; Flower still shows the counts)."""
    runtime = get_runtime()
    settings = runtime.settings
    user = UserScope(tenant_id=tenant_id, user_id=user_id)
    promoter = Promoter(runtime.documents, runtime.graph, runtime.extractor, events=runtime.documents,
                        turn_token_budget=settings.extraction_turn_tokens)
    started_at = time.time()  # the task's start: a user purged after it gets no write from this task
    now = utc_now()
    scanned = promoted = schema_failures = busy = fenced_out = conflicts = write_failures = 0
    after = (tenant_id, user_id, "")
    while page := [c for c in runtime.documents.active_chains_page(after, settings.promote_batch)
                   if (c.tenant_id, c.user_id) == (tenant_id, user_id)]:  # the page ends at the next user
        after = (tenant_id, user_id, page[-1].chain_id)
        heat_updates = []
        for chain in page:
            scanned += 1
            factors = chain_heat(chain, now, settings.heat_tau_hours)
            heat_updates.append((chain.chain_id, factors.heat, factors.model_dump(mode="json")))
            if factors.heat < settings.promote_threshold or not promoter.needs_promotion(chain):
                continue
            try:
                prepared = promoter.prepare(chain, factors.heat)
            except LLMSchemaError as exc:  # counted by the provider; a later pass retries this chain
                schema_failures += 1
                log.warning("promotion of %s aborted: %s", chain.chain_id, exc)
                continue
            try:
                with scope_lock(runtime.redis, user_write_lock_name(user), settings.lock_lease_s):
                    if fenced(runtime, user, started_at, "promote"):
                        fenced_out += 1
                        continue
                    try:
                        result = promoter.commit(prepared, now)
                    except GraphWriteConflict as exc:  # retried by the promoter already: re-queued below
                        conflicts += 1
                        log.warning("promotion of %s hit write conflicts: %s", chain.chain_id, exc)
                        continue
                    except Exception:  # noqa: BLE001 - one chain's failed write never aborts the user's run
                        write_failures += 1
                        log.exception("promotion of %s failed; a later pass retries it", chain.chain_id)
                        continue
            except ScopeBusy:
                busy += 1  # a run of this user is writing: re-queued below, once the other chains are done
                continue
            promoted += 1
            metrics.PROMOTIONS.inc()
            metrics.GRAPH_WRITES.inc(result.new_observations)
        runtime.documents.set_chain_heat(user, heat_updates)
        if len(page) < settings.promote_batch:
            break
    if busy or conflicts:
        raise ScopeBusy(user_write_lock_name(user))  # AthenaTask re-queues with a countdown
    return {"chains_scanned": scanned, "chains_promoted": promoted, "schema_failures": schema_failures,
            "busy": busy, "fenced": fenced_out, "conflicts": conflicts, "write_failures": write_failures}
