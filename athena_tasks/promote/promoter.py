"""Beat: recompute heat of every active chain in batches; promote hot chains into the graph (SPEC S6.1).

Each chain's graph write holds the user's write lock and is skipped for a user purged since the pass
began (the purge fence); the extraction (an LLM call) runs outside the lock. A user whose lock is busy
keeps that chain for the next pass.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict

from athena_core import metrics
from athena_core.models.events import utc_now
from athena_core.models.scope import UserScope
from athena_core.ltm.promotion import Promoter
from athena_core.mtm.chain_heat import chain_heat
from athena_core.providers.llm import LLMSchemaError
from athena_core.purge_fence import user_write_lock_name
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.chains.indexing import fenced
from athena_tasks.chains.scope_lock import ScopeBusy, scope_lock
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)


@app.task(base=AthenaTask, name="athena.beat.promote")
def promote_hot_chains() -> dict:
    runtime = get_runtime()
    settings = runtime.settings
    promoter = Promoter(runtime.documents, runtime.graph, runtime.extractor)
    started_at = time.time()  # the pass's start: a user purged after it gets no write from this pass
    now = utc_now()
    scanned = promoted = schema_failures = busy = fenced_out = 0
    after = None
    while page := runtime.documents.active_chains_page(after, settings.promote_batch):
        after = (page[-1].tenant_id, page[-1].user_id, page[-1].chain_id)
        heat_updates: dict[UserScope, list] = defaultdict(list)
        for chain in page:
            scanned += 1
            factors = chain_heat(chain, now, settings.heat_tau_hours)
            heat_updates[UserScope(tenant_id=chain.tenant_id, user_id=chain.user_id)].append(
                (chain.chain_id, factors.heat, factors.model_dump(mode="json")))
            if factors.heat < settings.promote_threshold or not promoter.needs_promotion(chain):
                continue
            try:
                prepared = promoter.prepare(chain, factors.heat)
            except LLMSchemaError as exc:  # counted by the provider; a later pass retries this chain
                schema_failures += 1
                log.warning("promotion of %s aborted: %s", chain.chain_id, exc)
                continue
            user = prepared.scope
            try:
                with scope_lock(runtime.redis, user_write_lock_name(user), settings.lock_lease_s):
                    if fenced(runtime, user, started_at, "promote"):
                        fenced_out += 1
                        continue
                    result = promoter.commit(prepared, now)
            except ScopeBusy:
                busy += 1  # a run of this user is writing; the next pass promotes the chain
                continue
            promoted += 1
            metrics.PROMOTIONS.inc()
            metrics.GRAPH_WRITES.inc(result.new_observations)
        for scope, updates in heat_updates.items():
            runtime.documents.set_chain_heat(scope, updates)
    return {"chains_scanned": scanned, "chains_promoted": promoted, "schema_failures": schema_failures,
            "busy": busy, "fenced": fenced_out}
