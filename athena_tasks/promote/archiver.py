"""Beat: archive chains idle ≥ 7 days with heat < 0.1 (SPEC S7), both over real idleness (the last event
or access, not the consolidation that starts the S5 heat clock).

Each archival holds the user's write lock, so it cannot interleave with an index step re-writing the
chain's vectors; a busy user's chain waits for the next pass. A chain still waiting for its promotion (hot
on the S5 clock, its content not yet promoted: typically imported history just consolidated) is left for
the promoter first, so an archive pass that happens to run before the promote pass cannot take it away.
"""
from __future__ import annotations

from datetime import datetime

from athena_core.observability import metrics
from athena_core.models.events import utc_now
from athena_core.mtm.archival import archive, should_archive
from athena_core.ltm.promotion import content_hash
from athena_core.mtm.chain_heat import chain_heat, idle_heat
from athena_core.models.chains import Chain
from athena_core.models.scope import UserScope
from athena_core.usecases.purge_fence import user_write_lock_name
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_core.wiring.settings import Settings
from athena_tasks.app import app
from athena_tasks.base import AthenaTask
from athena_tasks.worker_runtime import get_runtime


def awaiting_promotion(chain: Chain, now: datetime, settings: Settings) -> bool:
    """Hot enough to promote (S5 clock) and this content not yet in the graph (S6.1)."""
    return (chain_heat(chain, now, settings.heat_tau_hours).heat >= settings.promote_threshold
            and chain.promoted_evidence != content_hash(chain))


@app.task(base=AthenaTask, name="athena.beat.archive")
def archive_cold_chains() -> dict:
    runtime = get_runtime()
    settings = runtime.settings
    now = utc_now()
    archived = 0
    after = None
    while page := runtime.documents.active_chains_page(after, settings.promote_batch):
        after = (page[-1].tenant_id, page[-1].user_id, page[-1].chain_id)
        for chain in page:
            heat = idle_heat(chain, now, settings.heat_tau_hours).heat  # real idleness (S7)
            if should_archive(chain, heat, now, max_heat=settings.archive_heat,
                              min_idle_days=settings.archive_idle_days) and not awaiting_promotion(chain, now, settings):
                user = UserScope(tenant_id=chain.tenant_id, user_id=chain.user_id)
                try:
                    with scope_lock(runtime.redis, user_write_lock_name(user), settings.lock_lease_s):
                        fresh = runtime.documents.get_chains(user, [chain.chain_id])  # a merge may have won
                        if fresh and fresh[0].event_ids == chain.event_ids and archive(
                                chain, now, runtime.documents, runtime.evidence, runtime.blobs):
                            archived += 1
                except ScopeBusy:
                    continue
    metrics.CHAINS_ARCHIVED.inc(archived)
    return {"chains_archived": archived}
