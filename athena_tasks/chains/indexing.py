"""What is indexed is state, not a message (SPEC S7).

Every consolidated event carries `indexed_at` once it, and the chain it belongs to, are in the search
indexes (chain vector, event and sentence vectors, lexical docs). The pipeline's last step and the index
sweep run the same code: under the user's write lock, page by page, index every consolidated event not
yet indexed together with its (active) chain, then mark those events. A merge always adds new,
unindexed events to a chain, so re-indexing the chains of unindexed events keeps merged chains fresh;
events whose chain is archived (or gone) are marked without indexing. A lost or killed step leaves its
events unindexed, and the next run of the user or the sweep picks them up: no gap is permanent.

Each page is written under the user's write lock (`chains:{tenant}:{user}`, the purge's lock too) and
only if the user was not purged since the page was read (the purge fence).
"""
from __future__ import annotations

import logging
import time

from athena_core.observability import metrics
from athena_core.models.chains import ChainStatus
from athena_core.models.events import utc_now
from athena_core.models.scope import UserScope
from athena_core.usecases.purge_fence import purged_since, user_write_lock_name
from athena_core.wiring.runtime import Runtime
from athena_core.wiring.scope_lock import scope_lock

log = logging.getLogger(__name__)


def fenced(runtime: Runtime, user: UserScope, started_at: float, step: str) -> bool:
    """True (logged, counted) when the user was purged at or after `started_at`: write nothing."""
    if purged_since(runtime.redis, user, started_at):
        metrics.PURGE_FENCED_WRITES.labels(step).inc()
        log.warning("%s: user %s:%s was purged after this work began; nothing written", step,
                    user.tenant_id, user.user_id)
        return True
    return False


def index_user(runtime: Runtime, user: UserScope, *, path: str, budget_s: float | None = None) -> dict:
    """Index the user's consolidated, not indexed events, a page per lock hold, until none is left (or the
    time budget is spent: the rest waits for the next run or sweep). Raises ScopeBusy when the lock is held."""
    page_size = max(1, runtime.settings.pipeline_batch_events)
    deadline = None if budget_s is None else time.monotonic() + budget_s
    events_indexed = chains_indexed = marked = 0
    previous: list[str] | None = None
    while True:
        started_at = time.time()  # everything written below is read after this instant
        with scope_lock(runtime.redis, user_write_lock_name(user), runtime.settings.lock_lease_s):
            events = runtime.documents.unindexed_events(user, page_size)
            if not events:
                return _done(events_indexed, chains_indexed, marked, remaining=False)
            ids = [e.event_id for e in events]
            if ids == previous:  # marking did not take: never spin on it
                raise RuntimeError(f"mark_indexed left {len(ids)} events of {user.tenant_id}:{user.user_id} unmarked")
            previous = ids
            chains = runtime.documents.get_chains(user, sorted({e.chain_id for e in events if e.chain_id}))
            active = {c.chain_id: c for c in chains if c.status == ChainStatus.active}
            to_index = [e for e in events if e.chain_id in active]
            if fenced(runtime, user, started_at, f"index:{path}"):
                return {**_done(events_indexed, chains_indexed, marked, remaining=False), "fenced": True}
            events_indexed += runtime.evidence.index(user, list(active.values()), to_index)
            chains_indexed += len(active)
            marked += runtime.documents.mark_indexed(user, ids, utc_now())
        metrics.EVENTS_INDEXED.labels(path).inc(len(to_index))
        if len(events) < page_size:
            return _done(events_indexed, chains_indexed, marked, remaining=False)
        if deadline is not None and time.monotonic() > deadline:
            return _done(events_indexed, chains_indexed, marked, remaining=True)


def _done(events_indexed: int, chains_indexed: int, marked: int, *, remaining: bool) -> dict:
    return {"events_indexed": events_indexed, "chains_indexed": chains_indexed, "events_marked": marked,
            "remaining": remaining}
