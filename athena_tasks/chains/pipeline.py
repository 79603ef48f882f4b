"""The pipeline chain of one agent scope: coalesce → segment → summarize → embed (SPEC S0, S4).

Each step takes and returns a small JSON dict, so the chain needs no result backend and any step can
be re-run: chain ids derive from segments, merges are unions and events are re-checked for `pending`
before they are summarised, so a redelivered task (late acks) repeats no work. No step stores its
result (`ignore_result`): results would keep the user's scope and event ids in Redis past a purge.
Tests and operators watch state instead (events consolidated and indexed).

Events are indexed as they arrive (`index_events`, its own task, debounced per shard of users), so a pending event
is searchable before its topic ends (SPEC S2); segmentation reads the user messages' stored vectors. The
last step is state-driven (`indexing.index_user`): it indexes whatever of the user is not indexed (the
chains this run wrote, events no arrival task reached), not what the message names, so a lost step leaves
no permanent gap (SPEC S7).
The purge fence: `coalesce` records the run's start (`snapshot_at`); summarize writes nothing for a user
purged since then.
"""
from __future__ import annotations

import logging
import time
from datetime import timedelta

from athena_core.observability import metrics
from athena_core.models.events import EventStatus, utc_now
from athena_core.models.scope import AgentScope
from athena_core.mtm.calibration import calibration_for
from athena_core.mtm.chain_formation import ChainFormer, search_text_of
from athena_core.mtm.segmenter import BreakDetector, is_user_message, plan_segments
from athena_core.usecases.purge_fence import user_write_lock_name
from athena_tasks.app import app
from athena_tasks.base import AthenaTask, PermanentTaskError
from athena_tasks.chains.indexing import fenced, index_user, indexed_texts
from athena_tasks.chains.run_requests import (
    PipelineRunRequester,
    clear_index_request,
    clear_run_request,
    pipeline_for,
    shard_of,
)
from athena_core.wiring.redis_keys import segment_lock_name
from athena_core.wiring.scope_lock import ScopeBusy, scope_lock
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)


def _scope(key: str) -> AgentScope:
    """A message's scope; ids that form none (a message from before the door checked them) fail for good."""
    try:
        return AgentScope.from_key(key)
    except ValueError as exc:  # pydantic's ValidationError included: no retry can fix the ids
        raise PermanentTaskError(f"the scope key {key!r} forms no scope: {type(exc).__name__}") from exc


INDEX_LOCK_WAIT_S = 0.05  # a formation holds a user's write lock for tens of ms: skip it, ask again
ARRIVAL_USERS = 1000  # users per arrival task; the rest ask again


@app.task(base=AthenaTask, name="athena.pipeline.index_events", ignore_result=True)
def index_events(shard: int) -> dict:
    """Arrival indexing (SPEC S2 freshness): every event of the shard's users not yet indexed, pending or
    not, becomes searchable now; consolidation builds chains on top and reuses the vectors. All their texts
    are embedded in one batch first (the embedder's cache then serves each user's index write), which is
    what makes indexing at arrival cheaper than per run. The request flag is cleared before the read, so
    an event stored after it asks again; a user whose write lock is busy is asked for again."""
    runtime = get_runtime()
    settings = runtime.settings
    clear_index_request(runtime.redis, shard)
    users = [u for u in runtime.documents.unindexed_scopes(utc_now() + timedelta(seconds=1), limit=ARRIVAL_USERS)
             if shard_of(u, settings.index_shards) == shard]
    page = max(1, settings.pipeline_batch_events)
    texts = [t for u in users for e in runtime.documents.unindexed_events(u, page) for t in indexed_texts(e, settings)]
    if texts:
        runtime.embedder.embed(list(dict.fromkeys(texts)))
    counts = {"users": 0, "events_indexed": 0, "busy": 0}
    for user in users:
        try:
            result = index_user(runtime, user, path="arrival", budget_s=settings.task_soft_time_limit_s / 4,
                                wait_s=INDEX_LOCK_WAIT_S)
        except ScopeBusy:
            counts["busy"] += 1
            continue
        counts["users"] += 1
        counts["events_indexed"] += result["events_indexed"]
    if counts["busy"] or len(users) == ARRIVAL_USERS:
        PipelineRunRequester(runtime.redis, settings.pipeline_debounce_ttl_s).request_shard(shard)
    return counts


@app.task(base=AthenaTask, name="athena.pipeline.coalesce", ignore_result=True)
def coalesce(scope_key: str, flush: bool = False) -> dict:
    """Take the scope's pending events as one snapshot for this run.

    The run request flag is cleared *before* the snapshot, so an event stored after this point asks
    for a new run, and an event stored before it is in the snapshot: none falls between two runs.
    """
    runtime = get_runtime()
    scope = _scope(scope_key)
    snapshot_at = time.time()  # before the read: a purge at or after this instant fences the run
    clear_run_request(runtime.redis, scope)
    batch = runtime.settings.pipeline_batch_events
    pending = runtime.documents.pending_events(scope, limit=batch)
    runtime.documents.mark_seen(scope, [e.event_id for e in pending if e.seen_at is None], utc_now())
    more = len(pending) == batch  # a backlog: the embed step asks for the next run (carrying the flush)
    return {"scope": scope_key, "event_ids": [e.event_id for e in pending], "flush": flush, "more": more,
            "snapshot_at": snapshot_at}


def _run_flags(batch: dict) -> dict:
    """What every step passes on: the scope, whether a backlog remains, whether an idle flush was asked,
    when the run's snapshot was taken (a batch from before `snapshot_at` counts as fenced by any purge)."""
    return {"scope": batch["scope"], "more": batch["more"], "flush": batch["flush"],
            "snapshot_at": batch.get("snapshot_at", 0.0)}


@app.task(base=AthenaTask, name="athena.pipeline.segment", ignore_result=True)
def segment(batch: dict) -> dict:
    """Topic-break detection over the snapshot: which pending events form finished segments."""
    runtime = get_runtime()
    settings = runtime.settings
    scope = _scope(batch["scope"])
    with scope_lock(runtime.redis, segment_lock_name(scope), settings.lock_lease_s):
        events = [e for e in runtime.documents.get_events(scope.user_scope, batch["event_ids"])
                  if e.status == EventStatus.pending and e.agent_id == scope.agent_id]
        if not events:
            return {**_run_flags(batch), "segments": []}
        previous = runtime.documents.previous_user_message(scope, events[0])
        # The user messages' vectors as arrival indexing stored them (each text embedded once); any not
        # indexed yet are embedded in one batch here, and the gate's pairwise lookups read this map.
        messages = [e for e in [previous, *events] if e is not None and is_user_message(e)]
        vectors = runtime.event_vectors.vectors_of(scope.user_scope, [e.event_id for e in messages])
        missing = [e for e in messages if e.event_id not in vectors]
        if missing:
            vectors.update(zip([e.event_id for e in missing], runtime.embedder.embed([e.content for e in missing])))
        calibration = calibration_for(settings, runtime.embedder.model_name)
        detector = BreakDetector(runtime.embedder, runtime.llm, high=calibration.break_high,
                                 low=calibration.break_low, tenant_id=scope.tenant_id, vectors=vectors)
        plan = plan_segments(
            events, previous, detector,
            max_events=settings.segment_max_events, flush_all=batch["flush"] and not batch["more"],
        )
    for decision in plan.decisions:
        metrics.BREAK_DECISIONS.labels(decision.value).inc()
    return {**_run_flags(batch), "segments": [[e.event_id for e in s] for s in plan.segments]}


@app.task(base=AthenaTask, name="athena.pipeline.summarize", ignore_result=True)
def summarize(batch: dict) -> dict:
    """Form (or merge) one chain per finished segment; one user's formations run one at a time, under the
    user's write lock, and none for a user purged since the run's snapshot (the purge fence).

    The segments' formations come first and their summaries are embedded in one batch (the merge check
    needs them); then the chains written are indexed here, in the process whose embedding cache holds
    their vectors (each text embedded once; the embed step then finds nothing left)."""
    runtime = get_runtime()
    settings = runtime.settings
    scope = _scope(batch["scope"])
    user = scope.user_scope
    flags = _run_flags(batch)
    former = ChainFormer(runtime.documents, runtime.vectors, runtime.llm, runtime.embedder, settings)
    segments = [[e for e in runtime.documents.get_events(user, ids)
                 if e.status == EventStatus.pending and e.agent_id == scope.agent_id] for ids in batch["segments"]]
    formations = {tuple(e.event_id for e in events): former.formation(events, scope.tenant_id)
                  for events in segments if events}
    if formations:
        runtime.embedder.embed([search_text_of(f) for f in formations.values()])
    chain_ids: list[str] = []
    for segment_ids in batch["segments"]:
        with scope_lock(runtime.redis, user_write_lock_name(user), settings.lock_lease_s):
            if fenced(runtime, user, flags["snapshot_at"], "summarize"):
                break
            events = [e for e in runtime.documents.get_events(user, segment_ids)
                      if e.status == EventStatus.pending and e.agent_id == scope.agent_id]
            if not events:
                continue  # already summarised by an earlier delivery of this task
            outcome = former.form(scope, events, utc_now(), formations.get(tuple(e.event_id for e in events)))
            if outcome.kind == "rejected" and not settings.index_rejected_events:
                runtime.evidence.remove_events(user, [e.event_id for e in events])
        if outcome.chain_id and outcome.chain_id not in chain_ids:
            chain_ids.append(outcome.chain_id)
    if chain_ids:
        try:
            index_user(runtime, user, path="run", budget_s=settings.task_soft_time_limit_s / 4,
                       wait_s=INDEX_LOCK_WAIT_S)
        except ScopeBusy:
            pass  # the embed step (or the next index task) indexes them
    return {**flags, "chain_ids": chain_ids}


@app.task(base=AthenaTask, name="athena.pipeline.embed", ignore_result=True)
def embed(batch: dict) -> dict:
    """The index step, driven by state: index every consolidated, not indexed event of the user and the
    active chains they belong to (this run's, and any an earlier lost step left behind), then mark them.
    The batch names only the scope: its `chain_ids` (also in batches of older versions) are not needed."""
    runtime = get_runtime()
    scope = _scope(batch["scope"])
    result = index_user(runtime, scope.user_scope, path="run", budget_s=runtime.settings.task_soft_time_limit_s / 2)
    if batch["more"]:
        PipelineRunRequester(runtime.redis, runtime.settings.pipeline_debounce_ttl_s).request(
            scope, flush=batch["flush"])
    return {"scope": batch["scope"], **result}


__all__ = ["index_events", "coalesce", "segment", "summarize", "embed", "pipeline_for"]  # pipeline_for: from run_requests
