"""What is indexed is state, not a message (SPEC S7), and every event is searchable as it arrives (S2).

Every event carries `indexed_at` once its own vectors (event, sentences) and lexical doc are in the search
indexes, and every chain carries one once its summary vector and lexical doc are; writing a chain
(`upsert_chain`: created, merged) clears it. Events are indexed whatever their status: the arrival index
task (`athena.pipeline.index_events`, published with each run request, debounced per shard of users)
indexes a pending event within a fraction of a second, before its topic ends. The pipeline's last step and the index
sweep run the same code: under the user's write lock, page by page, index every event and chain not yet
indexed, then mark them. Events whose chain is archived (or gone) are marked without indexing. A lost or
killed step leaves its events or chains unindexed, and the next index task or run of the user, or the
sweep, picks them up: no gap is permanent.

Each page is written under the user's write lock (`chains:{tenant}:{user}`, the purge's lock too) and
only if the user was not purged since the page was read (the purge fence).
"""
from __future__ import annotations

import logging
import time

from athena_core.observability import metrics
from athena_core.models.chains import ChainStatus
from athena_core.models.events import Event, EventStatus, utc_now
from athena_core.models.scope import UserScope
from athena_core.retrieval.sentences import sentence_texts
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


def index_user(runtime: Runtime, user: UserScope, *, path: str, budget_s: float | None = None,
               wait_s: float = 0.0) -> dict:
    """Index the user's events and chains not yet indexed, a page per lock hold, until none is left (or the
    time budget is spent: the rest waits for the next run or sweep). Raises ScopeBusy when the lock is still
    held after `wait_s`.

    Events are indexed whatever their status (a pending event is searchable before its topic ends, issue
    15), except a consolidated event whose chain is archived or gone, and a rejected one when
    `index_rejected_events` is off: those are marked without indexing. Chains are indexed when written
    (created or merged: `upsert_chain` makes a chain unindexed again)."""
    settings = runtime.settings
    page_size = max(1, settings.pipeline_batch_events)
    deadline = None if budget_s is None else time.monotonic() + budget_s
    events_indexed = chains_indexed = marked = 0
    previous: tuple[list[str], list[str]] | None = None
    while True:
        started_at = time.time()  # everything written below is read after this instant
        with scope_lock(runtime.redis, user_write_lock_name(user), settings.lock_lease_s, wait_s=wait_s):
            events = runtime.documents.unindexed_events(user, page_size)
            chains = runtime.documents.unindexed_chains(user, page_size)
            if not events and not chains:
                return _done(events_indexed, chains_indexed, marked, remaining=False)
            ids, chain_ids = [e.event_id for e in events], [c.chain_id for c in chains]
            if (ids, chain_ids) == previous:  # marking did not take: never spin on it
                raise RuntimeError(f"marking left {len(ids)} events and {len(chain_ids)} chains of "
                                   f"{user.tenant_id}:{user.user_id} unmarked")
            previous = (ids, chain_ids)
            to_index = _indexable(runtime, user, events, {c.chain_id for c in chains})
            if fenced(runtime, user, started_at, f"index:{path}"):
                return {**_done(events_indexed, chains_indexed, marked, remaining=False), "fenced": True}
            events_indexed += runtime.evidence.index(user, chains, to_index)
            chains_indexed += len(chains)
            now = utc_now()
            marked += runtime.documents.mark_indexed(user, ids, now)
            runtime.documents.mark_chains_indexed(user, chain_ids, now)
        metrics.EVENTS_INDEXED.labels(path).inc(len(to_index))
        if len(events) < page_size and len(chains) < page_size:
            return _done(events_indexed, chains_indexed, marked, remaining=False)
        if deadline is not None and time.monotonic() > deadline:
            return _done(events_indexed, chains_indexed, marked, remaining=True)


def _indexable(runtime: Runtime, user: UserScope, events: list[Event], active_known: set[str]) -> list[Event]:
    """The events of a page that belong in the indexes (see `index_user`)."""
    chain_ids = sorted({e.chain_id for e in events if e.chain_id and e.chain_id not in active_known})
    active = set(active_known) | {c.chain_id for c in runtime.documents.get_chains(user, chain_ids)
                                  if c.status == ChainStatus.active}
    keep_rejected = runtime.settings.index_rejected_events
    return [e for e in events
            if e.status == EventStatus.pending
            or (e.status == EventStatus.consolidated and e.chain_id in active)
            or (e.status == EventStatus.rejected and keep_rejected)]


def indexed_texts(event: Event, settings) -> list[str]:  # noqa: ANN001 - Settings
    """The texts the index embeds for an event: its content and, when long, its sentences (EvidenceIndex)."""
    if not event.content.strip():
        return []
    return [event.content, *sentence_texts(event.content, settings.search_sentence_min_words)]


def _done(events_indexed: int, chains_indexed: int, marked: int, *, remaining: bool) -> dict:
    return {"events_indexed": events_indexed, "chains_indexed": chains_indexed, "events_marked": marked,
            "remaining": remaining}
