"""The pipeline chain of one agent scope: coalesce → segment → summarize → embed (SPEC S0, S4).

Each step takes and returns a small JSON dict, so the chain needs no result backend and any step can
be re-run: chain ids derive from segments, merges are unions and events are re-checked for `pending`
before they are summarised, so a redelivered task (late acks) repeats no work. No step stores its
result (`ignore_result`): results would keep the user's scope and event ids in Redis past a purge.
Tests and operators watch state instead (events consolidated and indexed).

The last step is state-driven (`indexing.index_user`): it indexes whatever of the user is consolidated
and not indexed, not what the message names, so a lost step leaves no permanent gap (SPEC S7).
The purge fence: `coalesce` records the run's start (`snapshot_at`); summarize writes nothing for a user
purged since then.
"""
from __future__ import annotations

import logging
import time

from athena_core.observability import metrics
from athena_core.models.events import EventStatus, utc_now
from athena_core.models.scope import AgentScope
from athena_core.mtm.calibration import calibration_for
from athena_core.mtm.chain_formation import ChainFormer
from athena_core.mtm.segmenter import BreakDetector, is_user_message, plan_segments
from athena_core.usecases.purge_fence import user_write_lock_name
from athena_tasks.app import app
from athena_tasks.base import AthenaTask, PermanentTaskError
from athena_tasks.chains.indexing import fenced, index_user
from athena_tasks.chains.run_requests import PipelineRunRequester, clear_run_request, pipeline_for
from athena_core.wiring.redis_keys import segment_lock_name
from athena_core.wiring.scope_lock import scope_lock
from athena_tasks.worker_runtime import get_runtime

log = logging.getLogger(__name__)


def _scope(key: str) -> AgentScope:
    """A message's scope; ids that form none (a message from before the door checked them) fail for good."""
    try:
        return AgentScope.from_key(key)
    except ValueError as exc:  # pydantic's ValidationError included: no retry can fix the ids
        raise PermanentTaskError(f"the scope key {key!r} forms no scope: {type(exc).__name__}") from exc


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
        # One batched embedding of every user message; the gate's pairwise lookups then hit the cache.
        runtime.embedder.embed([e.content for e in [previous, *events] if e is not None and is_user_message(e)])
        calibration = calibration_for(settings, runtime.embedder.model_name)
        detector = BreakDetector(runtime.embedder, runtime.llm, high=calibration.break_high,
                                 low=calibration.break_low, tenant_id=scope.tenant_id)
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
    user's write lock, and none for a user purged since the run's snapshot (the purge fence)."""
    runtime = get_runtime()
    scope = _scope(batch["scope"])
    flags = _run_flags(batch)
    former = ChainFormer(runtime.documents, runtime.vectors, runtime.llm, runtime.embedder, runtime.settings)
    chain_ids: list[str] = []
    for segment_ids in batch["segments"]:
        with scope_lock(runtime.redis, user_write_lock_name(scope.user_scope), runtime.settings.lock_lease_s):
            if fenced(runtime, scope.user_scope, flags["snapshot_at"], "summarize"):
                break
            events = [e for e in runtime.documents.get_events(scope.user_scope, segment_ids)
                      if e.status == EventStatus.pending and e.agent_id == scope.agent_id]
            if not events:
                continue  # already summarised by an earlier delivery of this task
            outcome = former.form(scope, events, utc_now())
        if outcome.chain_id and outcome.chain_id not in chain_ids:
            chain_ids.append(outcome.chain_id)
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


__all__ = ["coalesce", "segment", "summarize", "embed", "pipeline_for"]  # pipeline_for: from run_requests
